// Metering and the trial / overage rules, against real Redis and Postgres.
import t from 'tap';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildTestApp } from '../helpers/app.ts';
import { calendar, periodOf, secondsToNextPeriod } from '../../src/metering/periods.ts';
import { TURN } from '../../src/metering/scripts.ts';

const only = <T>(rows: readonly T[]): T => {
  if (rows.length !== 1) throw new Error(`expected one row, got ${rows.length}`);
  return rows[0]!;
};

const ctx = await buildTestApp(t);
const { app, db, newClient, invalidate } = ctx;
const sql = db.sql;
const OK_URL = '/v1/counties';
const NOT_FOUND_URL = '/v1/counties/atlantis';
const call = (headers: Record<string, string>, url = OK_URL) => app.inject({ method: 'GET', url, headers });
const statuses = async (headers: Record<string, string>, n: number, url = OK_URL) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call(headers, url)).statusCode);
  return out;
};
const usage = async (headers: Record<string, string>) =>
  (await app.inject({ method: 'GET', url: '/v1/account/usage', headers })).json().data;
/** The period (YYYY-MM) a usage answer counted: the month before its reset_date. */
const periodCounted = (u: { reset_date: string }) => periodOf(Date.parse(u.reset_date) - 1);
/** The client's charged requests recorded in Postgres (flush first). */
const chargedRequests = async (clientId: string) =>
  only(
    await sql<{ n: number }[]>`
      SELECT coalesce(sum(requests), 0)::int AS n FROM meter.usage_daily WHERE client_id = ${clientId}`,
  ).n;
/** Leaves the client `left` one-time credits, through the ledger, as an operator adjustment would. */
async function setCredits(clientId: string, left: number) {
  await sql`INSERT INTO meter.ledger (client_id, bucket, delta, reason)
            SELECT ${clientId}, 'credits', ${left} - coalesce(sum(delta), 0), 'test_adjustment'
              FROM meter.ledger WHERE client_id = ${clientId} AND bucket = 'credits'`;
  await invalidate(clientId);
}
async function setLimits(clientId: string, credits: number | null, rpm: number | null = null) {
  await sql`UPDATE accounts.clients SET custom_monthly_credits = ${credits}, custom_rpm = ${rpm} WHERE id = ${clientId}`;
  await invalidate(clientId);
}

t.test('headers on 200: limit, remaining, reset (Unix seconds) and the RateLimit structured field', async (t) => {
  const c = await newClient('growth');
  const first = await call(c.headers);
  const second = await call(c.headers);
  t.equal(first.headers['x-ratelimit-limit'], '300');
  t.equal(first.headers['x-ratelimit-remaining'], '299');
  t.equal(second.headers['x-ratelimit-remaining'], '298');
  const reset = Number(first.headers['x-ratelimit-reset']);
  const now = Date.now() / 1000;
  t.ok(reset > now && reset <= now + 61, 'reset is a Unix time within the next minute');
  t.match(first.headers.ratelimit, /^default;r=299;t=([1-9]|[1-5][0-9]|60)$/);
  t.notOk(first.headers['retry-after'], 'no Retry-After on 200');
});

t.test('per-minute limit: the request past the plan RPM gets 429 with Retry-After; the window slides', async (t) => {
  const c = await newClient('developer');
  await setLimits(c.client.id, null, 3);
  t.same(await statuses(c.headers, 3), [200, 200, 200]);
  const limited = await call(c.headers);
  t.equal(limited.statusCode, 429);
  t.equal(limited.json().error.code, 'rate_limited');
  const retry = Number(limited.headers['retry-after']);
  t.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
  t.match(limited.json().error.message, new RegExp(`retry in ${retry} seconds`));
  t.equal(limited.headers['x-ratelimit-remaining'], '0', 'headers on 429 too');
  t.equal(limited.headers['x-ratelimit-limit'], '3');
  t.match(limited.headers.ratelimit, /^default;r=0;t=\d+$/);
  // Age the window's entries to just past 60 s: the edge of the sliding window.
  const win = `win:${c.client.id}`;
  const members = await app.redis.zrange(win, '0', '-1');
  for (const m of members) await app.redis.zadd(win, String(Date.now() - 60001), m);
  t.equal((await call(c.headers)).statusCode, 200, 'allowed again once the oldest entries leave the window');
});

