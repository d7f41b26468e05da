// PostgreSQL pools (postgres.js): `app.sql` for the request path's reads as api_reader, which can only read;
// `app.primarySql`, the same role on the primary, for the reads that must see every committed write; and
// `app.meterSql`, one connection as api_meter, the only one that may record usage; closed when the app closes.
// With DATABASE_REPLICA_URLS, `app.sql` is the router of src/db/replicas.ts; without, it is the primary's pool itself
// and `app.primarySql` is the same pool. Heavy requests (src/db/heavy.ts) hold at most HEAVY_CONNECTIONS of it at
// once, so they never hold all of it.
import fp from 'fastify-plugin';
import postgres from 'postgres';
import { ReadRouter, type ReplicaStatus } from '../db/replicas.ts';
import { HeavyGate, heavyConnections, heavyShare } from '../db/heavy.ts';

export type Sql = postgres.Sql;

declare module 'fastify' {
  interface FastifyInstance {
    /** The request path's reads: on a read replica when there are some (they may lag by up to REPLICA_MAX_LAG_MS). */
    sql: Sql;
    /**
     * The primary: reads that must see every committed write (authentication before a refusal, credit balances,
     * usage) and the accounts LISTEN.
     */
    primarySql: Sql;
    /** Usage flush, trial cap and last-used writes: the only connection that may record usage. */
    meterSql: Sql;
    /** Each read replica's state (for /readyz and operators); empty without DATABASE_REPLICA_URLS. */
    replicaStatus: () => ReplicaStatus[];
    /** How far behind the primary (ms) the data of a replica in rotation may be at most; 0 without replicas. */
    replicaMaxStaleMs: number;
    /** The heavy requests running and waiting in this process. */
    heavyGate: HeavyGate;
  }
}

/**
 * The API's sessions never start parallel workers: a worker costs more to launch (10-20 ms) than an API query takes
 * to run, and under load the cores are busy with other requests anyway. (Startup parameters are strings: postgres.js
 * leaves out falsy values, so a number 0 would silently not be sent.)
 */
export function createSql(url: string, max: number, connectTimeout = 10): Sql {
  return postgres(url, {
    max,
    idle_timeout: 60,
    connect_timeout: connectTimeout,
    prepare: true,
    onnotice: () => {},
    connection: { application_name: 'florida-api', statement_timeout: 15000, max_parallel_workers_per_gather: '0' },
  });
}

/** One connection for the replica monitor's checks, which must not wait behind requests. */
const monitorSql = (url: string) =>
  postgres(url, {
    max: 1,
    connect_timeout: 2,
    onnotice: () => {},
    connection: { application_name: 'florida-api-replica-monitor', statement_timeout: 2000 },
  });

export interface DbOptions {
  url: string;
  poolSize: number;
  meterUrl: string;
  /** Read replicas of `url`'s database (DATABASE_REPLICA_URLS, already split). */
  replicaUrls?: string[];
  replicaMaxLagMs?: number;
  /** Connections heavy requests may hold at once (HEAVY_CONNECTIONS); default: heavyShare(poolSize). */
  heavyConnections?: number;
}

export default fp<DbOptions>(
  async (app, opts) => {
    const sql = createSql(opts.url, opts.poolSize);
    const meterSql = createSql(opts.meterUrl, 1);
    app.decorate('meterSql', meterSql);
    // before the handler and after admission (an onRequest hook): a request refused costs no place
    const heavy = new HeavyGate(opts.heavyConnections ?? heavyShare(opts.poolSize));
    app.decorate('heavyGate', heavy);
    app.addHook('preHandler', (request, reply, done) => {
      const n = heavyConnections(request);
      if (n > 0) heavy.enter(reply.raw, n, done);
      else done();
    });
    const replicaUrls = opts.replicaUrls ?? [];
    if (replicaUrls.length === 0) {
      app.decorate('sql', sql);
      app.decorate('primarySql', sql);
      app.decorate('replicaStatus', () => []);
      app.decorate('replicaMaxStaleMs', 0);
      app.addHook('onClose', async () => {
        await Promise.all([sql.end({ timeout: 5 }), meterSql.end({ timeout: 5 })]);
      });
      return;
    }
    const router = new ReadRouter({
      primary: sql,
      primaryMonitor: monitorSql(opts.url),
      // a replica that cannot be reached fails a new connection in 3 s: the read then runs on another server
      replicas: replicaUrls.map((url) => ({ sql: createSql(url, opts.poolSize, 3), monitor: monitorSql(url) })),
      maxLagMs: opts.replicaMaxLagMs ?? 5000,
      registry: app.metrics,
      log: app.log,
      poolSize: opts.poolSize,
    });
    await router.start();
    app.decorate('sql', router.readSql);
    app.decorate('primarySql', router.primarySql);
    app.decorate('replicaStatus', () => router.status());
    app.decorate('replicaMaxStaleMs', router.maxStaleMs);
    app.addHook('onClose', async () => {
      await Promise.all([router.close(), meterSql.end({ timeout: 5 })]);
    });
  },
  { name: 'db', dependencies: ['metrics'] },
);
