// Redis failover under load, against real servers started here: a primary and a replica, three Redis Sentinels
// (quorum 2, down after 1 s) and an app connected through them (REDIS_SENTINELS). During a
// stream of requests the master is failed over, once with SENTINEL FAILOVER and once by killing it; then no answer is
// a 5xx, requests are served through the new master, and Postgres's usage and ledger and Redis's balance agree: exact,
// or in the client's favour by at most the requests in flight when the master died (docs/metering.md#failover); the
// rate limit errs only in the client's favour, and only during the failover.
import t, { type Test } from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildTestApp } from '../helpers/app.ts';
import { periodOf } from '../../src/metering/periods.ts';
import { freePorts, servers } from './servers.ts';

const [PRIMARY, REPLICA, ...SENTINELS] = (await freePorts(5)) as [number, number, number, number, number];
const NAME = 'florida-failover';
/** Requests each stream keeps in flight. */
const CONCURRENCY = 6;

const s = servers(t);
await s.redis(PRIMARY);
await s.redis(REPLICA, PRIMARY);
for (const port of SENTINELS) await s.sentinel(port, NAME, PRIMARY);
const sentinels = SENTINELS.map((port) => s.client(port));
const masterPort = async () =>
  Number(((await sentinels[0]!.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME)) as string[])[1]);
/** Every Sentinel sees the master, the other two and a replica in sync: a failover can be agreed on. */
const quorate = async () => {
  for (const sentinel of sentinels) {
    const others = (await sentinel.call('SENTINEL', 'SENTINELS', NAME)) as unknown[];
    const replicas = (await sentinel.call('SENTINEL', 'REPLICAS', NAME)) as string[][];
    const inSync = replicas.filter((r) => {
      const flags = r[r.indexOf('flags') + 1] ?? '';
      return !/s_down|o_down|disconnected/.test(flags) && r[r.indexOf('master-link-status') + 1] === 'ok';
    });
    if (others.length < 2 || inSync.length < 1) return false;
  }
  return true;
};
await s.until('the Sentinels to find each other and the replica', quorate, 60_000);

const ctx = await buildTestApp(t, {
  REDIS_SENTINELS: SENTINELS.map((port) => `127.0.0.1:${port}`).join(','),
  REDIS_SENTINEL_NAME: NAME,
  USAGE_BATCH_MS: '50',
});
const { app, db } = ctx;

/** Whether the app's shared connection is up on the server on `port`. */
const appOn = (port: number) => app.redis.status === 'ready' && app.redis.stream.remotePort === port;

interface Answer {
  at: number;
  status: number;
  /** The error code of a refusal. */
  code?: string;
}

/**
 * A stream of requests, `CONCURRENCY` at a time, each worker pausing `pauseMs` between two, until `stop()` (at the
 * latest at the end of the test `t`).
 */
function stream(t: Test, headers: Record<string, string>, pauseMs: number, workers = CONCURRENCY) {
  const answers: Answer[] = [];
  let stopped = false;
  const work = async () => {
    while (!stopped) {
      const res = await app.inject({ method: 'GET', url: '/v1/counties', headers });
      const code = res.statusCode === 200 ? undefined : (res.json() as { error?: { code?: string } }).error?.code;
      answers.push({ at: Date.now(), status: res.statusCode, code });
      await sleep(pauseMs);
    }
  };
  const running = Promise.all(Array.from({ length: workers }, work));
  const stop = async () => {
    stopped = true;
    await running;
  };
  t.teardown(stop);
  return {
    answers,
    stop,
    /** Resolves once `n` more answers have come. */
    more: async (n: number) => {
      const target = answers.length + n;
      while (answers.length < target) await sleep(10);
    },
  };
}

const only = <T>(rows: readonly T[]): T => rows[0]!;

/**
 * Resolves once every connection of the app (admissions, flush) is on the new master, which they reach within the
 * retry delay, later on a loaded machine: a run of answers of `stream` with no request admitted without Redis.
 */
