// /readyz names what keeps a process from being ready: the database (an API_DATABASE_URL on a port nothing listens
// on), Redis only when REDIS_REQUIRED is set (without it the metering fails open: ready, degraded), and a shutdown;
// /healthz answers whatever the dependencies do.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { loadConfig } from '../../src/config.ts';
import { TEST_KEY_SECRET } from '../helpers/accounts.ts';
import { freePorts } from '../helpers/processes.ts';

const db = await createTestDatabase();
t.teardown(() => db.drop());
/** Ports that nothing listens on. */
const [DEAD_PG, DEAD_REDIS] = (await freePorts(2)) as [number, number];
const deadDatabase = () => {
  const url = new URL(db.apiUrl);
  url.port = String(DEAD_PG);
  return url.toString();
};

t.test('all reachable: ready', async (t) => {
  const { app } = await buildTestApp(t, {}, { db });
  const res = await app.inject({ url: '/readyz' });
  t.equal(res.statusCode, 200);
  t.same(res.json(), { status: 'ok', database: 'ok', meter: 'ok', redis: 'ok' });
});

t.test('the database unreachable: 503, naming the database connections', async (t) => {
  const { app } = await buildTestApp(t, { API_DATABASE_URL: deadDatabase() }, { db });
  const res = await app.inject({ url: '/readyz' });
  t.equal(res.statusCode, 503);
  t.same(res.json(), {
    status: 'unavailable',
    database: 'unavailable',
    meter: 'unavailable',
    redis: 'ok',
    not_ready: ['database', 'meter'],
  });
  t.equal((await app.inject({ url: '/healthz' })).statusCode, 200, '/healthz: alive all the same');
});

t.test('Redis unreachable: ready but degraded by default, not ready with REDIS_REQUIRED', async (t) => {
  const redisUrl = `redis://127.0.0.1:${DEAD_REDIS}/0`;
  const optional = await buildTestApp(t, { REDIS_URL: redisUrl }, { db });
  const soft = await optional.app.inject({ url: '/readyz' });
  t.equal(soft.statusCode, 200);
  t.same(soft.json(), { status: 'degraded', database: 'ok', meter: 'ok', redis: 'unavailable' });
  const required = await buildTestApp(t, { REDIS_URL: redisUrl, REDIS_REQUIRED: 'true' }, { db });
  const hard = await required.app.inject({ url: '/readyz' });
  t.equal(hard.statusCode, 503);
  t.same(hard.json(), {
    status: 'unavailable',
    database: 'ok',
    meter: 'ok',
    redis: 'unavailable',
    not_ready: ['redis'],
  });
});

t.test('shutting down: 503 with everything reachable', async (t) => {
  const { app } = await buildTestApp(t, {}, { db });
  app.lifecycle.shuttingDown = true;
  const res = await app.inject({ url: '/readyz' });
  t.equal(res.statusCode, 503);
  t.same(res.json(), {
    status: 'unavailable',
    database: 'ok',
    meter: 'ok',
    redis: 'ok',
    not_ready: ['shutting_down'],
  });
});

t.test('REDIS_REQUIRED and SHUTDOWN_TIMEOUT_MS: defaults, and bad values refused', async (t) => {
  const config = loadConfig({ ...process.env, API_KEY_SECRET: TEST_KEY_SECRET });
  t.equal(config.REDIS_REQUIRED, false);
  t.equal(config.SHUTDOWN_TIMEOUT_MS, 10_000);
  t.throws(
    () => loadConfig({ ...process.env, API_KEY_SECRET: TEST_KEY_SECRET, REDIS_REQUIRED: 'maybe' }),
    /REDIS_REQUIRED/,
  );
  t.throws(
    () => loadConfig({ ...process.env, API_KEY_SECRET: TEST_KEY_SECRET, SHUTDOWN_TIMEOUT_MS: '-1' }),
    /SHUTDOWN_TIMEOUT_MS/,
  );
});