t.test(
  'admission runs alongside the handler; a refusal replaces its answer, then the client is admitted first',
  async (t) => {
    const c = await newClient('developer');
    await setLimits(c.client.id, null, 2);
    const before = { ...app.meterStats };
    const counted = () => ({
      speculative: app.meterStats.speculative - before.speculative,
      wasted: app.meterStats.wasted - before.wasted,
    });
    t.same(await statuses(c.headers, 2), [200, 200]);
    t.same(counted(), { speculative: 2, wasted: 0 }, 'admitted requests overlapped their handler');
    // the handler answers 404 here; the refusal replaces it, with the same envelope and headers as any refusal
    const replaced = await call(c.headers, NOT_FOUND_URL);
    t.same(counted(), { speculative: 3, wasted: 1 }, 'the third ran alongside and was thrown away');
    const refusedFirst = await call(c.headers, NOT_FOUND_URL);
    t.same(counted(), { speculative: 3, wasted: 1 }, 'after a refusal the client is admitted before any work');
    for (const [name, res] of [
      ['replaced', replaced],
      ['refused first', refusedFirst],
    ] as const) {
      t.equal(res.statusCode, 429, name);
      t.match(res.headers['content-type'], /^application\/json/, `${name}: JSON`);
      t.equal(res.json().error.code, 'rate_limited', name);
      t.match(res.json().error.message, /Rate limit of 2 requests per minute exceeded; retry in \d+ seconds/, name);
      t.equal(res.json().error.request_id, res.headers['x-request-id'], `${name}: request id`);
      t.ok(Number(res.headers['retry-after']) >= 1, `${name}: Retry-After`);
      t.equal(res.headers['x-ratelimit-remaining'], '0', `${name}: remaining`);
    }
    await app.flushUsage();
    const n = await chargedRequests(c.client.id);
    t.equal(n, 2, 'only the two admitted 2xx answers are charged');
  },
);

t.test(
  'usage is recorded as counts per batch: a batch flushed again (its acknowledgement lost) counts once',
  async (t) => {
    const c = await newClient('pro');
    const { period, day } = calendar(Date.now()); // of one instant: nothing below reads the clock
    const batch = `test:usage:batch:${Date.now() * 1000}-${c.client.id}`; // named as the metering names batches
    const rows = [
      {
        batch_id: batch,
        client_id: c.client.id,
        key_id: c.keyId,
        mode: 'live',
        surface: 'rest',
        bucket: 'monthly',
        pack_id: null,
        period,
        day,
        n: 3,
      },
      {
        batch_id: batch,
        client_id: c.client.id,
        key_id: c.keyId,
        mode: 'live',
        surface: 'mcp',
        bucket: 'monthly',
        pack_id: null,
        period,
        day,
        n: 2,
      },
    ];
    const flush = async () =>
      only(await sql<{ n: number }[]>`SELECT meter.flush_usage(${sql.json(rows as never)}) AS n`).n;
    t.equal(await flush(), 5, 'recorded');
    t.equal(await flush(), 0, 'the same batch again records nothing');
    const daily =
      await sql`SELECT surface, requests::int FROM meter.usage_daily WHERE client_id = ${c.client.id} ORDER BY 1`;
    t.same(
      daily.map((r) => [r.surface, r.requests]),
      [
        ['mcp', 2],
        ['rest', 3],
      ],
    );
    const { delta } = only(
      await sql<{ delta: number }[]>`SELECT sum(delta)::int AS delta FROM meter.ledger
                                    WHERE client_id = ${c.client.id} AND reason = 'usage'`,
    );
    t.equal(delta, -5, 'the ledger debits the grant once');
  },
);

