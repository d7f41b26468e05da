// PostgreSQL pool (postgres.js) as `app.sql`; closed when the app closes.
import fp from 'fastify-plugin';
import postgres from 'postgres';

export type Sql = postgres.Sql;

declare module 'fastify' {
  interface FastifyInstance {
    sql: Sql;
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

export default fp<{ url: string; poolSize: number }>(async (app, opts) => {
  const sql = createSql(opts.url, opts.poolSize);
  app.decorate('sql', sql);
  app.addHook('onClose', async () => {
    await sql.end({ timeout: 5 });
  });
});
