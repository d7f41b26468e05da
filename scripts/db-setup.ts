// Database setup, idempotent: create the database, migrate, re-apply sql/, and optionally load fixtures
// and make it a template. Used by `make run`, `make test` and `make bench`.
//   tsx scripts/db-setup.ts [--database NAME] [--fixtures] [--template] [--quiet]
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { runner } from 'node-pg-migrate';
import { ownerDatabaseUrl, withDatabase } from '../src/db-url.ts';
import { restoreIndexes } from '../src/importers/deferred-indexes.ts';

const ROOT = new URL('..', import.meta.url).pathname;
/** Order matters: core helpers first, api is rebuilt from scratch, grants last. */
const SQL_DIRS = ['core', 'accounts', 'meter', 'ingest', 'api', 'search', 'site', 'webhooks', 'billing', 'saved'];

export async function setupDatabase(opts: {
  url: string;
  fixtures?: boolean;
  template?: boolean;
  log?: (m: string) => void;
}) {
  const log = opts.log ?? (() => {});
  const dbName = new URL(opts.url).pathname.slice(1);
  const maintenance = postgres(withDatabase(opts.url, 'postgres'), { max: 1, onnotice: () => {} });
  try {
    const [exists] = await maintenance`SELECT 1 FROM pg_database WHERE datname = ${dbName}`;
    if (opts.template && exists) {
      await maintenance`UPDATE pg_database SET datistemplate = false WHERE datname = ${dbName}`;
      await maintenance`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${dbName} AND pid <> pg_backend_pid()`;
      await maintenance.unsafe(`DROP DATABASE ${quoteIdent(dbName)}`);
    }
    if (!exists || opts.template) {
      await maintenance.unsafe(`CREATE DATABASE ${quoteIdent(dbName)}`);
      log(`created database ${dbName}`);
    }
  } finally {
    await maintenance.end();
  }

  await runner({
    databaseUrl: opts.url,
    dir: join(ROOT, 'migrations'),
    migrationsTable: 'pgmigrations',
    direction: 'up',
    log: () => {},
    checkOrder: true,
  });
  log('migrated');

  const sql = postgres(opts.url, { max: 1, onnotice: () => {} });
  try {
    await applySql(sql);
    log('applied sql/');
    await restoreIndexes(sql, log); // left by a bulk first load that was killed half way
    const [typeahead] = await sql<{ built: boolean }[]>`SELECT search.typeahead_build_missing() AS built`;
    if (typeahead?.built) log('built the precomputed autocomplete (sql/search/autocomplete.sql)');
    if (opts.fixtures) {
      const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM core.parcels`;
      const n = row?.n ?? 0;
      if (n === 0) {
        await sql.unsafe(readFileSync(join(ROOT, 'fixtures', 'fixtures.sql'), 'utf8'));
        await sql.unsafe(readFileSync(join(ROOT, 'fixtures', 'history.sql'), 'utf8')); // roll history (fixtures/README.md)
        await sql`ANALYZE`;
        log('loaded fixtures');
      }
    }
  } finally {
    await sql.end();
  }
  if (opts.template) {
    const admin = postgres(withDatabase(opts.url, 'postgres'), { max: 1, onnotice: () => {} });
    await admin`UPDATE pg_database SET datistemplate = true WHERE datname = ${dbName}`;
    await admin.end();
  }
}

/**
 * Re-applies every repeatable object in one transaction: api and search are dropped and rebuilt, so nothing stale
 * survives. Function bodies are checked when called, not when created (as pg_dump restores them): api's entry points
 * call search's helpers, which use api's row types.
 */
export async function applySql(sql: postgres.Sql) {
  await sql.begin(async (tx) => {
    await tx.unsafe(`SET LOCAL check_function_bodies = off;
      DROP SCHEMA IF EXISTS api CASCADE; DROP SCHEMA IF EXISTS search CASCADE; CREATE SCHEMA api; CREATE SCHEMA search;`);
    // site holds only the account site's functions (its tables live in accounts): rebuilt too, unless a table has
    // appeared in it, which a rebuild would drop
    await tx.unsafe(`DO $$ BEGIN
        IF NOT EXISTS (SELECT FROM pg_class WHERE relnamespace = to_regnamespace('site') AND relkind IN ('r', 'p')) THEN
          DROP SCHEMA IF EXISTS site CASCADE; CREATE SCHEMA site;
        END IF;
      END $$; CREATE SCHEMA IF NOT EXISTS site;`);
    for (const dir of SQL_DIRS) {
      const path = join(ROOT, 'sql', dir);
      if (!existsSync(path)) continue;
      for (const file of readdirSync(path)
        .filter((f) => f.endsWith('.sql'))
        .sort()) {
        await tx.unsafe(readFileSync(join(path, file), 'utf8'));
      }
    }
    await tx.unsafe(readFileSync(join(ROOT, 'sql', 'grants.sql'), 'utf8'));
  });
}

function quoteIdent(name: string) {
  return `"${name.replace(/"/g, '""')}"`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      database: { type: 'string' },
      fixtures: { type: 'boolean', default: false },
      template: { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
    },
  });
  const base = ownerDatabaseUrl(process.env);
  const url = values.database ? withDatabase(base, values.database) : base;
  setupDatabase({
    url,
    fixtures: values.fixtures,
    template: values.template,
    log: values.quiet ? undefined : (m) => console.log(`db-setup: ${m}`),
  }).catch((err: Error) => {
    console.error(`db-setup: ${err.message}`);
    process.exit(1);
  });
}
