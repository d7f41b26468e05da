// bench/saved-searches.ts --in-place: the bench runs in a database it cannot copy (the full state) and leaves it as
// it found it, whether it ends well, refuses to start, or was killed and the next run cleans up after it. "As it
// found it": every table's content (schemas of the project), compared row for row before and after.
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import type postgres from 'postgres';
import { createTestDatabase } from '../helpers/db.ts';
import { spawnChild } from '../helpers/processes.ts';

const BENCH = new URL('../../bench/saved-searches.ts', import.meta.url).pathname;

/** Every table of the project's schemas: its row count and a digest of its rows. */
async function snapshot(sql: postgres.Sql) {
  const tables = await sql<{ name: string }[]>`
    SELECT format('%I.%I', schemaname, relname) AS name FROM pg_stat_user_tables
     WHERE schemaname NOT IN ('public', 'topology', 'tiger', 'tiger_data') ORDER BY 1`;
  const state: Record<string, string> = {};
  for (const { name } of tables) {
    const [r] = await sql.unsafe<{ n: number; digest: string }[]>(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS digest FROM ${name} x`,
    );
    state[name] = `${r!.n} ${r!.digest}`;
  }
  return state;
}

function bench(t: Test, database: string, report: string) {
  const child = spawnChild(t, 'nice', [
    '-n',
    '19',
    process.execPath,
    '--import',
    'tsx',
    BENCH,
    ...['--records', '300', '--searches', '40', '--rounds', '1', '--in-place', database, '--report', report],
  ]);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exit = once(child, 'exit').then(([code]) => ({ code: code as number | null, out }));
  return { child, exit, output: () => out };
}

t.test('a run in place measures, checks delivery, and leaves every table as it was', async (t) => {
  const db = await createTestDatabase();
  t.teardown(db.drop);
  const before = await snapshot(db.sql);
  const report = join(mkdtempSync(join(tmpdir(), 'bench-in-place-')), 'report.md');
  const { code, out } = await bench(t, db.name, report).exit;
  t.equal(code, 0, out);
  const text = readFileSync(report, 'utf8');
  t.match(text, `--in-place ${db.name}`);
  t.match(text, /\(missing 0, extra 0\)/);
  const [pairs] = /exhaustive pairs[^*]*\*\*(\d+)\*\*/.exec(text)!.slice(1);
  t.ok(Number(pairs) > 0, 'the fresh year made matches');
  t.same(await snapshot(db.sql), before);
});

t.test('a run refuses a database that holds the bench years, and changes nothing', async (t) => {
  const db = await createTestDatabase();
  t.teardown(db.drop);
  await db.sql`SELECT ingest.record_delinquency_source((SELECT id FROM core.counties WHERE slug = 'baker'), 2019::smallint, 'x', NULL)`;
  const before = await snapshot(db.sql);
  const report = join(mkdtempSync(join(tmpdir(), 'bench-in-place-')), 'report.md');
  const { code, out } = await bench(t, db.name, report).exit;
  t.not(code, 0);
  t.match(out, /refusing to run in place/);
  t.same(await snapshot(db.sql), before);
});

t.test('a run killed mid-way is cleaned up by the next run', async (t) => {
  const db = await createTestDatabase();
  t.teardown(db.drop);
  const before = await snapshot(db.sql);
  const report = join(mkdtempSync(join(tmpdir(), 'bench-in-place-')), 'report.md');
  const first = bench(t, db.name, report);
  // killed once its first list is loaded: its client, searches, records and load are in the database
  while (!/first load .* done/.test(first.output()) && first.child.exitCode === null) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  first.child.kill('SIGKILL');
  await first.exit;
  const [left] = await db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM core.tax_delinquencies WHERE tax_year = 2019`;
  t.ok(left!.n > 0, 'the killed run left its records');
  const { code, out } = await bench(t, db.name, report).exit;
  t.equal(code, 0, out);
  t.match(out, /removing what an earlier in-place run left/);
  t.same(await snapshot(db.sql), before);
});
