// Credits shown must add up: an operator's negative adjustment is debited in spending order (monthly grant, packs
// oldest-expiring first, one-time credits), counting requests not flushed yet, and never leaves a negative bucket
// beside a positive one; the account site, `admin client show` and /v1/account/usage show the same figures.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import { signUp, textOf } from './helpers.ts';

const ctx = await buildTestApp(t);
const { app, db } = ctx;
const sql = db.sql;

const left = async (clientId: string) =>
  sql<{ bucket: string; credits: number }[]>`
    SELECT bucket, credits::int FROM meter.credits_left(${clientId}::uuid) ORDER BY spend_order`;

/** A signed-in site account moved to `plan`, with a live key. */
async function account(plan: string) {
  const s = await signUp(ctx);
  const svc = (await ctx.newClient('growth')).svc;
  await svc.setPlan(s.clientId, plan);
  const created = await s.agent.post('/account/keys', { mode: 'live' }, { from: '/account/keys' });
  const key = /data-raw-key>([^<]+)</.exec(created.body)![1]!;
  const call = (url = '/v1/counties') =>
    app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
  return { ...s, svc, key, call };
}

t.test(
  'a negative adjustment takes the monthly grant, then packs oldest-expiring first, then one-time credits',
  async (t) => {
    const a = await account('developer');
    const older = await a.svc.grantPack(a.clientId, 'starter', new Date(Date.now() - 200 * 86_400_000));
    await a.svc.grantPack(a.clientId, 'starter');
    await a.svc.adjustCredits(a.clientId, 50, 'goodwill');
    t.same(
      (await left(a.clientId)).map((b) => [b.bucket, b.credits]),
      [
        ['monthly', 10000],
        ['pack', 1000],
        ['pack', 1000],
        ['credits', 500 + 50],
      ],
      'the grant, two packs (older first), one-time: the trial grant made at sign-up and +50',
    );
    for (let i = 0; i < 3; i++) t.equal((await a.call()).statusCode, 200);

    // 3 requests are still in Redis: the debit counts them, so the grant is emptied, not overdrawn
    const adj = await a.svc.adjustCredits(a.clientId, -10_500, 'chargeback');
    t.same(
      adj.parts.map((p) => [p.bucket, p.pack_id, p.delta]),
      [
        ['monthly', null, -9997],
        ['pack', older.id, -503],
      ],
      'one ledger row per bucket touched, in spending order',
    );
    t.equal(adj.delta, -10_500);
    await app.flushUsage();
    const after = await left(a.clientId);
    t.same(
      after.map((b) => [b.bucket, b.credits]),
      [
        ['monthly', 0],
        ['pack', 497],
        ['pack', 1000],
        ['credits', 550],
      ],
      'after the flush: no negative bucket, the older pack debited first',
    );
    t.equal((await a.call()).statusCode, 200, 'the next request is admitted');
    await app.flushUsage();
    const [spent] = await sql<{ pack_id: string }[]>`
    SELECT pack_id FROM meter.ledger WHERE client_id = ${a.clientId} AND reason = 'usage' AND bucket = 'pack'`;
    t.equal(spent?.pack_id, older.id, 'and charged to the older pack, as the debit left it');

    await t.rejects(
      a.svc.adjustCredits(a.clientId, -3000, 'too much'),
      /the client has 2046 credits left; a debit can take at most that many/,
      'more than the client has is refused',
    );
    const all = await a.svc.adjustCredits(a.clientId, -2046, 'close the account');
    t.same(
      all.parts.map((p) => [p.bucket, p.delta]),
      [
        ['pack', -496],
        ['pack', -1000],
        ['credits', -550],
      ],
    );
    t.same(
      (await left(a.clientId)).map((b) => b.credits),
      [0, 0, 0, 0],
      'everything at zero, nothing below',
    );
    const ledger = await sql<{ bucket: string; delta: number }[]>`
    SELECT bucket, delta::int FROM meter.ledger WHERE client_id = ${a.clientId} AND reason = 'too much'`;
    t.same(ledger, [], 'a refused debit records nothing');
  },
);