const followed = (requests: { more: (n: number) => Promise<void> }) =>
  s.until(
    'every connection of the app on the new master',
    async () => {
      const failOpen = app.meterStats.failOpen;
      await requests.more(CONCURRENCY * 5);
      return app.meterStats.failOpen === failOpen;
    },
    60_000,
  );

/** A client with a known monthly grant and RPM, its hot balance dropped so the next request loads them. */
async function client(credits: number, rpm: number) {
  const c = await ctx.newClient('growth');
  await db.sql`UPDATE accounts.clients SET custom_monthly_credits = ${credits}, custom_rpm = ${rpm}
                WHERE id = ${c.client.id}`;
  await ctx.invalidate(c.client.id);
  return c;
}

/**
 * Settles everything the failover left in flight: the settlements still being retried, the reservations the old
 * master held that the new one lacks the settlement of (aged past the reaper's five minutes, then reaped), the usage
 * batches. Then returns the client's charged requests in Postgres (usage and ledger) and its hot balance in Redis.
 */
async function settled(clientId: string) {
  await sleep(2500); // settlements whose call failed are sent again every second
  // a batch is recorded once a replica has it: wait for the old master to have synced as the new one's replica
  await s.until('a replica in sync', quorate, 60_000);
  await app.flushUsage();
  const master = s.client(await masterPort());
  for (const key of await master.keys(`${ctx.prefix}res:*`)) await master.pexpire(key, 60_000);
  const reaped = await app.reapOrphans();
  await app.flushUsage();
  const period = periodOf(Date.now());
  const { usage } = only(
    await db.sql<{ usage: number }[]>`
      SELECT coalesce(sum(requests), 0)::int AS usage FROM meter.usage_daily WHERE client_id = ${clientId}`,
  );
  const { ledger, left } = only(
    await db.sql<{ ledger: number; left: number }[]>`
      SELECT coalesce(-sum(delta) FILTER (WHERE reason = 'usage'), 0)::int AS ledger,
             ((SELECT custom_monthly_credits FROM accounts.clients WHERE id = ${clientId})
               + coalesce(sum(delta) FILTER (WHERE bucket = 'monthly' AND period = ${period}), 0))::int AS left
        FROM meter.ledger WHERE client_id = ${clientId}`,
  );
  const pend = await app.redis.hgetall(`pend:${clientId}`);
  const st = await app.redis.hgetall(`st:${clientId}`);
  return { usage, ledger, left, pend, hotLeft: st.m === undefined ? null : Number(st.m), reaped };
}

/** The answers between `from` and `to` (ms) with status 200. */
const okBetween = (answers: Answer[], from: number, to: number) =>
  answers.filter((a) => a.status === 200 && a.at >= from && a.at <= to).length;

async function checkAccounts(t: Test, clientId: string, answers: Answer[], failover: { from: number; to: number }) {
  const ok = answers.filter((a) => a.status === 200).length;
  const { usage, ledger, left, pend, hotLeft, reaped } = await settled(clientId);
  const during = okBetween(answers, failover.from, failover.to);
  t.comment(`${ok} answered, ${usage} charged, ${during} answered during the failover, ${reaped} reservations reaped`);
  t.equal(ledger, usage, 'the ledger and the usage agree');
  t.ok(usage <= ok, `never charged more than answered (${usage} of ${ok})`);
  t.ok(ok - usage <= CONCURRENCY, `uncharged (${ok - usage}) at most the requests in flight`);
  t.ok(
    Object.values(pend).every((n) => Number(n) === 0),
    'nothing left pending in Redis',
  );
  if (hotLeft !== null) t.equal(hotLeft, left, "Redis's balance is Postgres's");
}

