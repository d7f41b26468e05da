// Read replicas against a real streaming replica of the test server (scripts/replica.sh, pg_basebackup): reads served
// by it, writes and the accounts LISTEN on the primary, a key's lookup never misled by the replica's lag, a statement
// error not retried, a lost connection and a recovery conflict retried on the primary, a lagging replica taken out
// and back in, and the replica stopped under a stream of requests without a single 5xx.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import postgres from 'postgres';
import { ownerDatabaseUrl, withDatabase, withRole } from '../../src/db-url.ts';
import { buildTestApp } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { cleanupWhenDone, freePorts, portFree } from '../helpers/processes.ts';
import type { App } from '../../src/app.ts';

const run = promisify(execFile);
const primaryUrl = new URL(ownerDatabaseUrl(process.env));
const PRIMARY_PORT = Number(primaryUrl.port || 5432);
/**
 * Next to the primary's port (55442 for 55432), where a replica left by a run that died is found again; a free port
 * when another program holds that one (a second clone's primary may: its PGPORT is its own choice).
 */
const NEAR_PORT = PRIMARY_PORT + 10;
let REPLICA_PORT = NEAR_PORT;
const ROOT = new URL('../..', import.meta.url).pathname;

/** scripts/replica.sh on the test server's cluster; a recovery conflict is resolved after 0.5 s rather than 5. */
const replicaEnv = {
  ...process.env,
  DATABASE_URL: '',
  PGPORT: String(PRIMARY_PORT),
  PG_REPLICA_MAX_STANDBY_DELAY: '500ms',
};
const replica = (command: string) =>
  run('bash', [`${ROOT}scripts/replica.sh`, command, '--port', String(REPLICA_PORT)], {
    env: replicaEnv,
    timeout: 300_000,
  });

