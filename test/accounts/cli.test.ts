// The operator CLI end to end, as a script would drive it: output, --json, and one-line errors.
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createTestDatabase } from '../helpers/db.ts';
import { TEST_KEY_SECRET } from '../helpers/accounts.ts';
import { joinNegativeValues, parseCliArgs } from '../../src/accounts/cli-args.ts';

// about thirty CLI processes, each starting Node and tsx: minutes on a loaded machine, not the default two
t.setTimeout(600_000);
const db = await createTestDatabase();
t.teardown(db.drop);
const run = promisify(execFile);

async function admin(...args: string[]) {
  try {
    const { stdout, stderr } = await run('node', ['--import', 'tsx', 'src/accounts/cli.ts', ...args], {
      timeout: 180_000, // only a hang: the process is stopped and its checks fail
      env: { ...process.env, DATABASE_URL: db.ownerUrl, API_KEY_SECRET: TEST_KEY_SECRET },
    });
    return { code: 0, stdout: stdout.trim(), stderr: stderr.trim() };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout.trim(), stderr: e.stderr.trim() };
  }
}
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

t.test('client create, key create / list / revoke, suspend, set-plan, pack grant', async (t) => {
  const created = await admin(
    'client',
    'create',
    '--name',
    'Acme Lending',
    '--email',
    'ops@acme.test',
    '--plan',
    'pro',
  );
  t.equal(created.code, 0);
  t.match(created.stdout, UUID, 'prints the client id');
  const client = created.stdout;

  const key = await admin('key', 'create', '--client', client, '--mode', 'test');
  t.equal(key.code, 0);
  t.match(key.stdout, /^flprop_test_[0-9A-Za-z]{32}$/, 'prints the raw key once');

  const listed = await admin('key', 'list', '--client', client, '--json');
  const keys = JSON.parse(listed.stdout);
  t.equal(keys.length, 1);
  t.notOk(listed.stdout.includes(key.stdout), 'key list never prints the raw key');
  t.notOk(listed.stdout.includes(key.stdout.slice(-32)), 'nor its random part');
  t.match(keys[0], { mode: 'test', status: 'active', display: `flprop_test_…${key.stdout.slice(-4)}` });

  const revoked = await admin('key', 'revoke', '--key', keys[0].id, '--json');
  t.match(JSON.parse(revoked.stdout), { status: 'revoked' });

  t.match((await admin('client', 'suspend', '--client', client)).stdout, /suspended$/);
  t.match((await admin('client', 'activate', '--client', client)).stdout, /active$/);
  const plan = await admin(
    'client',
    'set-plan',
    '--client',
    client,
    '--plan',
    'growth',
    '--subscription-status',
    'past_due',
    '--json',
  );
  t.match(JSON.parse(plan.stdout), { plan: 'growth', subscription_status: 'past_due' });

  const pack = await admin(
    'pack',
    'grant',
    '--client',
    client,
    '--pack',
    'bulk',
    '--purchased-at',
    '2026-01-15T00:00:00Z',
    '--json',
  );
  t.match(JSON.parse(pack.stdout), { pack: 'bulk', credits: 25000, expires_at: '2027-01-15T00:00:00.000Z' });

  const backdated = await admin(
    'client',
    'create',
    '--name',
    'Trial',
    '--email',
    't@x.test',
    '--plan',
    'free',
    '--signup-at',
    '2026-01-01T00:00:00Z',
    '--json',
  );
  t.equal(JSON.parse(backdated.stdout).signup_at, '2026-01-01T00:00:00.000Z');
});

