// A promoted replica whose clock is behind the old master's, against real servers started here: a master and its
// replica, promoted as Sentinel promotes one (REPLICAOF NO ONE) after the master is killed.
//
// Redis's TIME cannot be set (libfaketime does not load into Debian's redis-server), so the clocks are set where the
// metering keeps them: the old master's batch clock is put an hour ahead (usage:clock, lua/clock.lua) before any
// request, as a master whose clock runs an hour fast would have it, and once the replica is promoted its skew is set
// back to 0: the promoted server then reads its own TIME, an hour behind every batch and time the old master wrote.
// The acknowledgement of a recorded batch is lost in the failover (put back as it was before the flush). Then: the
// batch clock goes on from the old master's last time rather than going back; no batch is recorded twice or left open
// for an hour; a balance rebuilt meanwhile does not count the recorded batch twice; the rate-limit window holds.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { buildTestApp } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { periodOf } from '../../src/metering/periods.ts';
import { freePorts, servers } from './servers.ts';

const [OLD, NEW] = (await freePorts(2)) as [number, number];
const HOUR_US = 3_600_000_000;
const s = servers(t);
await s.redis(OLD);
await s.redis(NEW, OLD);
const old = s.client(OLD);
const promoted = s.client(NEW);
await s.until('the replica in sync', async () =>
  (await promoted.info('replication')).includes('master_link_status:up'),
);

const db = await createTestDatabase();
t.teardown(() => db.drop());
const prefix = `test:${randomBytes(6).toString('hex')}:`;
const env = (port: number) => ({
  REDIS_URL: `redis://127.0.0.1:${port}/0`,
  REDIS_KEY_PREFIX: prefix,
  USAGE_BATCH_MS: '200',
});
const closesUs = (name: string) => Number(/usage:batch:(\d+)-/.exec(name)?.[1]);
const only = <T>(rows: readonly T[]): T => rows[0]!;

t.test('failing over to a server whose clock is an hour behind', async (t) => {
  // the old master's clock, an hour ahead
  const aheadUs = Date.now() * 1000 + HOUR_US;
  await old.hset(`${prefix}usage:clock`, 'hw', aheadUs);
  const first = await buildTestApp(t, env(OLD), { db });
  const c = await first.newClient('growth');
  await db.sql`UPDATE accounts.clients SET custom_monthly_credits = 100, custom_rpm = 5 WHERE id = ${c.client.id}`;
  await first.invalidate(c.client.id);
  const period = periodOf(Date.now());

  for (let i = 0; i < 3; i++) t.equal((await first.get('/v1/counties', c.headers)).statusCode, 200);
  // the settlements go a few milliseconds after the answers
  const settled = async () => Number(await old.hget(`${prefix}pend:${c.client.id}`, `n:${period}`));
  await s.until('the three settlements', async () => (await settled()) === 3);
  const [recorded] = await old.lrange(`${prefix}usage:batches`, 0, -1);
  t.ok(recorded && closesUs(recorded) > aheadUs, 'batches are named on the old master’s clock, an hour ahead');
  const counts = await old.hgetall(recorded!);
  const pend = await old.hgetall(`${prefix}pend:${c.client.id}`);
  await first.app.flushUsage();
  t.equal(await old.exists(`${prefix}usage:current`), 0, 'the batch taken is sealed: nothing writes into it again');
  // lost in the failover: the acknowledgement (the batch still listed and pending, as before the flush)
  await old.hset(recorded!, counts);
  await old.lpush(`${prefix}usage:batches`, recorded!);
  await old.hset(`${prefix}pend:${c.client.id}`, pend);
  t.equal((await first.get('/v1/counties', c.headers)).statusCode, 200, 'a fourth request, in a batch left open');
  await s.until('its settlement', async () => (await old.exists(`${prefix}usage:current`)) === 1);
  t.equal(await old.wait(1, 5000), 1, 'the replica has all of it');

  await s.kill(OLD);
  await first.app.close();
  await promoted.call('REPLICAOF', 'NO', 'ONE');
  const [hw] = (await promoted.hmget(`${prefix}usage:clock`, 'hw')).map(Number);
  await promoted.hset(`${prefix}usage:clock`, 'skew', 0); // its own TIME: an hour behind
  const second = await buildTestApp(t, env(NEW), { db });

  // a balance rebuilt from Postgres (as after requests admitted without Redis) while the recorded batch is pending
  await second.invalidate(c.client.id);
  t.equal((await second.get('/v1/counties', c.headers)).statusCode, 200, 'the fifth request, on the promoted server');
  t.equal(
    Number(await promoted.hget(`${prefix}st:${c.client.id}`, 'm')),
    95,
    'the rebuilt balance counts each request once (100 - 5), the recorded batch included',
  );
  const limited = await second.get('/v1/counties', c.headers);
  t.equal(limited.statusCode, 429, 'the rate-limit window came across: the sixth request in the minute is refused');

  await second.app.flushUsage(); // waits for the open batch to close: on the batch clock, not an hour
  const [, skew] = (await promoted.hmget(`${prefix}usage:clock`, 'hw', 'skew')).map(Number);
  t.ok(skew! > HOUR_US - 60_000_000 && skew! <= HOUR_US + 60_000_000, 'the clock runs on from the old master’s time');
  t.equal(await promoted.llen(`${prefix}usage:batches`), 0, 'every batch recorded and acknowledged');
  t.ok(hw! >= closesUs(recorded!), 'the clock never went back before the batches the old master closed');

  const { usage } = only(
    await db.sql<{ usage: number }[]>`
      SELECT coalesce(sum(requests), 0)::int AS usage FROM meter.usage_daily WHERE client_id = ${c.client.id}`,
  );
  const { ledger } = only(
    await db.sql<{ ledger: number }[]>`
      SELECT coalesce(-sum(delta), 0)::int AS ledger FROM meter.ledger
       WHERE client_id = ${c.client.id} AND reason = 'usage' AND period = ${period}`,
  );
  t.equal(usage, 5, 'five requests answered, five recorded: the batch recorded before the failover once');
  t.equal(ledger, 5, 'and charged once in the ledger');
  const pending = await promoted.hgetall(`${prefix}pend:${c.client.id}`);
  t.ok(
    Object.values(pending).every((n) => Number(n) === 0),
    'nothing left pending',
  );
  t.equal(Number(await promoted.hget(`${prefix}st:${c.client.id}`, 'm')), 95, 'the hot balance is the ledger’s');
  t.same(await promoted.keys(`${prefix}res:*`), [], 'no reservation left');
});
