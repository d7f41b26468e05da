// A real app on a per-file database and a per-file Redis key prefix, closed and dropped at teardown.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyPluginAsync, LightMyRequestResponse } from 'fastify';
import { buildApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import { TEST_KEY_SECRET, clientWithKey, type NewClientOptions } from './accounts.ts';

export interface TestContext {
  app: App;
  db: TestDatabase;
  /** Every log line the app wrote, for assertions about what is (never) logged. */
  logs: string[];
  /** The raw key of a Growth client made for this file. */
  key: string;
  /** This app's Redis key prefix (a second app given the same prefix shares its counters). */
  prefix: string;
  /** A new client with one key, managed through a service wired to this app's Redis. */
  newClient: (plan?: string, opts?: NewClientOptions) => ReturnType<typeof clientWithKey>;
  /** Makes running apps re-read a client changed behind the service's back (raw SQL in a test). */
  invalidate: (clientId: string) => Promise<unknown>;
  /** GET with that key. */
  get: (url: string, headers?: Record<string, string>) => Promise<LightMyRequestResponse>;
}

interface Teardown {
  teardown: (fn: () => unknown) => void;
}

/**
 * With `opts.db`, a second app on an existing database, as a second API process would be; `opts.plugins` are
 * registered after the API's routes.
 */
export async function buildTestApp(
  t: Teardown,
  env: Record<string, string> = {},
  opts: { db?: TestDatabase; plugins?: FastifyPluginAsync[] } = {},
): Promise<TestContext> {
  const db = opts.db ?? (await createTestDatabase());
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const prefix = env.REDIS_KEY_PREFIX ?? `test:${randomBytes(6).toString('hex')}:`;
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    API_DATABASE_URL: db.apiUrl,
    REDIS_KEY_PREFIX: prefix,
    DATABASE_POOL_SIZE: '4',
    USAGE_BATCH_MS: '20', // flushUsage() waits for the batch being written to close
    API_KEY_SECRET: TEST_KEY_SECRET,
    ...env,
  });
  const app = await buildApp(config, { logStream, plugins: opts.plugins });
  t.teardown(async () => {
    await app.close();
    if (!opts.db) await db.drop();
  });
  const { key } = await clientWithKey(db.sql, 'growth');
  const get = (url: string, headers: Record<string, string> = {}) =>
    app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}`, ...headers } });
  const newClient = (plan = 'growth', o: NewClientOptions = {}) =>
    clientWithKey(db.sql, plan, { ...o, redis: app.redis });
  const invalidate = (clientId: string) => app.redis.del(`st:${clientId}`, `st:${clientId}:test`);
  return { app, db, logs, key, get, prefix, newClient, invalidate };
}