t.test('only 2xx answers are charged; usage counts them exactly, whichever key of the client calls', async (t) => {
  const c = await newClient('pro');
  const { key: second } = await c.svc.createKey(c.client.id, 'live');
  t.same(await statuses(c.headers, 3), [200, 200, 200]);
  t.same(await statuses({ authorization: `Bearer ${second}` }, 2), [200, 200]);
  t.same(await statuses(c.headers, 2, NOT_FOUND_URL), [404, 404], 'not charged');
  const before = await usage(c.headers);
  t.equal(before.events_count, 5, 'pending requests are counted before they are flushed');
  await app.flushUsage();
  const readAt = Date.now();
  const after = await usage({ authorization: `Bearer ${second}` });
  t.equal(after.events_count, 5, 'the usage endpoint itself is free');
  t.match(after, { monthly_quota: 50000, plan: 'pro', percent_used: 0.01 });
  t.equal(after.percent_used, Math.round((5 / 50000) * 100 * 100) / 100);
  // the first of next month, as it was when the read was sent or when it was answered
  const nextMonth = (ms: number) => {
    const d = new Date(ms);
    return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).toISOString().replace('.000', '');
  };
  t.ok([nextMonth(readAt), nextMonth(Date.now())].includes(after.reset_date), `reset_date ${after.reset_date}`);
  const n = await chargedRequests(c.client.id);
  t.equal(n, 5, 'every charged request counted');
  const { delta } = only(
    await sql<
      { delta: number }[]
    >`SELECT sum(delta)::int AS delta FROM meter.ledger WHERE client_id = ${c.client.id} AND reason = 'usage'`,
  );
  t.equal(delta, -5, 'the ledger agrees');
});

t.test('a flush never lands inside a usage read: Redis pending plus Postgres counts each event once', async (t) => {
  const c = await newClient('pro');
  const auth = { clientId: c.client.id, mode: 'live' } as Parameters<typeof app.withPendingUsage>[0];
  const inPostgres = () => chargedRequests(c.client.id);
  // The periodic flush (every second) may move some events before the read starts; the read must then find them
  // in Postgres instead. Repeat until the read starts with events still pending, so that the race is exercised.
  let total = 0;
  let seen = { pending: 0, before: 0, after: 0 };
  for (let attempt = 0; attempt < 5 && seen.pending === 0; attempt++) {
    t.same(await statuses(c.headers, 4), [200, 200, 200, 200]);
    total += 4;
    let flushed: Promise<number> | null = null;
    seen = await app.withPendingUsage(auth, periodOf(Date.now()), async (pending) => {
      const before = await inPostgres();
      flushed = app.flushUsage(); // starts now; must not move this client's events until the read is done
      await sleep(300);
      return { pending, before, after: await inPostgres() };
    });
    await flushed;
  }
  t.ok(seen.pending > 0, 'the read started with events still pending');
  t.equal(seen.pending + seen.before, total, 'the read saw every event once');
  t.equal(seen.after, seen.before, 'no flush landed inside the read');
  t.equal(await inPostgres(), total, 'the flush ran after the read');
  t.equal((await usage(c.headers)).events_count, total);
});

t.test('free trial: 500 credits at signup; at zero, 402 with an upgrade hint', async (t) => {
  const c = await newClient('free');
  const { credits } = only(
    await sql<
      { credits: number }[]
    >`SELECT sum(delta)::int AS credits FROM meter.ledger WHERE client_id = ${c.client.id}`,
  );
  t.equal(credits, 500);
  await setCredits(c.client.id, 2);
  t.same(await statuses(c.headers, 3), [200, 200, 402]);
  const res = await call(c.headers);
  t.equal(res.statusCode, 402);
  t.equal(res.json().error.code, 'payment_required');
  t.match(res.json().error.message, /[Uu]pgrade/);
  t.ok(res.headers['x-ratelimit-limit'], 'rate-limit headers on 402 too');
  t.equal(res.headers['x-ratelimit-limit'], '30', 'the trial RPM');
});

t.test('a refund reaches the balance before the next admission: at 1 credit, a 404 leaves it for a 200', async (t) => {
  const c = await newClient('free');
  await setCredits(c.client.id, 1);
  // each answer's settlement waits for the next admission to ride with; that admission must see it first
  t.same(await statuses(c.headers, 2, NOT_FOUND_URL), [404, 404], 'reserved, then refunded');
  t.same(await statuses(c.headers, 2), [200, 402], 'the credit the 404s held is spent once');
});

