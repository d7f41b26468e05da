// PostgreSQL pools (postgres.js): `app.sql` for the request path as api_reader, which can only read, and
// `app.meterSql`, one connection as api_meter, the only one that may record usage; closed when the app closes.
import fp from 'fastify-plugin';
import postgres from 'postgres';

export type Sql = postgres.Sql;

declare module 'fastify' {
  interface FastifyInstance {
    sql: Sql;
    /** Usage flush, trial cap and last-used writes: the only connection that may record usage. */
    meterSql: Sql;
  }
}

/**
 * The API's sessions never start parallel workers: a worker costs more to launch (10-20 ms) than an API query takes
 * to run, and under load the cores are busy with other requests anyway. (Startup parameters are strings: postgres.js
 * leaves out falsy values, so a number 0 would silently not be sent.)
 */
export function createSql(url: string, max: number): Sql {
  return postgres(url, {
    max,
    idle_timeout: 60,
    connect_timeout: 10,
    prepare: true,
    onnotice: () => {},
    connection: { application_name: 'florida-api', statement_timeout: 15000, max_parallel_workers_per_gather: '0' },
  });
}

export default fp<{ url: string; poolSize: number; meterUrl: string }>(
  async (app, opts) => {
    const sql = createSql(opts.url, opts.poolSize);
    const meterSql = createSql(opts.meterUrl, 1);
    app.decorate('sql', sql);
    app.decorate('meterSql', meterSql);
    app.addHook('onClose', async () => {
      await Promise.all([sql.end({ timeout: 5 }), meterSql.end({ timeout: 5 })]);
    });
  },
  { name: 'db' },
);
