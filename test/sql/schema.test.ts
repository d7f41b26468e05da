// The schema's own promises: migrations go up from empty, down and up again; sql/ re-applies cleanly; every api
// object is documented; the API's role can read but not write.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import postgres from 'postgres';
import { runner } from 'node-pg-migrate';
import { applySql } from '../../scripts/db-setup.ts';
import { ownerDatabaseUrl, withDatabase } from '../../src/db-url.ts';
import { createTestDatabase } from '../helpers/db.ts';

const MIGRATIONS = join(new URL('../..', import.meta.url).pathname, 'migrations');

t.test('migrations: up from empty, all the way down, up again; sql/ applies twice', async (t) => {
  const name = `test_migrate_${randomBytes(4).toString('hex')}`;
  const admin = postgres(withDatabase(ownerDatabaseUrl(), 'postgres'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE "${name}"`);
  const url = withDatabase(ownerDatabaseUrl(), name);
  t.teardown(async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });
  const migrate = (direction: 'up' | 'down', count = Infinity) =>
    runner({
      databaseUrl: url,
      dir: MIGRATIONS,
      migrationsTable: 'pgmigrations',
      direction,
      count,
      log: () => {},
      checkOrder: true,
    });
  const up = await migrate('up');
  t.ok(up.length >= 5, `${up.length} migrations up`);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());
  await applySql(sql);
  await applySql(sql);
  const [fns] = await sql`SELECT count(*)::int AS n FROM pg_proc WHERE pronamespace = 'api'::regnamespace`;
  t.ok((fns?.n ?? 0) > 0, 'api functions exist after two applies');
  // Repeatable objects depend on the tables: going down starts by dropping them, as going up ends by applying them.
  await sql`DROP SCHEMA api CASCADE`;
  const down = await migrate('down');
  t.equal(down.length, up.length, 'every migration goes down');
  const [left] =
    await sql`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname IN ('core', 'accounts', 'meter', 'ingest')`;
  t.equal(left?.n, 0, 'no tables left');
  t.equal((await migrate('up')).length, up.length, 'and up again');
  await applySql(sql);
});

t.test('every api function and view has a COMMENT ON, and the API role cannot write', async (t) => {
  const db = await createTestDatabase();
  t.teardown(db.drop);
  const undocumented = await db.sql`
    SELECT p.proname AS name FROM pg_proc p WHERE p.pronamespace = 'api'::regnamespace AND obj_description(p.oid, 'pg_proc') IS NULL
    UNION ALL
    SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'api'::regnamespace AND c.relkind IN ('v', 'm') AND obj_description(c.oid, 'pg_class') IS NULL`;
  t.same(
    undocumented.map((r) => r.name),
    [],
    'no api object without a comment',
  );

  const api = postgres(db.apiUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => api.end());
  const counties = await api`SELECT * FROM api.list_counties()`;
  t.ok(Array.isArray(counties), 'the API role reads through api.*');
  for (const write of [
    api`UPDATE core.counties SET name = 'X' WHERE id = 1`,
    api`INSERT INTO accounts.clients (name, email, plan) VALUES ('x', 'x@y.z', 'pro')`,
    api`DELETE FROM meter.ledger`,
    api`SELECT * FROM accounts.api_keys`,
  ]) {
    await t.rejects(write, /permission denied/);
  }
});