t.test('free trial: the first call after day 7 caps the balance once at min(remaining, 100)', async (t) => {
  const eightDaysAgo = new Date(Date.now() - 8 * 86400_000);
  const c = await newClient('free', { signupAt: eightDaysAgo });
  t.equal((await call(c.headers)).statusCode, 200);
  t.equal((await call(c.headers)).statusCode, 200);
  const caps =
    await sql`SELECT delta::int FROM meter.ledger WHERE client_id = ${c.client.id} AND reason = 'free_trial_expired_cap'`;
  t.same(
    caps.map((r) => r.delta),
    [-400],
    'recorded once, 500 -> 100',
  );
  const u = await usage(c.headers);
  t.equal(u.monthly_quota, 100);
  await app.flushUsage();
  const { left } = only(
    await sql<
      { left: number }[]
    >`SELECT sum(delta)::int AS left FROM meter.ledger WHERE client_id = ${c.client.id} AND bucket = 'credits'`,
  );
  t.equal(left, 98, '100 after the cap, less the two charged calls (usage reads are free)');

  const low = await newClient('free', { signupAt: eightDaysAgo });
  await setCredits(low.client.id, 40);
  t.equal((await call(low.headers)).statusCode, 200);
  const lowCaps =
    await sql`SELECT delta::int FROM meter.ledger WHERE client_id = ${low.client.id} AND reason = 'free_trial_expired_cap'`;
  t.same(
    lowCaps.map((r) => r.delta),
    [0],
    'below 100 the cap changes nothing but is still recorded once',
  );

  const young = await newClient('free', { signupAt: new Date(Date.now() - 6 * 86400_000) });
  await call(young.headers);
  const none =
    await sql`SELECT 1 FROM meter.ledger WHERE client_id = ${young.client.id} AND reason = 'free_trial_expired_cap'`;
  t.equal(none.length, 0, 'not within the first 7 days');
});

t.test('upgrading a trial removes the gate: the monthly grant applies', async (t) => {
  const c = await newClient('free');
  await setCredits(c.client.id, 0);
  t.equal((await call(c.headers)).statusCode, 402);
  await c.svc.setPlan(c.client.id, 'developer');
  t.equal((await call(c.headers)).statusCode, 200);
  t.equal((await usage(c.headers)).monthly_quota, 10000);
});

t.test('paid plans keep serving past the grant and accrue overage, billed per day rounded up to $0.05', async (t) => {
  const c = await newClient('developer');
  await setLimits(c.client.id, 2);
  t.same(await statuses(c.headers, 5), [200, 200, 200, 200, 200]);
  await app.flushUsage();
  const line = only(
    await sql`SELECT credits::int, amount_cents FROM meter.overage_invoice_lines WHERE client_id = ${c.client.id}`,
  );
  t.same(line, { credits: 3, amount_cents: 5 }, 'three credits over cost $0.05');
  const one = await newClient('lead_feed');
  await setLimits(one.client.id, 0);
  t.equal((await call(one.headers)).statusCode, 200);
  await app.flushUsage();
  const oneLine = only(
    await sql`SELECT credits::int, amount_cents FROM meter.overage_invoice_lines WHERE client_id = ${one.client.id}`,
  );
  t.same(oneLine, { credits: 1, amount_cents: 5 }, 'one request over costs $0.05');
  const many = await newClient('growth');
  await setLimits(many.client.id, 0);
  t.same(new Set(await statuses(many.headers, 11)), new Set([200]));
  await app.flushUsage();
  const manyLine = only(
    await sql`SELECT credits::int, amount_cents FROM meter.overage_invoice_lines WHERE client_id = ${many.client.id}`,
  );
  t.same(manyLine, { credits: 11, amount_cents: 10 }, '11 credits round up to $0.10');
});

t.test('past_due subscriptions and MCP Starter get no overage: 429 with Retry-After until next month', async (t) => {
  const c = await newClient('developer');
  await c.svc.setPlan(c.client.id, 'developer', 'past_due');
  await setLimits(c.client.id, 1);
  t.equal((await call(c.headers)).statusCode, 200);
  const sent = secondsToNextPeriod(Date.now());
  const res = await call(c.headers);
  const answered = secondsToNextPeriod(Date.now());
  t.equal(res.statusCode, 429);
  const retry = Number(res.headers['retry-after']);
  // between the seconds left when it was sent and when it was answered (a second either way for rounding)
  t.ok(retry >= answered - 1 && retry <= sent + 1, `seconds until the next month (${retry})`);
  t.match(res.json().error.message, /retry in \d+ seconds/);
});

