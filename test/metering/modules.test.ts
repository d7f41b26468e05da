// The metering modules on their own: periods, headers, the per-turn Redis call (on the real Redis) and the usage gate.
import t, { type Test } from 'tap';
import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import { calendar, periodOf, secondsToNextPeriod } from '../../src/metering/periods.ts';
import { setRateLimitHeaders } from '../../src/metering/headers.ts';
import { Turns } from '../../src/metering/turns.ts';
import { UsageFlush } from '../../src/metering/usage-flush.ts';
import { createRedis, redisConnection } from '../../src/plugins/redis.ts';
import type { Sql } from '../../src/plugins/db.ts';

t.test('periods and days are UTC', async (t) => {
  const lastSecondOfJanuary = Date.UTC(2026, 0, 31, 23, 59, 59);
  t.equal(periodOf(lastSecondOfJanuary), '2026-01');
  t.equal(secondsToNextPeriod(lastSecondOfJanuary), 1);
  t.equal(secondsToNextPeriod(Date.UTC(2026, 1, 1)), 28 * 86400, 'a whole February');
  t.match(calendar(lastSecondOfJanuary), { day: '2026-01-31', period: '2026-01' });
  t.match(calendar(lastSecondOfJanuary + 1000), { day: '2026-02-01', period: '2026-02' }, 'recomputed at midnight');
});

t.test('rate-limit headers: Unix-seconds reset, RFC 9651 RateLimit, never a negative remainder', async (t) => {
  const headers: Record<string, unknown> = {};
  const reply = { header: (name: string, value: unknown) => (headers[name] = value) } as unknown as FastifyReply;
  const now = 1_800_000_000_500;
  t.equal(setRateLimitHeaders(reply, 60, -3, 1200, now), 2, 'seconds until a slot frees, rounded up');
  t.same(headers, {
    'X-RateLimit-Limit': 60,
    'X-RateLimit-Remaining': 0,
    'X-RateLimit-Reset': 1_800_000_003,
    RateLimit: 'default;r=0;t=2',
  });
});

/** A Turns on the real Redis, under a key prefix of its own, closed when the test ends. */
async function turnsOnRedis(t: Test) {
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  const redis = createRedis(redisConnection(process.env), prefix);
  const turns = new Turns(redis, prefix, 20_000, () => {});
  t.teardown(() => {
    turns.close();
    redis.disconnect();
  });
  await turns.ready(1000);
  return { turns, redis };
}

t.test('one turn: each admission gets its own values, however many share the call (2 calls for 300)', async (t) => {
  const { turns } = await turnsOnRedis(t);
  const period = periodOf(Date.now());
  // free admissions of one client: each is counted in its window, in order, however many share the call
  const now = Date.now();
  const answers = await Promise.all(
    Array.from({ length: 300 }, (_, i) => turns.admit(`s|c|${now}|1000|1000|1|${period}|r${i}|m|1`)),
  );
  t.same(
    answers.map((a) => [a[0], a[2]]),
    answers.map((_, i) => [1, i + 1]),
    'admitted, the window counting 1..300',
  );
  turns.settle(`1|unknown-request|c|k|live|rest|${period}|2026-01-01`);
  t.equal(turns.pendingSettlements, 1);
  await turns.send();
  t.equal(turns.pendingSettlements, 0, 'sent; a reservation that does not exist is skipped');
});

t.test('in flight: a client at its cap is refused busy until a release; a refusal takes no slot', async (t) => {
  const { turns, redis } = await turnsOnRedis(t);
  const period = periodOf(Date.now());
  const admit = (rid: string, cap = 3) => turns.admit(`s|c|${Date.now()}|1000|${cap}|1|${period}|${rid}|m|1`);
  const burst = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((rid) => admit(rid)));
  t.same(
    burst.map((a) => [a[0], a[1]]),
    [
      [1, ''],
      [1, ''],
      [1, ''],
      [0, 'busy'],
      [0, 'busy'],
    ],
    'three in flight admitted (exact within one call), the rest refused busy',
  );
  t.equal(burst[4]![2], 3, 'a busy refusal does not count in the per-minute window');
  t.equal(await redis.zcard('fly:c'), 3, 'three slots held');
  turns.release('a', 'c');
  turns.release('a', 'c'); // releasing twice changes nothing
  t.same((await admit('f')).slice(0, 2), [1, ''], 'a release frees a slot for the next admission');
  t.same((await admit('g')).slice(0, 2), [0, 'busy'], 'and only one');
  // a lease that has ended no longer counts (its process died without releasing)
  await redis.zadd('fly:c', Date.now() - 1, 'b', Date.now() - 1, 'c');
  t.same((await admit('h')).slice(0, 2), [1, ''], 'slots whose lease ended are taken back');
  t.ok((await redis.pttl('fly:c')) > 0, 'the set expires once no lease can be running');
});

t.test('the usage gate: a move waits for the reads in progress, and reads wait for a move', async (t) => {
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  const redis = createRedis(redisConnection(process.env), prefix);
  t.teardown(() => redis.disconnect());
  const { gate } = new UsageFlush({
    redis,
    meterSql: null as unknown as Sql,
    keyPrefix: prefix,
    sendTurn: async () => {},
  });
  const order: string[] = [];
  await gate.enter();
  const moved = gate.move(async () => {
    order.push('move');
  });
  await new Promise((resolve) => setTimeout(resolve, 20));
  order.push('read done');
  gate.leave();
  await moved;
  t.same(order, ['read done', 'move']);
  let release = () => {};
  const slow = gate.move(() => new Promise<void>((resolve) => (release = resolve)));
  const entered = gate.enter().then(() => order.push('read'));
  await new Promise((resolve) => setTimeout(resolve, 20));
  order.push('move done');
  release();
  await slow;
  await entered;
  gate.leave();
  t.same(order.slice(2), ['move done', 'read']);
});
