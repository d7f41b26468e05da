// Two real API processes (`src/main.ts`, each with its own key cache and pools) on one database and one Redis:
// a revoked key and a suspended client are refused by both on the very next request, with no caching window.
import t from 'tap';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createTestDatabase } from '../helpers/db.ts';
import { TEST_KEY_SECRET, clientWithKey } from '../helpers/accounts.ts';
import { freePorts, spawnChild } from '../helpers/processes.ts';
import { createRedis, redisConnection } from '../../src/plugins/redis.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const db = await createTestDatabase();
t.teardown(() => db.drop());
const prefix = `test:${randomBytes(6).toString('hex')}:`;
const redis = createRedis(redisConnection(process.env), prefix);
t.teardown(() => redis.quit());

/**
 * Starts `src/main.ts` as its own OS process and resolves with its base URL once it listens. It and its workers are
 * stopped when the test ends, however it ends (helpers/processes.ts).
 */
async function startProcess(extraEnv: Record<string, string> = {}): Promise<{ base: string; child: ChildProcess }> {
  const [port] = (await freePorts(1)) as [number];
  const child = spawnChild(t, process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      PORT: String(port),
      API_DATABASE_URL: db.apiUrl,
      REDIS_KEY_PREFIX: prefix,
      API_KEY_SECRET: TEST_KEY_SECRET,
      DATABASE_POOL_SIZE: '2',
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listeners = Number(extraEnv.WORKERS ?? 1);
  await new Promise<void>((resolve, reject) => {
    // generous: starting an API process takes over a minute on a loaded machine
    const timer = setTimeout(() => reject(new Error(`process did not listen: ${output}`)), 300_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.split('Server listening').length - 1 >= listeners) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`process exited ${code}: ${output}`)));
  });
  return { base: `http://127.0.0.1:${port}`, child };
}

const [first, second] = (await Promise.all([startProcess(), startProcess()])).map((p) => p.base) as [string, string];
const status = async (base: string, key: string) =>
  (await fetch(`${base}/v1/counties/miami-dade`, { headers: { authorization: `Bearer ${key}` } })).status;

t.test('a revoked key is refused by both processes on the very next request', async (t) => {
  const c = await clientWithKey(db.sql, 'growth', { redis });
  // Warm both processes' key caches first, so a stale cache entry would show.
  t.equal(await status(first, c.key), 200);
  t.equal(await status(second, c.key), 200);
  t.equal(await status(second, c.key), 200);
  await c.svc.revokeKey(c.keyId);
  t.equal(await status(first, c.key), 401, 'first process');
  t.equal(await status(second, c.key), 401, 'second process');
});

t.test('a suspended client is refused by both processes, and served again once activated', async (t) => {
  const c = await clientWithKey(db.sql, 'pro', { redis });
  t.equal(await status(first, c.key), 200);
  t.equal(await status(second, c.key), 200);
  await c.svc.setStatus(c.client.id, 'suspended');
  t.equal(await status(second, c.key), 401, 'second process');
  t.equal(await status(first, c.key), 401, 'first process');
  await c.svc.setStatus(c.client.id, 'active');
  t.equal(await status(first, c.key), 200);
  t.equal(await status(second, c.key), 200);
});

t.test(
  'WORKERS=2: one port served by two worker processes, a revoked key refused, SIGTERM stops them all',
  async (t) => {
    const { base, child } = await startProcess({ WORKERS: '2' });
    const c = await clientWithKey(db.sql, 'growth', { redis });
    // several requests, so both workers (which share the port) answer some and warm their own key caches
    for (let i = 0; i < 6; i++) t.equal(await status(base, c.key), 200);
    await c.svc.revokeKey(c.keyId);
    for (let i = 0; i < 6; i++) t.equal(await status(base, c.key), 401, `request ${i + 1} after revocation`);
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    t.equal(code, 0, 'the primary exits cleanly once its workers have closed');
  },
);