t.test('packs are spent after the monthly grant, oldest-expiring first; expired packs are not', async (t) => {
  const c = await newClient('developer');
  await c.svc.setPlan(c.client.id, 'developer', 'past_due'); // no overage, so exhaustion shows
  await setLimits(c.client.id, 1);
  const expired = await c.svc.grantPack(c.client.id, 'starter', new Date(Date.now() - 13 * 30 * 86400_000));
  const older = await c.svc.grantPack(c.client.id, 'starter', new Date(Date.now() - 100 * 86400_000));
  const newer = await c.svc.grantPack(c.client.id, 'starter', new Date(Date.now() - 10 * 86400_000));
  await sql`INSERT INTO meter.ledger (client_id, bucket, pack_id, delta, reason) VALUES
            (${c.client.id}, 'pack', ${older.id}, -999, 'test_adjustment'), (${c.client.id}, 'pack', ${newer.id}, -998, 'test_adjustment')`;
  await invalidate(c.client.id);
  t.same(await statuses(c.headers, 5), [200, 200, 200, 200, 429], 'grant 1, older pack 1, newer pack 2, then nothing');
  await app.flushUsage();
  const rows = await sql`SELECT l.bucket, l.pack_id, -sum(l.delta)::int AS n FROM meter.ledger l
               WHERE l.client_id = ${c.client.id} AND l.reason = 'usage' GROUP BY 1, 2 ORDER BY 1, 3`;
  t.same(
    rows.map((r) => [r.bucket, r.pack_id, r.n]),
    [
      ['monthly', null, 1],
      ['pack', older.id, 1],
      ['pack', newer.id, 2],
    ],
  );
  t.notOk(
    rows.some((r) => r.pack_id === expired.id),
    'the expired pack was never touched',
  );
});

t.test('test keys have their own reduced quota of 100 a month and never accrue overage', async (t) => {
  const c = await newClient('growth', { mode: 'test' });
  t.equal((await call(c.headers)).statusCode, 200);
  await app.flushUsage();
  await sql`UPDATE meter.usage_daily SET requests = 100 WHERE client_id = ${c.client.id} AND mode = 'test'`;
  await app.redis.del(`st:${c.client.id}:test`);
  const res = await call(c.headers);
  t.equal(res.statusCode, 429, 'exhausted after 100');
  t.match(res.json().error.message, /test keys/);
  const u = await usage(c.headers);
  t.match(u, { monthly_quota: 100, events_count: 100, percent_used: 100 });
});

t.test(
  'concurrency: N parallel requests on a balance of B from two API processes succeed min(N, B) times',
  async (t) => {
    const other = await buildTestApp(t, { REDIS_KEY_PREFIX: ctx.prefix }, { db });
    const c = await newClient('free');
    await setCredits(c.client.id, 20);
    await setLimits(c.client.id, null, 1000);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        (i % 2 === 0 ? app : other.app).inject({ method: 'GET', url: OK_URL, headers: c.headers }),
      ),
    );
    const ok = results.filter((r) => r.statusCode === 200).length;
    t.equal(ok, 20, 'exactly B succeed');
    t.equal(results.filter((r) => r.statusCode === 402).length, 30);
    await Promise.all([app.flushUsage(), other.app.flushUsage()]);
    await app.flushUsage();
    const { left } = only(
      await sql<
        { left: number }[]
      >`SELECT sum(delta)::int AS left FROM meter.ledger WHERE client_id = ${c.client.id} AND bucket = 'credits'`,
    );
    t.equal(left, 0, 'the ledger agrees: nothing left, nothing negative');
    const n = await chargedRequests(c.client.id);
    t.equal(n, 20);
  },
);

t.test('balances are rebuilt from Postgres when Redis loses its data', async (t) => {
  const c = await newClient('free');
  await setCredits(c.client.id, 3);
  t.same(await statuses(c.headers, 2), [200, 200]);
  await app.flushUsage();
  await app.redis.del(`st:${c.client.id}`, `pend:${c.client.id}`);
  t.same(await statuses(c.headers, 2), [200, 402], 'one credit was left, and only one');
});

