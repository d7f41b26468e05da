// DATABASE_REPLICA_URLS and REPLICA_MAX_LAG_MS as settings, the app without replicas (app.sql is the plain pool),
// with a replica that cannot be reached (the primary serves), and which errors count as a server failing to answer.
import t from 'tap';
import postgres from 'postgres';
import { loadConfig } from '../../src/config.ts';
import { replicaUrls } from '../../src/db/replica-urls.ts';
import { failureOf } from '../../src/db/failures.ts';
import { parseLsn } from '../../src/db/replicas.ts';
import { buildTestApp } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { TEST_KEY_SECRET } from '../helpers/accounts.ts';
import { freePorts } from '../helpers/processes.ts';

const settings = (env: Record<string, string>) => () => loadConfig({ API_KEY_SECRET: TEST_KEY_SECRET, ...env });
/** A loopback port nothing listens on. */
const [CLOSED_PORT] = (await freePorts(1)) as [number];

t.test('the settings: defaults, a list, and every bad item listed without its text', async (t) => {
  const config = settings({})();
  t.equal(config.DATABASE_REPLICA_URLS, undefined);
  t.equal(config.REPLICA_MAX_LAG_MS, 5000);
  t.same(replicaUrls(config.DATABASE_REPLICA_URLS), []);
  const two = settings({
    DATABASE_REPLICA_URLS: 'postgres://api_reader@10.0.0.2:5432/florida, postgresql://api_reader:pw@r2/florida',
  })();
  t.same(replicaUrls(two.DATABASE_REPLICA_URLS), [
    'postgres://api_reader@10.0.0.2:5432/florida',
    'postgresql://api_reader:pw@r2/florida',
  ]);
  let message = '';
  try {
    settings({
      DATABASE_REPLICA_URLS: 'postgres://u:hunter22@ok/florida,mysql://u:hunter22@db/x,,postgres://u:hunter22@host',
      REPLICA_MAX_LAG_MS: 'soon',
    })();
  } catch (err) {
    message = (err as Error).message;
  }
  t.match(message, /REPLICA_MAX_LAG_MS: /);
  t.match(message, /DATABASE_REPLICA_URLS: item 2 of 4 must be a postgres:\/\/ URL/);
  t.match(message, /DATABASE_REPLICA_URLS: item 3 of 4 is empty/);
  t.match(message, /DATABASE_REPLICA_URLS: item 4 of 4 names no database/);
  t.notMatch(message, /item 1 /);
  t.notMatch(message, /hunter22/, 'no password in the message');
});

t.test('without replicas app.sql is the primary pool itself and nothing is counted', async (t) => {
  const { app, get } = await buildTestApp(t);
  t.equal(app.sql, app.primarySql);
  t.same(app.replicaStatus(), []);
  t.equal(app.replicaMaxStaleMs, 0);
  t.equal((await get('/v1/counties')).statusCode, 200);
  t.equal(app.metrics.getSingleMetric('florida_db_queries_total'), undefined, 'no per-query metrics');
});

t.test('a replica that cannot be reached stays out of rotation; the primary serves', async (t) => {
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const { app, get } = await buildTestApp(
    t,
    { DATABASE_REPLICA_URLS: `postgres://api_reader@127.0.0.1:${CLOSED_PORT}/${db.name}` },
    { db },
  );
  const [status] = app.replicaStatus();
  t.equal(status?.server, 'replica1');
  t.equal(status?.inRotation, false);
  t.match(status?.reason, /unreachable: .*ECONNREFUSED/);
  t.not(app.sql, app.primarySql);
  t.equal((await get('/v1/counties')).statusCode, 200);
  const [r] = await app.sql<{ recovery: boolean }[]>`SELECT pg_is_in_recovery() AS recovery`;
  t.equal(r?.recovery, false, 'read on the primary');
  const metric = await app.metrics.getSingleMetric('florida_replica_in_rotation')!.get();
  t.same(
    metric.values.map((v) => [v.labels.server, v.value]),
    [['replica1', 0]],
  );
  const text = await app.metrics.metrics();
  t.notMatch(text, new RegExp(String(CLOSED_PORT)), 'metrics name servers, never their addresses');
  t.notMatch(text, new RegExp(db.name));
});

t.test('which errors mean the server did not answer', async (t) => {
  const closed = postgres(`postgres://postgres@127.0.0.1:${CLOSED_PORT}/postgres`, { max: 1, connect_timeout: 2 });
  const refused = await closed`SELECT 1`.catch((e: unknown) => e);
  await closed.end({ timeout: 0 });
  t.equal(failureOf(refused), 'connection_error', 'connection refused');

  const { db } = await buildTestApp(t);
  const badInput = await db.sql`SELECT 1 / ${0}::int`.catch((e: unknown) => e);
  const raised = await db.sql`SELECT * FROM api.search_parcels(p_radius_m => 5)`.catch((e: unknown) => e);
  const timedOut = await db.sql
    .begin(async (tx) => {
      await tx`SET LOCAL statement_timeout = 10`;
      await tx`SELECT pg_sleep(1)`;
    })
    .catch((e: unknown) => e);
  for (const [name, err] of Object.entries({ badInput, raised, timedOut })) {
    t.equal(failureOf(err), null, `${name} (${(err as { code?: string }).code}) is the statement's own answer`);
  }
  t.same(
    [badInput, raised, timedOut].map((e) => (e as { code: string }).code),
    ['22012', '22023', '57014'],
  );

  const own = postgres(db.ownerUrl, { max: 1, onnotice: () => {} });
  const sleeping = own`SELECT pg_sleep(5) /* to be terminated */`.catch((e: unknown) => e);
  let pid: number | undefined;
  while (pid === undefined) {
    [{ pid } = { pid: undefined }] = await db.sql<{ pid: number }[]>`
      SELECT pid FROM pg_stat_activity
       WHERE datname = current_database() AND state = 'active' AND query LIKE 'SELECT pg_sleep(5)%'`;
  }
  await db.sql`SELECT pg_terminate_backend(${pid})`;
  const terminated = await sleeping;
  await own.end({ timeout: 0 });
  t.equal(failureOf(terminated), 'connection_error', `terminated (${(terminated as { code: string }).code})`);
  // the texts PostgreSQL 15 gives a hot standby's cancelled query (the integration test meets a real one)
  t.equal(
    failureOf({ code: '40001', message: 'canceling statement due to conflict with recovery' }),
    'recovery_conflict',
  );
  t.equal(failureOf({ code: '40001', message: 'could not serialize access due to concurrent update' }), null);
  t.equal(
    failureOf({ code: '57P04', message: 'terminating connection due to conflict with recovery' }),
    'recovery_conflict',
  );
  t.equal(failureOf({ code: '57P03', message: 'the database system is starting up' }), 'connection_error');
  t.equal(failureOf(new Error('plain')), null);
});

t.test('WAL positions order as numbers', async (t) => {
  t.ok(parseLsn('0/FFFFFFFF') < parseLsn('1/0'));
  t.ok(parseLsn('16/B374D848') > parseLsn('16/B374D847'));
  t.equal(parseLsn('1/10'), 4294967312n);
});
