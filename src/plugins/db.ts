// PostgreSQL pool (postgres.js) as `app.sql`; closed when the app closes.
import fp from 'fastify-plugin';
import postgres from 'postgres';

export type Sql = postgres.Sql;

declare module 'fastify' {
  interface FastifyInstance {
    sql: Sql;
  }
}

export function createSql(url: string, max: number): Sql {
  return postgres(url, {
    max,
    idle_timeout: 60,
    connect_timeout: 10,
    prepare: true,
    onnotice: () => {},
    connection: { application_name: 'florida-api', statement_timeout: 15000 },
  });
}

export default fp<{ url: string; poolSize: number }>(async (app, opts) => {
  const sql = createSql(opts.url, opts.poolSize);
  app.decorate('sql', sql);
  app.addHook('onClose', async () => {
    await sql.end({ timeout: 5 });
  });
});