t.test('a reservation orphaned by a crashed process is refunded by the reaper, not charged', async (t) => {
  await app.reapOrphans(); // the flush's own reap, once a minute, now waits a minute: the reap below finds the orphan
  const c = await newClient('free');
  await setCredits(c.client.id, 2);
  t.equal((await call(c.headers)).statusCode, 200, 'loads the balance: one credit left');
  // A process admitted a request six minutes ago and died before settling it, in the period the balance was loaded for.
  const [ver, period] = (await app.redis.hmget(`st:${c.client.id}`, 'ver', 'period')) as [string, string];
  const admission = [c.client.id, c.client.id, Date.now() - 360_000, 30, 2, ver, period, 'req_crashed', 'm', '0'];
  // no settlements, one admission
  const [ok, field] = (await app.redis.eval(TURN, 0, ctx.prefix, period, 20_000, 0, admission.join('|'))) as [
    number,
    string,
  ];
  t.same([ok, field], [1, 'c'], 'the last credit is reserved');
  await app.redis.pexpire('res:req_crashed', 3_600_000 - 360_000); // its hour-long TTL has run for six minutes

  t.equal((await call(c.headers)).statusCode, 402, 'nothing left while it is reserved');
  t.equal(await app.reapOrphans(), 1, 'the six-minute-old reservation is reaped');
  t.equal((await call(c.headers)).statusCode, 200, 'refunded');
  await app.flushUsage();
  const n = await chargedRequests(c.client.id);
  t.equal(n, 2, 'the orphan was never charged');
  const fresh = await newClient('developer');
  await call(fresh.headers);
  const settling = app.flushUsage();
  await settling;
  t.equal(await app.reapOrphans(), 0, 'settled requests leave nothing to reap');
  await app.flushUsage();
  t.ok((await app.redis.llen('usage:batches')) <= 1, 'acknowledged batches leave Redis');
});

t.test('a batch whose flush died is recorded by another flush, once, even if recorded before', async (t) => {
  const c = await newClient('pro');
  const { period, day } = calendar(Date.now());
  // opened a minute ago (Redis's clock, µs): closed long since
  const name = `usage:batch:${(Date.now() - 60_000) * 1000}-${c.client.id}`;
  /** What settling 4 requests leaves in Redis when every flush that took them died before acknowledging them. */
  const leaveBatch = async () => {
    await app.redis.hset(name, `${c.client.id}|${c.keyId}|live|rest|${period}|${day}|m:${period}`, 4);
    await app.redis.hincrby(`pend:${c.client.id}`, `m:${period}`, 4);
    await app.redis.hincrby(`pend:${c.client.id}`, `n:${period}`, 4);
    await app.redis.lpush('usage:batches', `${ctx.prefix}${name}`);
  };
  const pending = async () => Number((await app.redis.hget(`pend:${c.client.id}`, `n:${period}`)) ?? 0);

  /** What a usage read counts of the batch: its 4 requests, or none if the read counted a month begun since. */
  const counted = async () => {
    const u = await usage(c.headers);
    return { requests: u.events_count, of: periodCounted(u) === period ? 4 : 0 };
  };

  await leaveBatch();
  let read = await counted();
  t.equal(read.requests, read.of, 'counted while it waits in Redis');
  await app.flushUsage();
  t.equal(await chargedRequests(c.client.id), 4, 'recorded in Postgres');
  t.equal(await pending(), 0, 'no longer pending in Redis');
  t.equal(await app.redis.exists(name), 0, 'dropped once recorded');

  await leaveBatch(); // recorded, but the acknowledgement was lost: it is still in Redis
  await app.flushUsage();
  t.equal(await chargedRequests(c.client.id), 4, 'the same batch again records nothing');
  t.equal(await pending(), 0, 'and is acknowledged');
  read = await counted();
  t.equal(read.requests, read.of, 'counted once');
});

t.test('a batch of a client this database does not know is refused and does not block the others', async (t) => {
  const c = await newClient('pro');
  const { period, day } = calendar(Date.now()); // of one instant: nothing below reads the clock
  // left in a shared Redis by a process serving another database, oldest of all
  const stranger = '00000000-0000-4000-8000-000000000001';
  const foreign = `usage:batch:${(Date.now() - 120_000) * 1000}-foreign`;
  await app.redis.hset(foreign, `${stranger}|${stranger}|live|rest|${period}|${day}|m:${period}`, 3);
  await app.redis.lpush('usage:batches', `${ctx.prefix}${foreign}`);
  t.same(await statuses(c.headers, 2), [200, 200]);
  await app.flushUsage();
  t.equal(await chargedRequests(c.client.id), 2, 'the batches behind it are recorded');
  t.equal(await app.redis.exists(foreign), 0, 'the foreign batch is acknowledged, not retried forever');
  const [kept] = await sql<{ reason: string }[]>`
    SELECT reason FROM meter.refused_usage WHERE usage->>'client_id' = ${stranger}`;
  t.equal(kept?.reason, "key not the client's, or not of this mode", 'and kept with the reason');
});

