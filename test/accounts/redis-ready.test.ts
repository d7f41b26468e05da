// The operator CLI's Redis connection (issue 42): `admin client show` warned "Redis not reachable (Stream isn't
// writeable …)" while Redis was up, because a command that does not queue (createRedis) ran before the connection the
// CLI had just opened was ready. A proxy in front of the real Redis holds each connection back for a moment, as a
// loaded machine does; the service must wait for it (within a bound) rather than go on without Redis.
import t from 'tap';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createTestDatabase } from '../helpers/db.ts';
import { TEST_KEY_SECRET } from '../helpers/accounts.ts';
import { accounts } from '../../src/accounts/service.ts';
import { createRedis, redisConnection, whenReady } from '../../src/plugins/redis.ts';

const DELAY_MS = 500;
const db = await createTestDatabase();
t.teardown(db.drop);

const target = new URL(redisConnection(process.env).url);
const sockets = new Set<net.Socket>();
const proxy = net.createServer((client) => {
  sockets.add(client);
  client.pause();
  client.on('error', () => {});
  const timer = setTimeout(() => {
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    sockets.add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
    client.resume();
  }, DELAY_MS);
  client.on('close', () => clearTimeout(timer));
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
t.teardown(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => proxy.close(resolve));
});
const slow = new URL(target);
slow.port = String((proxy.address() as AddressInfo).port);

const prefix = `test:${randomBytes(6).toString('hex')}:`;
const direct = createRedis(redisConnection(process.env), prefix);
t.teardown(() => direct.disconnect());

t.test('a command waits for the connection it has just opened', async (t) => {
  const { id } = await accounts(db.sql, TEST_KEY_SECRET).createClient({
    name: 'Slow Redis',
    email: 'slow@example.com',
    plan: 'growth',
  });
  t.ok(await whenReady(direct, 10_000), 'Redis itself is up');
  await direct.set(`st:${id}`, 'cached');

  const redis = createRedis(slow.href, prefix); // as the CLI makes it, then uses it at once
  redis.on('error', () => {});
  t.teardown(() => redis.disconnect());
  const warnings: string[] = [];
  const svc = accounts(db.sql, TEST_KEY_SECRET, redis, (m) => warnings.push(m));
  const shown = await svc.showClient(id);
  t.match(shown.client, { id, plan: 'growth' });
  await svc.setStatus(id, 'suspended');
  t.same(warnings, [], 'no "Redis not reachable" warning');
  t.equal(await direct.exists(`st:${id}`), 0, "the client's cached state was dropped, so API processes re-read it");
});

t.test('a Redis that never answers: a warning after a bounded wait, and the command still succeeds', async (t) => {
  const held = new Set<net.Socket>();
  const silent = net.createServer((s) => {
    held.add(s);
    s.on('error', () => {});
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of held) s.destroy();
    return new Promise((resolve) => silent.close(resolve));
  });
  const redis = createRedis(`redis://127.0.0.1:${(silent.address() as AddressInfo).port}/0`, prefix);
  redis.on('error', () => {});
  t.teardown(() => redis.disconnect());
  const warnings: string[] = [];
  const svc = accounts(db.sql, TEST_KEY_SECRET, redis, (m) => warnings.push(m));
  const { id } = await svc.createClient({ name: 'No Redis', email: 'none@example.com', plan: 'growth' });
  const changed = await svc.setStatus(id, 'suspended');
  t.equal(changed.status, 'suspended');
  t.match(warnings, [/^Redis not reachable/]);
});