t.test('a debit never counts a usage batch twice: pending in Redis and recorded in Postgres', async (t) => {
  const a = await account('developer');
  const ledgerRows = async () =>
    (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM meter.ledger WHERE client_id = ${a.clientId}`)[0]!.n;
  for (let i = 0; i < 2; i++) t.equal((await a.call()).statusCode, 200);
  await app.flushUsage();
  const [recorded] = await sql<{ batch_id: string }[]>`
    SELECT batch_id FROM meter.usage_batches ORDER BY flushed_at DESC LIMIT 1`;
  const before = await ledgerRows();
  await t.rejects(
    sql`SELECT * FROM meter.adjust_credits(${a.clientId}::uuid, -1, 'x', '{}', ${[recorded!.batch_id]}::text[])`,
    { code: '40001' },
    'SQL: a batch listed as pending that Postgres holds is refused, to be read again',
  );
  t.equal(await ledgerRows(), before, 'and nothing is written');

  // A batch recorded in Postgres whose acknowledgement has not reached Redis yet: its counts are still pending there.
  // The requests go through a second API process whose batches stay open 5 s, so that no flush takes this one.
  const slow = await buildTestApp(t, { USAGE_BATCH_MS: '5000', REDIS_KEY_PREFIX: ctx.prefix }, { db });
  const call = () =>
    slow.app.inject({ method: 'GET', url: '/v1/counties', headers: { authorization: `Bearer ${a.key}` } });
  for (let i = 0; i < 2; i++) t.equal((await call()).statusCode, 200);
  const pending = async () => Object.values(await app.redis.hgetall(`pend:${a.clientId}`)).some((n) => Number(n) > 0);
  // the settlements follow the answers, usually within milliseconds; the minute only bounds a hang
  for (const until = Date.now() + 60_000; !(await pending()) && Date.now() < until;)
    await new Promise((resolve) => setTimeout(resolve, 20));
  t.ok(await pending(), 'requests pending in Redis');
  const listed = await app.redis.lrange('usage:batches', 0, -1);
  await sql`INSERT INTO meter.usage_batches (batch_id) SELECT unnest(${listed}::text[])`;
  await t.rejects(
    a.svc.adjustCredits(a.clientId, -1, 'while a flush is under way'),
    /usage was recorded while the balance was read; try again/,
    'read again, and refused while it lasts rather than counted twice',
  );
  await t.rejects(
    a.svc.showClient(a.clientId),
    /usage was recorded while the balance was read; try again/,
    '`client show` too',
  );
  t.equal(await ledgerRows(), before, 'nothing written');
  await sql`DELETE FROM meter.usage_batches WHERE batch_id = ANY (${listed}::text[])`;
  const adj = await a.svc.adjustCredits(a.clientId, -1, 'once it is over');
  t.equal(adj.delta, -1, 'the debit goes through once Redis and Postgres agree');
});

t.test(
  'on the free trial a negative adjustment takes the trial credits; a positive one adds one-time credits',
  async (t) => {
    const a = await account('free');
    t.equal((await a.call()).statusCode, 200);
    await a.svc.adjustCredits(a.clientId, -100, 'abuse');
    t.same(
      (await left(a.clientId)).map((b) => [b.bucket, b.credits]),
      [
        ['monthly', 0],
        ['credits', 400],
      ],
      'the trial has no monthly grant: 500 - 100 (and the pending request, once flushed)',
    );
    await app.flushUsage();
    t.equal((await left(a.clientId))[1]!.credits, 399);
    await a.svc.adjustCredits(a.clientId, 25, 'sorry');
    t.equal((await left(a.clientId))[1]!.credits, 424);
    await t.rejects(a.svc.adjustCredits(a.clientId, -425, 'x'), /has 424 credits left/);
  },
);

t.test('the site, `client show` and /v1/account/usage agree, before and after the flush', async (t) => {
  const a = await account('pro');
  await a.svc.grantPack(a.clientId, 'bulk');
  await a.svc.adjustCredits(a.clientId, -49_990, 'test debit');
  for (let i = 0; i < 12; i++) t.equal((await a.call()).statusCode, 200, `request ${i + 1}`);
  // 12 requests: 10 from the grant's last 10 credits, 2 from the pack
  for (const when of ['pending', 'flushed']) {
    if (when === 'flushed') await app.flushUsage();
    // the usage read first: it sends this process's settlements to Redis, where `client show` (another process in
    // production) reads what is pending
    const usage = (await a.call('/v1/account/usage')).json().data;
    const shown = await a.svc.showClient(a.clientId);
    const page = textOf((await a.agent.get('/account')).body);
    t.equal(shown.balances!.monthly, 0, `${when}: client show, monthly`);
    t.equal(shown.balances!.packs[0].remaining, 24_998, `${when}: client show, the pack`);
    t.equal(shown.balances!.credits, 500, `${when}: client show, one-time (the sign-up trial grant)`);
    t.equal(shown.usage!.events_count, usage.events_count, `${when}: client show and /v1/account/usage`);
    t.equal(usage.events_count, 12);
    t.match(page, /Monthly grant, \w+ \d{4} 0 of 50,000/, `${when}: the site, monthly`);
    t.match(page, /Bulk pack 24,998 expires/, `${when}: the site, the pack`);
    t.match(page, /One-time credits 500 /, `${when}: the site, one-time`);
    t.match(page, /Credits left: 25,498/);
    t.match(page, `This month ${usage.events_count} of ${usage.monthly_quota.toLocaleString('en-US')}`);
  }
});

t.test('overage so far this month is shown in dollars, as it is billed per day', async (t) => {
  const a = await account('developer');
  await a.svc.adjustCredits(a.clientId, -10_000, 'use up the grant');
  await a.svc.adjustCredits(a.clientId, -500, 'and the trial credits');
  for (let i = 0; i < 3; i++) t.equal((await a.call()).statusCode, 200);
  const page = () => a.agent.get('/account').then((r) => textOf(r.body));
  t.match(await page(), /Overage so far \$0\.05 \(3 credits past the grant/, 'pending: 3 credits, rounded up to $0.05');
  await app.flushUsage();
  t.match(await page(), /Overage so far \$0\.05 \(3 credits past the grant/, 'flushed: the same');
  const [line] = await sql<{ amount_cents: number }[]>`
    SELECT amount_cents FROM meter.overage_invoice_lines WHERE client_id = ${a.clientId}`;
  t.equal(line!.amount_cents, 5, 'as the invoice line says');
});
