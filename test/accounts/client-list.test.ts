// The operator CLI's `client list` and `client find`: what support uses to find a customer without psql.
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createTestDatabase } from '../helpers/db.ts';
import { TEST_KEY_SECRET } from '../helpers/accounts.ts';

// a handful of CLI processes, each starting Node and tsx: minutes on a loaded machine, not the default two
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

// A tag no fixture uses, so that the filters below see only these clients; sign-ups one day apart, oldest first.
const tag = `ops${process.pid}`;
const people = [
  { name: 'Old Free', email: `old.free@${tag}.test`, plan: 'free', status: 'active' },
  { name: 'Pro Lender', email: `Lender@${tag}.test`, plan: 'pro', status: 'active' },
  { name: 'Suspended Pro', email: `stopped@${tag}.test`, plan: 'pro', status: 'suspended' },
  { name: 'Under_score', email: `under_score@${tag}.test`, plan: 'growth', status: 'active' },
  { name: 'Lender Again', email: `lender@${tag}.test`, plan: 'developer', status: 'active' },
];
const ids: string[] = [];
for (const [i, p] of people.entries()) {
  const [row] = await db.sql<{ id: string }[]>`
    INSERT INTO accounts.clients (name, email, plan, status, signup_at)
    VALUES (${p.name}, ${p.email}, ${p.plan}, ${p.status}, now() - make_interval(days => ${people.length - i}))
    RETURNING id`;
  ids.push(row!.id);
}
const emailsOf = (rows: { email: string }[]) => rows.map((r) => r.email);

t.test('client list: newest first, narrowed by plan, status and email fragment', async (t) => {
  const all = await admin('client', 'list', '--email', tag, '--json');
  t.equal(all.code, 0, all.stderr);
  t.same(emailsOf(JSON.parse(all.stdout)), emailsOf([...people].reverse()), 'every tagged client, newest first');

  const pro = await admin('client', 'list', '--email', tag, '--plan', 'pro', '--status', 'active', '--json');
  t.same(emailsOf(JSON.parse(pro.stdout)), [`Lender@${tag}.test`], 'plan and status together');

  const fragment = await admin('client', 'list', '--email', `LENDER@${tag}`, '--json');
  t.same(
    emailsOf(JSON.parse(fragment.stdout)),
    [`lender@${tag}.test`, `Lender@${tag}.test`],
    'the fragment matches in any case',
  );

  const literal = await admin('client', 'list', '--email', `${tag}.t_st`, '--json');
  t.same(JSON.parse(literal.stdout), [], '_ in a fragment is a plain character, not any character');
  const percent = await admin('client', 'list', '--email', `${tag}%`, '--json');
  t.same(JSON.parse(percent.stdout), [], 'and so is %');
  const underscore = await admin('client', 'list', '--email', `r_score@${tag}`, '--json');
  t.same(emailsOf(JSON.parse(underscore.stdout)), [`under_score@${tag}.test`]);

  const table = await admin('client', 'list', '--email', tag, '--limit', '2');
  t.equal(table.code, 0, table.stderr);
  const lines = table.stdout.split('\n');
  t.match(lines[0], /^ID\s+NAME\s+EMAIL\s+PLAN\s+STATUS\s+SUBSCRIPTION\s+SIGNED UP$/, 'a header');
  t.match(
    lines[1],
    new RegExp(
      `^${ids[4]}\\s+Lender Again\\s+lender@${tag}\\.test\\s+developer\\s+active\\s+active\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d$`,
    ),
  );
  t.match(lines[2], new RegExp(`^${ids[3]}\\s+Under_score`));
  t.equal(lines[1]!.indexOf('lender@'), lines[2]!.indexOf('under_score@'), 'columns line up');
  t.match(lines[3], /more match/, 'says when the limit cut the list');

  const none = await admin('client', 'list', '--email', `nobody-${tag}`);
  t.equal(none.code, 0);
  t.equal(none.stdout, 'no client matches');
});

t.test('client find --email: the exact address in any case, or a one-line error', async (t) => {
  const found = await admin('client', 'find', '--email', `LENDER@${tag}.TEST`, '--json');
  t.equal(found.code, 0, found.stderr);
  t.same(
    JSON.parse(found.stdout).map((c: { id: string }) => c.id),
    [ids[4], ids[1]],
    'both clients with that address, newest first; not the other addresses that contain it',
  );
  const table = await admin('client', 'find', '--email', `stopped@${tag}.test`);
  t.match(table.stdout, new RegExp(`^ID .*\\n${ids[2]}\\s+Suspended Pro\\s+stopped@${tag}\\.test\\s+pro\\s+suspended`));

  const missing = await admin('client', 'find', '--email', `ghost@${tag}.test`);
  t.equal(missing.code, 1);
  t.equal(missing.stderr, `admin: no client with the email ghost@${tag}.test`);
  const noEmail = await admin('client', 'find');
  t.equal(noEmail.code, 1);
  t.equal(noEmail.stderr, 'admin: --email is required');
});

t.test('client list refuses an unknown plan, status or limit in one line', async (t) => {
  const plan = await admin('client', 'list', '--plan', 'gold');
  t.equal(plan.code, 1);
  t.match(plan.stderr, /^admin: unknown plan 'gold' \(one of free, developer, .*\)$/);
  const status = await admin('client', 'list', '--status', 'deleted');
  t.equal(status.code, 1);
  t.equal(status.stderr, "admin: unknown status 'deleted' (one of active, suspended)");
  const limit = await admin('client', 'list', '--limit', '0');
  t.equal(limit.code, 1);
  t.equal(limit.stderr, 'admin: --limit must be at least 1');
});