t.test('client set-limits, ledger adjust and client show', async (t) => {
  const client = (
    await admin('client', 'create', '--name', 'Big Bank', '--email', 'b@bank.test', '--plan', 'enterprise')
  ).stdout;
  const limits = await admin(
    'client',
    'set-limits',
    '--client',
    client,
    '--rpm',
    '5000',
    '--monthly-credits',
    '9000000',
  );
  t.equal(limits.code, 0);
  const [row] =
    await db.sql`SELECT custom_rpm, custom_monthly_credits::int AS credits FROM accounts.clients WHERE id = ${client}`;
  t.same(row, { custom_rpm: 5000, credits: 9000000 });

  const plus = await admin(
    'ledger',
    'adjust',
    '--client',
    client,
    '--credits',
    '250',
    '--reason',
    'goodwill: outage 2026-11-01',
    '--json',
  );
  t.match(JSON.parse(plus.stdout), { delta: 250, reason: 'goodwill: outage 2026-11-01' });
  const minus = await admin('ledger', 'adjust', '--client', client, '--credits=-50', '--reason', 'correction');
  t.equal(minus.code, 0, minus.stderr);
  const spaced = await admin('ledger', 'adjust', '--client', client, '--credits', '-25', '--reason', 'typed -25');
  t.equal(spaced.code, 0, `'--credits -25' is a value, as people type it: ${spaced.stderr}`);
  t.match(spaced.stdout, /-25 credits: typed -25$/);

  const shown = JSON.parse((await admin('client', 'show', '--client', client, '--json')).stdout);
  t.match(shown.client, { plan: 'enterprise', custom_rpm: 5000 });
  t.same(shown.balances.monthly, 9000000 - 75, 'the contract grant, less the debits (it is spent first)');
  t.same(shown.balances.credits, 250, 'one-time credits: +250');
  t.match(shown.usage, { events_count: 0, monthly_quota: 9000000, plan: 'enterprise' });
  t.same(
    shown.ledger.map((l: { delta: number }) => l.delta),
    [-25, -50, 250],
    'ledger newest first',
  );
  const text = await admin('client', 'show', '--client', client);
  t.match(text.stdout, /plan enterprise/);
  t.match(text.stdout, /goodwill/);

  t.equal(
    (await admin('client', 'set-limits', '--client', client, '--rpm', 'plan')).code,
    0,
    "'plan' restores the plan's RPM",
  );
  const [restored] = await db.sql`SELECT custom_rpm FROM accounts.clients WHERE id = ${client}`;
  t.equal(restored?.custom_rpm, null);
});

t.test('errors are one clear line and a non-zero exit', async (t) => {
  const cases: [string[], RegExp][] = [
    [['client', 'create', '--name', 'X', '--email', 'x@y.z', '--plan', 'platinum'], /unknown plan 'platinum'/],
    [['client', 'create', '--email', 'x@y.z', '--plan', 'pro'], /--name is required/],
    [['key', 'revoke', '--key', 'not-a-uuid'], /not a valid id/],
    [['key', 'revoke', '--key', '00000000-0000-0000-0000-000000000000'], /not found/],
    [['key', 'create', '--client', '00000000-0000-0000-0000-000000000000'], /not found/],
    [['pack', 'grant', '--client', '00000000-0000-0000-0000-000000000000', '--pack', 'huge'], /unknown pack/],
    [['client', 'create', '--name', 'X', '--email', 'x@y.z', '--plan', 'pro', '--signup-at', 'yesterday'], /ISO 8601/],
    [['frobnicate'], /unknown command/],
    [['client', 'set-limits', '--client', '00000000-0000-0000-0000-000000000000'], /--rpm and\/or --monthly-credits/],
    [['client', 'set-limits', '--client', '00000000-0000-0000-0000-000000000000', '--rpm', 'fast'], /whole number/],
    [
      ['ledger', 'adjust', '--client', '00000000-0000-0000-0000-000000000000', '--credits', '10'],
      /--reason is required/,
    ],
    [
      ['ledger', 'adjust', '--client', '00000000-0000-0000-0000-000000000000', '--credits', '0', '--reason', 'x'],
      /non-zero/,
    ],
    [
      ['ledger', 'adjust', '--client', '00000000-0000-0000-0000-000000000000', '--credits', '5', '--reason', 'x'],
      /not found/,
    ],
    [['client', 'show', '--client', '00000000-0000-0000-0000-000000000000'], /not found/],
    [['client', 'create', '--bogus'], /bogus/],
    [['client', 'set-limits', '--client', '00000000-0000-0000-0000-000000000000', '--rpm', '-5'], /whole number >= 0/],
  ];
  // a few at a time: each is a process of its own, mostly waiting for Node to start
  for (let i = 0; i < cases.length; i += 4) {
    const batch = cases.slice(i, i + 4);
    const answers = await Promise.all(batch.map(([args]) => admin(...args)));
    batch.forEach(([args, message], j) => {
      const res = answers[j]!;
      t.equal(res.code, 1, args.join(' '));
      t.match(res.stderr.split('\n')[0], /^admin: /);
      t.match(res.stderr, message);
    });
  }
});

t.test('a negative number after an option is its value; anything else is parsed as before', async (t) => {
  const options = { credits: { type: 'string' }, json: { type: 'boolean' } } as const;
  t.same(joinNegativeValues(['--credits', '-50'], options), ['--credits=-50']);
  t.same(joinNegativeValues(['--credits', '-2.5', '--json'], options), ['--credits=-2.5', '--json']);
  t.same(joinNegativeValues(['--credits', '--json'], options), ['--credits', '--json'], 'an option is not a value');
  t.same(joinNegativeValues(['--json', '-5'], options), ['--json', '-5'], 'a flag takes no value');
  t.same(joinNegativeValues(['--credits'], options), ['--credits']);
  t.same(parseCliArgs(['ledger', '--credits', '-7'], options).values, { credits: '-7' });
});