const until = async (what: string, check: () => Promise<boolean> | boolean, ms = 120_000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

/** A metric's value for the labels given (0 when the series does not exist yet). */
const metric = async (app: App, name: string, labels: Record<string, string>) => {
  const m = app.metrics.getSingleMetric(name);
  if (!m) throw new Error(`no metric ${name}`);
  const { values } = await m.get();
  const hit = values.find((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want));
  return hit?.value ?? 0;
};
const served = (app: App, server: string) => metric(app, 'florida_db_queries_total', { server, outcome: 'ok' });

// the copy takes a while where the cluster holds a benchmark's state besides the test databases
t.setTimeout(300_000);
await replica('clean'); // a replica left by a run that died before its cleanup could run
if (!(await portFree(NEAR_PORT))) REPLICA_PORT = (await freePorts(1))[0]!;
// the replica is a daemon, not a child of this process: cleaned when the file ends, however it ends
cleanupWhenDone(t, 'bash', [`${ROOT}scripts/replica.sh`, 'clean', '--port', String(REPLICA_PORT)], {
  env: replicaEnv,
});
const db = await createTestDatabase();
t.teardown(() => db.drop());
await replica('start');

/** The replica as its superuser (to pause replay, look at its sessions); its server is stopped by the last test. */
const onReplica = postgres(`postgres://postgres@127.0.0.1:${REPLICA_PORT}/${db.name}`, { max: 1, onnotice: () => {} });
t.teardown(() => onReplica.end({ timeout: 1 }));
// the test database was created on the primary before the copy; one created after it would reach it as WAL too
await until('the test database on the replica', async () => {
  try {
    await onReplica`SELECT 1`;
    return true;
  } catch {
    return false;
  }
});
const replicaUrl = withRole(withDatabase(`postgres://x@127.0.0.1:${REPLICA_PORT}/`, db.name), 'api_reader');

// 3 s: the test databases that other files create and drop meanwhile put WAL behind the replica too
const { app, get, key, newClient } = await buildTestApp(
  t,
  { DATABASE_REPLICA_URLS: replicaUrl, REPLICA_MAX_LAG_MS: '3000' },
  { db },
);
const inRotation = () => app.replicaStatus()[0]!.inRotation;
t.beforeEach(() => until('the replica in rotation', inRotation));

const PATHS = [
  '/v1/counties',
  '/v1/counties/miami-dade',
  '/v1/parcels/search?query=SMITH&limit=5',
  '/v1/parcels/search?county=miami-dade&facets=county,dor_use_code&limit=3',
  '/v1/parcels/autocomplete?q=SMI',
  '/v1/sales/search?county=miami-dade&limit=5',
  '/v1/tax-delinquencies/counts?county=miami-dade',
  '/v1/parcels/1',
];

t.test('reads are served by the replica; exact reads and the usage writer by the primary', async (t) => {
  const [r] = await app.sql<{ recovery: boolean; port: number }[]>`
    SELECT pg_is_in_recovery() AS recovery, inet_server_port() AS port`;
  t.same(r, { recovery: true, port: REPLICA_PORT }, 'app.sql reads from the replica');
  const [p] = await app.primarySql<{ recovery: boolean; port: number }[]>`
    SELECT pg_is_in_recovery() AS recovery, inet_server_port() AS port`;
  t.same(p, { recovery: false, port: PRIMARY_PORT }, 'app.primarySql is the primary');
  const [m] = await app.meterSql<{ port: number }[]>`SELECT inet_server_port() AS port`;
  t.equal(m!.port, PRIMARY_PORT, 'the usage writer is the primary');
  const [u] = await app.sql.unsafe<{ port: number; two: number }[]>(
    'SELECT inet_server_port() AS port, $1::int + 1 AS two',
    [1 as never],
  );
  t.same(u, { port: REPLICA_PORT, two: 2 }, 'sql.unsafe is routed too');

  const before = await served(app, 'replica1');
  for (const path of PATHS) t.equal((await get(path)).statusCode, 200, path);
  const mcp = await app.inject({
    method: 'POST',
    url: '/api/mcp',
    headers: { authorization: `Bearer ${key}`, accept: 'application/json, text/event-stream' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_counties', arguments: {} } },
  });
  t.equal(mcp.statusCode, 200, 'an MCP tool call');
  t.ok((await served(app, 'replica1')) - before >= PATHS.length + 1, 'each request read from replica1');
});

t.test('a statement error on the replica is answered at once, not run again', async (t) => {
  const retries = await metric(app, 'florida_db_read_retries_total', { from: 'replica1', to: 'primary' });
  const errors = await metric(app, 'florida_db_queries_total', { server: 'replica1', outcome: 'error' });
  const res = await get('/v1/parcels/search?radius_m=500');
  t.equal(res.statusCode, 400);
  t.match(res.json().error.message, /radius_m/);
  t.equal(await metric(app, 'florida_db_queries_total', { server: 'replica1', outcome: 'error' }), errors + 1);
  t.equal(await metric(app, 'florida_db_read_retries_total', { from: 'replica1', to: 'primary' }), retries, 'no retry');
});

t.test('usage is flushed to the primary; the accounts LISTEN runs there', async (t) => {
  const c = await db.sql<{ n: number }[]>`SELECT coalesce(sum(requests), 0)::int AS n FROM meter.usage_daily`;
  for (let i = 0; i < 3; i++) t.equal((await get('/v1/counties/miami-dade')).statusCode, 200);
  await app.flushUsage();
  const after = await db.sql<{ n: number }[]>`SELECT coalesce(sum(requests), 0)::int AS n FROM meter.usage_daily`;
  t.ok(after[0]!.n >= c[0]!.n + 3, 'the requests are recorded on the primary');
  const listening = (sql: postgres.Sql) =>
    sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity
                          WHERE datname = current_database() AND query ILIKE 'listen%accounts_changed%'`;
  t.equal((await listening(db.sql))[0]!.n, 1, 'one LISTEN session on the primary');
  t.equal((await listening(onReplica))[0]!.n, 0, 'none on the replica');
});

t.test("a key's lookup is never misled by the replica's lag", async (t) => {
  // a second API process that keeps the replica in rotation however far behind it falls
  const patient = await buildTestApp(t, { DATABASE_REPLICA_URLS: replicaUrl, REPLICA_MAX_LAG_MS: '600000' }, { db });
  await until('the replica in rotation', () => patient.app.replicaStatus()[0]!.inRotation);
  const known = await patient.newClient('growth');
  const revoked = await patient.newClient('growth');
  await until('the keys on the replica', async () => {
    const [r] =
      await onReplica`SELECT count(*)::int AS n FROM accounts.api_keys WHERE client_id IN (${known.client.id}, ${revoked.client.id})`;
    return r!.n === 2;
  });
  await onReplica`SELECT pg_wal_replay_pause()`;
  try {
    await until('replay paused', async () => (await onReplica`SELECT pg_is_wal_replay_paused() AS p`)[0]!.p);
    t.equal((await patient.get('/v1/counties', { authorization: `Bearer ${revoked.key}` })).statusCode, 200);
    const fresh = await patient.newClient('growth'); // exists on the primary only
    // revoked with plain SQL: the notice is the only signal (the service would also drop the client's Redis balance,
    // which makes metering read the key again from the primary)
    await db.sql`UPDATE accounts.api_keys SET status = 'revoked', revoked_at = now() WHERE id = ${revoked.keyId}`;
    const [stale] = await onReplica`SELECT status FROM accounts.api_keys WHERE id = ${revoked.keyId}`;
    t.equal(stale?.status, 'active', 'the replica is behind');
    t.ok(patient.app.replicaStatus()[0]!.inRotation, 'and in rotation');
    t.equal((await patient.get('/v1/counties', fresh.headers)).statusCode, 200, 'a key made a moment ago is served');
    const gone = await patient.get('/v1/counties', { authorization: `Bearer ${revoked.key}` });
    t.equal(gone.statusCode, 401, 'a key revoked a moment ago is refused');
    t.equal((await patient.get('/v1/counties', known.headers)).statusCode, 200, 'an unchanged key is served');
  } finally {
    await onReplica`SELECT pg_wal_replay_resume()`;
  }
});

t.test('a replica whose replay is paused is taken out while it lags, and back in once it catches up', async (t) => {
  await until('the replica in rotation', inRotation);
  await onReplica`SELECT pg_wal_replay_pause()`;
  try {
    await db.sql`CREATE TABLE public.lag_probe AS SELECT 1 AS x`; // a write the replica cannot replay
    await until('the replica out of rotation', () => !inRotation());
    t.match(app.replicaStatus()[0]!.reason, /over REPLICA_MAX_LAG_MS \(WAL replay is paused\)/);
    t.ok((await metric(app, 'florida_replica_lag_seconds', { server: 'replica1' })) > 1, 'the lag shows');
    t.equal(await metric(app, 'florida_replica_in_rotation', { server: 'replica1' }), 0);
    const before = { replica: await served(app, 'replica1'), primary: await served(app, 'primary') };
    for (const path of PATHS) t.equal((await get(path)).statusCode, 200, path);
    t.equal(await served(app, 'replica1'), before.replica, 'nothing read from the lagging replica');
    t.ok((await served(app, 'primary')) >= before.primary + PATHS.length, 'the primary answered');
  } finally {
    await onReplica`SELECT pg_wal_replay_resume()`;
  }
  await until('the replica back in rotation', inRotation);
  t.equal(await metric(app, 'florida_replica_in_rotation', { server: 'replica1' }), 1);
  const before = await served(app, 'replica1');
  t.equal((await get('/v1/counties')).statusCode, 200);
  t.ok((await served(app, 'replica1')) > before, 'the replica serves again');
});

/** Sleeps on a replica (up to 10 s, until dealt with), not at all on the primary. */
const SLEEP_ON_REPLICA = 'pg_sleep(CASE WHEN pg_is_in_recovery() THEN 10 ELSE 0 END)';

/** Starts a read on the replica and returns it with its backend's pid once it runs there. */
async function slowRead(sql: string) {
  await until('the replica in rotation', inRotation);
  const read = app.sql.unsafe<{ port: number }[]>(sql).then((rows) => rows);
  read.catch(() => {}); // awaited by the caller
  let pid = 0;
  await until('the read running on the replica', async () => {
    const [r] = await onReplica<{ pid: number }[]>`
      SELECT pid FROM pg_stat_activity WHERE query = ${sql} AND state = 'active'`;
    pid = r?.pid ?? 0;
    return pid !== 0;
  });
  return { read, pid };
}

t.test('a read whose replica connection is lost is run again on the primary', async (t) => {
  const retries = await metric(app, 'florida_db_read_retries_total', { from: 'replica1', to: 'primary' });
  const { read, pid } = await slowRead(`SELECT inet_server_port() AS port FROM ${SLEEP_ON_REPLICA} /* lost */`);
  await onReplica`SELECT pg_terminate_backend(${pid})`;
  t.same(await read, [{ port: PRIMARY_PORT }], 'answered by the primary');
  t.equal(await metric(app, 'florida_db_read_retries_total', { from: 'replica1', to: 'primary' }), retries + 1);
  t.ok((await metric(app, 'florida_db_queries_total', { server: 'replica1', outcome: 'connection_error' })) >= 1);
  await until('the replica back in rotation', inRotation);
});

t.test('a read cancelled by a recovery conflict is run again on the primary', async (t) => {
  await db.sql.begin(async (tx) => {
    await tx`CREATE TABLE public.conflict_probe AS SELECT 1 AS x`;
    await tx`GRANT SELECT ON public.conflict_probe TO api_reader`;
  });
  await until('the table on the replica', async () => {
    const [r] = await onReplica`SELECT to_regclass('public.conflict_probe') IS NOT NULL AS ok`;
    return r!.ok;
  });
  const retries = await metric(app, 'florida_db_read_retries_total', { from: 'replica1', to: 'primary' });
  const { read } = await slowRead(`SELECT inet_server_port() AS port FROM public.conflict_probe, ${SLEEP_ON_REPLICA}`);
  // an ACCESS EXCLUSIVE lock is replayed on the replica, where the read holds the table: replay waits for 0.5 s
  // (max_standby_streaming_delay), then cancels the read
  await db.sql.begin((tx) => tx`LOCK TABLE public.conflict_probe IN ACCESS EXCLUSIVE MODE`);
  t.same(await read, [{ port: PRIMARY_PORT }], 'answered by the primary');
  t.ok((await metric(app, 'florida_db_queries_total', { server: 'replica1', outcome: 'recovery_conflict' })) >= 1);
  t.equal(await metric(app, 'florida_db_read_retries_total', { from: 'replica1', to: 'primary' }), retries + 1);
});

t.test('the replica stopped under a stream of requests: no request fails', async (t) => {
  await until('the replica in rotation', inRotation);
  // a key of its own with a high rate limit: the stream sends hundreds of requests a minute
  const streamer = await newClient('enterprise');
  const statuses: number[] = [];
  let stopping = false;
  const worker = async () => {
    for (let i = 0; !stopping || i % PATHS.length !== 0; i++) {
      statuses.push((await get(PATHS[i % PATHS.length]!, { authorization: `Bearer ${streamer.key}` })).statusCode);
    }
  };
  const before = await served(app, 'replica1');
  const workers = Array.from({ length: 4 }, worker);
  await until('requests served by the replica', async () => (await served(app, 'replica1')) > before + 20);
  await replica('stop');
  await until('the replica out of rotation', () => !inRotation());
  const primaryBefore = await served(app, 'primary');
  await until('requests served by the primary', async () => (await served(app, 'primary')) > primaryBefore + 20);
  stopping = true;
  await Promise.all(workers);
  t.ok(statuses.length > 50, `${statuses.length} requests`);
  t.same(
    statuses.filter((s) => s !== 200),
    [],
    'every request answered 200',
  );
  t.match(app.replicaStatus()[0]!.reason, /unreachable|query failed/);
});