t.test('Redis coming back without its last writes neither records a batch twice nor loses usage', async (t) => {
  // A process of its own, whose batches stay open for 2 s: the state below is taken before any flush can take them.
  const own = await buildTestApp(t, { USAGE_BATCH_MS: '2000' }, { db });
  const r = own.app.redis;
  const c = await own.newClient('pro');
  const period = periodOf(Date.now());
  for (let i = 0; i < 3; i++) t.equal((await own.get('/v1/counties', c.headers)).statusCode, 200);
  await sleep(20); // the last settlements go after 5 ms
  // Redis's state now, as its append-only file holds it when the writes that follow are lost in a crash
  const unprefixed = (name: string) => name.slice(own.prefix.length);
  const batches = (await r.lrange('usage:batches', 0, -1)).map(unprefixed);
  const keys = ['usage:current', 'usage:batches', 'usage:seq', `pend:${c.client.id}`, ...batches];
  const saved = await Promise.all(keys.map((key) => r.dumpBuffer(key)));
  const counted = await Promise.all(batches.map((batch) => r.hvals(batch)));
  t.equal(
    counted
      .flat()
      .map(Number)
      .reduce((a, b) => a + b, 0),
    3,
    'the requests are counted in open batches',
  );
  t.equal(await chargedRequests(c.client.id), 0, 'and not recorded yet');

  await own.app.flushUsage();
  t.equal(await chargedRequests(c.client.id), 3, 'the batch is recorded once closed');
  // the crash: Redis restarts from its file, before the batch was taken and acknowledged
  for (const [i, key] of keys.entries()) {
    await r.del(key);
    if (saved[i]) await r.restore(key, 0, saved[i]!);
  }
  for (let i = 0; i < 2; i++) t.equal((await own.get('/v1/counties', c.headers)).statusCode, 200);
  await sleep(20);
  t.notOk(batches.includes(unprefixed((await r.get('usage:current'))!)), 'the requests after it open a new batch');
  await own.app.flushUsage();
  t.equal(await chargedRequests(c.client.id), 5, 'the restored batch is not recorded again, the new one is');
  t.equal(Number(await r.hget(`pend:${c.client.id}`, `n:${period}`)), 0, 'nothing left pending');
  t.equal(await r.llen('usage:batches'), 0, 'every batch acknowledged');
});

t.test('processes with different batch ages share batches: each closes when its name says', async (t) => {
  // a rolling change of USAGE_BATCH_MS: this process opens batches of 2 s; meanwhile the test app (20 ms) flushes
  // every second, and takes only closed batches
  const slow = await buildTestApp(t, { USAGE_BATCH_MS: '2000', REDIS_KEY_PREFIX: ctx.prefix }, { db });
  const c = await newClient('pro');
  for (let i = 0; i < 6; i++) {
    t.equal((await slow.get('/v1/counties', c.headers)).statusCode, 200);
    await sleep(250);
  }
  await slow.app.flushUsage();
  t.equal(await chargedRequests(c.client.id), 6, 'every request recorded');
  const period = periodOf(Date.now());
  t.equal(Number(await app.redis.hget(`pend:${c.client.id}`, `n:${period}`)), 0, 'nothing left pending');
});