t.test('SENTINEL FAILOVER during a stream of requests', async (t) => {
  const a = await client(1_000_000, 100_000);
  const limited = await client(1_000_000, 40); // the limiter: 40 requests a minute
  const before = await masterPort();
  t.ok(appOn(before), 'the app is on the master the Sentinels name');
  const main = stream(t, a.headers, 5);
  const capped = stream(t, limited.headers, 40, 2);
  await main.more(100);
  const from = Date.now();
  await sentinels[0]!.call('SENTINEL', 'FAILOVER', NAME);
  let after = before;
  await s.until('the failover', async () => (after = await masterPort()) !== before && appOn(after));
  await followed(main);
  const to = Date.now();
  t.not(after, before, `failed over from ${before} to ${after}`);
  t.ok(
    ctx.logs.some((line) => line.includes('+failover-state-send-slaveof-noone')),
    'the app heard the promotion coming, and held its writes to the old master',
  );
  const failOpen = app.meterStats.failOpen;
  await main.more(150);
  t.equal(app.meterStats.failOpen, failOpen, 'the requests after the failover are metered through the new master');
  const windows = await s.client(after).exists(`${ctx.prefix}win:${a.client.id}`);
  t.equal(windows, 1, 'the window is on the new master');
  await Promise.all([main.stop(), capped.stop()]);

  const statuses = new Set([...main.answers, ...capped.answers].map((x) => x.status));
  t.same(
    [...statuses].filter((code) => code >= 500),
    [],
    'no 5xx',
  );
  t.same(
    main.answers.filter((x) => x.status !== 200),
    [],
    'every request of the unlimited client answered 200',
  );
  await checkAccounts(t, a.client.id, main.answers, { from, to });

  const admitted = capped.answers.filter((x) => x.status === 200).length;
  const refused = capped.answers.filter((x) => x.status === 429).length;
  t.equal(admitted + refused, capped.answers.length, 'the limited client: 200 or 429');
  const codes = [...new Set(capped.answers.slice(0, 40).flatMap((x) => x.code ?? []))].join(', ');
  t.ok(
    admitted >= Math.min(40, capped.answers.length),
    `never refused within its limit (${admitted} admitted; refused: ${codes || 'none'} in the first 40)`,
  );
  t.ok(
    admitted <= 40 + okBetween(capped.answers, from, to),
    `admitted past its limit (${admitted}) only during the failover`,
  );
});

t.test('the master killed (SIGKILL) during a stream of requests', async (t) => {
  const a = await client(1_000_000, 100_000);
  const before = await masterPort();
  const survivor = before === PRIMARY ? REPLICA : PRIMARY;
  // the old master, now a replica of the new one, in sync and seen by every Sentinel
  await s.until('the old master to follow the new one', quorate, 60_000);
  const main = stream(t, a.headers, 5);
  await main.more(100);
  const from = Date.now();
  await s.kill(before);
  await s.until('the failover', async () => (await masterPort()) === survivor && appOn(survivor));
  // a replica again, so the usage flush has one to confirm its batches (docs/metering.md#failover)
  await s.redis(before, survivor);
  await followed(main);
  const to = Date.now();
  const failOpen = app.meterStats.failOpen;
  await main.more(150);
  t.equal(app.meterStats.failOpen, failOpen, 'the requests after the failover are metered through the new master');
  await main.stop();
  t.same(
    main.answers.filter((x) => x.status !== 200),
    [],
    'every request answered 200: none failed while the master was gone',
  );
  t.ok(app.meterStats.failOpen > 0, 'the requests while no master answered were allowed (fail open)');
  await checkAccounts(t, a.client.id, main.answers, { from, to });

  const metrics = await app.metrics.getMetricsAsJSON();
  const value = (name: string) =>
    metrics.find((m) => m.name === name)?.values.reduce((sum, v) => sum + Number(v.value), 0) ?? 0;
  t.equal(
    value('florida_metering_fail_open_total'),
    app.meterStats.failOpen,
    'florida_metering_fail_open_total counts them',
  );
  t.ok(value('florida_credits_charged_total') > 0, 'florida_credits_charged_total counts charges');
  const turn = metrics.find((m) => m.name === 'florida_redis_script_duration_seconds');
  t.ok(
    turn?.values.some(
      (v) => v.labels.script === 'turn' && (v as { metricName?: string }).metricName?.endsWith('_count'),
    ),
    'florida_redis_script_duration_seconds has the turn script',
  );
});
