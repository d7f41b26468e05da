// A real app on a per-file database and a per-file Redis key prefix, closed and dropped at teardown.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';
import { TEST_KEY_SECRET, clientWithKey } from './accounts.ts';

export interface TestContext {
  app: App;
  db: TestDatabase;
  /** Every log line the app wrote, for assertions about what is (never) logged. */
  logs: string[];
  /** The raw key of a Growth client made for this file. */
  key: string;
  /** This app's Redis key prefix (a second app given the same prefix shares its counters). */
  prefix: string;
  /** GET with that key. */
  get: (url: string, headers?: Record<string, string>) => Promise<LightMyRequestResponse>;
}

interface Teardown {
  teardown: (fn: () => unknown) => void;
}

/** With `opts.db`, a second app on an existing database, as a second API process would be. */
export async function buildTestApp(
  t: Teardown,
  env: Record<string, string> = {},
  opts: { db?: TestDatabase } = {},
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
    API_KEY_SECRET: TEST_KEY_SECRET,
    ...env,
  });
  const app = await buildApp(config, { logStream });
  t.teardown(async () => {
    await app.close();
    if (!opts.db) await db.drop();
  });
  const { key } = await clientWithKey(db.sql, 'growth');
  const get = (url: string, headers: Record<string, string> = {}) =>
    app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}`, ...headers } });
  return { app, db, logs, key, get, prefix };
}