t.test('usage is counted, not listed: one field per kind of request, whatever the number', async (t) => {
  const c = await newClient('pro');
  const { key: second } = await c.svc.createKey(c.client.id, 'live');
  const { period, day } = calendar(Date.now()); // of one instant: the turns below are given it, not the clock
  // Eight requests of two keys settled in one turn, under a key prefix of their own that no flush reads.
  const sub = 'counted:';
  const full = `${ctx.prefix}${sub}`; // the script's prefix (app.redis adds ctx.prefix to key names, not to ARGV)
  const rid = (i: number) => `req_counted_${i}`;
  const keyOf = (i: number) => (i < 5 ? c.keyId : 'second-key');
  const requests = [...Array(8).keys()];
  const admissions = requests.map((i) =>
    [c.client.id, c.client.id, Date.now(), 100, 100, 'v', period, rid(i), 'm', 0].join('|'),
  );
  const settlements = requests.map((i) => `1|${rid(i)}|${c.client.id}|${keyOf(i)}|live|rest|${period}|${day}`);
  await app.redis.hset(`${sub}st:${c.client.id}`, 'ver', 'v', 'period', period, 'm', 100);
  await app.redis.eval(TURN, 0, full, period, 60_000_000, 0, ...admissions);
  await app.redis.eval(TURN, 0, full, period, 60_000_000, 8, ...settlements);
  const current = (await app.redis.get(`${sub}usage:current`))!;
  const batch = current.slice(ctx.prefix.length);
  t.teardown(() =>
    app.redis.del(
      ...['st:', 'pend:', 'win:', 'fly:'].map((k) => `${sub}${k}${c.client.id}`),
      `${sub}usage:current`,
      `${sub}usage:batches`,
      `${sub}usage:seq`,
      batch,
    ),
  );
  const field = (key: string) => `${c.client.id}|${key}|live|rest|${period}|${day}|m:${period}`;
  t.same(
    await app.redis.hgetall(batch),
    { [field(c.keyId)]: '5', [field('second-key')]: '3' },
    'one field per key, counting its requests and naming their ledger bucket',
  );
  t.same(await app.redis.lrange(`${sub}usage:batches`, 0, -1), [current], 'one batch, listed');

  // and through the API, recorded per key
  t.same(await statuses(c.headers, 5), [200, 200, 200, 200, 200]);
  t.same(await statuses({ authorization: `Bearer ${second}` }, 3), [200, 200, 200]);
  await app.flushUsage();
  t.equal(await chargedRequests(c.client.id), 8);
  const keys = await sql<{ key_id: string; requests: number }[]>`
    SELECT key_id, requests::int FROM meter.usage_daily WHERE client_id = ${c.client.id} ORDER BY requests`;
  t.same(
    keys.map((k) => k.requests),
    [3, 5],
    'per key',
  );
});

t.test('Redis that does not answer: requests are allowed within about a second, counted, and reconciled', async (t) => {
  const sockets: net.Socket[] = [];
  const silent = net.createServer((socket) => sockets.push(socket)); // accepts, never answers: a paused Redis
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const port = (silent.address() as net.AddressInfo).port;
  for (const url of [`redis://127.0.0.1:${port}`, 'redis://127.0.0.1:1']) {
    const down = await buildTestApp(t, { REDIS_URL: url }, { db });
    const c = await newClient('developer');
    const control = await newClient('developer');
    // the same first request of a new client, sent at the same moment to the app whose Redis answers
    const timed = async (app: typeof down.app, headers: Record<string, string>) => {
      const started = performance.now();
      const res = await app.inject({ method: 'GET', url: OK_URL, headers });
      return { res, ms: performance.now() - started };
    };
    const [{ res, ms }, beside] = await Promise.all([timed(down.app, c.headers), timed(app, control.headers)]);
    t.equal(res.statusCode, 200, `${url}: allowed`);
    // it waits the fail-open second (FAIL_OPEN_MS) and checks the key in Postgres: about the control's time plus that
    const ratio = ms / (beside.ms + 1000);
    t.ok(
      ratio < 3,
      `within about a second more than the control (${ms.toFixed(0)} against ${beside.ms.toFixed(0)} ms)`,
    );
    t.ok(res.headers['x-ratelimit-limit'], 'headers still sent');
    t.ok(down.app.meterStats.failOpen >= 1, 'counted');
    await down.app.flushUsage().catch(() => {});
    const n = await chargedRequests(c.client.id);
    t.equal(n, 1, 'reconciled into Postgres');
  }
});

t.test('failed authentications from one address are limited', async (t) => {
  const flood = await buildTestApp(t, {}, { db });
  // failures are counted per UTC minute: start where the 61 (each held 25 ms) cannot straddle the next one
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await sleep(60_500 - intoMinute);
  let last;
  for (let i = 0; i < 61; i++)
    last = await flood.app.inject({ method: 'GET', url: OK_URL, remoteAddress: '192.0.2.7' });
  t.equal(last!.statusCode, 429);
  t.equal(last!.json().error.code, 'rate_limited');
  t.ok(Number(last!.headers['retry-after']) >= 1);
  const other = await flood.app.inject({ method: 'GET', url: OK_URL, remoteAddress: '192.0.2.8' });
  t.equal(other.statusCode, 401, 'another address is unaffected');
});
