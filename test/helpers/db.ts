// Each test file gets its own database, cloned from the template `make test` builds once (migrated, sql/
// applied, fixtures loaded), so files run in parallel and may write freely. It is dropped at the test's teardown, or
// when the test process dies first (a test killed by tap's timeout).
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { ownerDatabaseUrl, withDatabase, withRole } from '../../src/db-url.ts';
import { whenThisProcessEnds } from './processes.ts';

export const TEMPLATE_DB = process.env.TEST_TEMPLATE_DB || 'florida_test_template';

export interface TestDatabase {
  name: string;
  ownerUrl: string;
  apiUrl: string;
  /** Owner connection, for arranging data the API role may not write. */
  sql: postgres.Sql;
  drop: () => Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const base = ownerDatabaseUrl(process.env);
  const name = `test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const dropping = whenThisProcessEnds('psql', [
    withDatabase(base, 'postgres'),
    '--quiet',
    '--command',
    `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`,
  ]);
  const admin = postgres(withDatabase(base, 'postgres'), { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE "${name}" TEMPLATE "${TEMPLATE_DB}"`);
  } finally {
    await admin.end();
  }
  const ownerUrl = withDatabase(base, name);
  const sql = postgres(ownerUrl, { max: 2, onnotice: () => {} });
  return {
    name,
    ownerUrl,
    apiUrl: withRole(ownerUrl, 'api_reader'),
    sql,
    drop: async () => {
      await sql.end();
      await dropping.now();
    },
  };
}
