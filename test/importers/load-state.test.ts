// `make load-data` (scripts/load-state.ts) on a small generated state: into an empty database it is a bulk first
// load (secondary indexes dropped first, built once at the end with identical definitions, parcels rewritten in
// spatial order) and the precomputed autocomplete built once after them, also when an import fails half way; into a
// database that has parcels it keeps the indexes; `make db` builds what a killed load left listed.
import t from 'tap';
import { mkdtempSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../helpers/db.ts';
import { generateState } from '../../scripts/generate/profiles/state.ts';
import { loadState } from '../../scripts/load-state.ts';
import { setupDatabase } from '../../scripts/db-setup.ts';
import { BULK_TABLES, deferIndexes } from '../../src/importers/deferred-indexes.ts';

const db = await createTestDatabase();
t.teardown(() => db.drop());
const sql = db.sql;
const out = mkdtempSync(join(tmpdir(), 'load-state-test-'));
const quiet = () => {};
const summary = await generateState({ parcels: 2000, seed: 'load-state', out, jobs: 1, log: quiet });
const COUNTIES = ['alachua', 'baker', 'bay'];
const expected = summary.counties.filter((c) => COUNTIES.includes(c.slug));
const lines: string[] = [];
const load = (jobs = 2) =>
  loadState(out, { databaseUrl: db.ownerUrl, counties: COUNTIES, jobs, log: (l) => lines.push(l) });

const indexes = async () =>
  (
    await sql<{ def: string }[]>`
      SELECT pg_get_indexdef(indexrelid) AS def FROM pg_index
       WHERE indrelid = ANY (${[...BULK_TABLES]}::regclass[]) ORDER BY 1`
  ).map((r) => r.def);
const pending = async () => (await sql`SELECT index_name FROM ingest.deferred_indexes`).length;
/** The precomputed autocomplete (both tables) as one digest and a row count. */
const TYPEAHEAD = `
  SELECT md5(coalesce(string_agg(x, '|' ORDER BY x), '')) AS digest, count(*)::int AS rows
    FROM (SELECT format('%s %s %s %s %s %s', word, county_id, ids, ranks, scores, by_address) AS x
            FROM core.typeahead_prefixes
          UNION ALL
          SELECT format('%s %s %s', word, terms, qualities) FROM core.typeahead_readings) t`;
type Typeahead = { digest: string; rows: number };
const typeahead = async () => ((await sql.unsafe(TYPEAHEAD)) as unknown as Typeahead[])[0]!;
/** The same computed from scratch, in a transaction rolled back. */
const rebuilt = async () => {
  let result: Typeahead | undefined;
  await sql
    .begin(async (tx) => {
      await tx`SELECT search.typeahead_rebuild()`;
      result = ((await tx.unsafe(TYPEAHEAD)) as unknown as Typeahead[])[0];
      throw new Error('rolled back');
    })
    .catch((err: Error) => {
      if (err.message !== 'rolled back') throw err;
    });
  return result;
};

const all = await indexes();
const [{ secondary }] = await sql<[{ secondary: number }]>`
  SELECT count(*)::int AS secondary FROM pg_index i
   WHERE i.indrelid = ANY (${[...BULK_TABLES]}::regclass[]) AND NOT i.indisunique`;
await sql`TRUNCATE core.parcels, core.sales, core.tax_delinquencies CASCADE`;

t.test('into an empty database: indexes deferred, then built once with the same definitions', async (t) => {
  t.ok(secondary >= 20, `the big tables have their secondary indexes (${secondary})`);
  const totals = await load();
  t.equal(totals.deferredIndexes, secondary, 'every non-unique index was deferred');
  t.match(lines[0], /^bulk first load: \d+ secondary indexes dropped/);
  t.ok(
    lines.some((l) => /^built \d+ deferred indexes in/.test(l)),
    'a line per build and a total',
  );
  t.same(await indexes(), all, 'the same index definitions as before');
  t.equal(await pending(), 0, 'nothing left listed');
  t.ok(
    lines.some((l) => /^wrote core\.parcels in the order of (core\.)?parcels_geom_idx in/.test(l)),
    'parcels rewritten in spatial order',
  );
  const clustered = await sql`
    SELECT i.indexrelid::regclass::text AS name FROM pg_index i WHERE i.indrelid = 'core.parcels'::regclass AND i.indisclustered`;
  t.same(
    clustered.map((r) => r.name),
    ['core.parcels_geom_idx'],
    'CLUSTER recorded, so a later plain CLUSTER core.parcels keeps the order',
  );
  const [visibility] = await sql<[{ all_visible: number; pages: number }]>`
    SELECT relallvisible AS all_visible, relpages AS pages FROM pg_class WHERE oid = 'core.parcels'::regclass`;
  t.equal(visibility.all_visible, visibility.pages, 'vacuumed after the rewrite: index-only counts skip the heap');
  const [{ parcels }] = await sql<[{ parcels: number }]>`SELECT count(*)::int AS parcels FROM core.parcels`;
  t.equal(parcels, totals.parcels);
  t.equal(
    totals.parcels,
    expected.reduce((n, c) => n + c.parcels, 0),
  );
  const [vocabulary] = await sql<[{ wrong: number }]>`
    SELECT count(*)::int AS wrong FROM core.parcel_terms v
      FULL JOIN (SELECT t, count(*)::int AS n FROM core.parcels, LATERAL (SELECT DISTINCT unnest(search_terms)) u(t)
                  GROUP BY t) x ON x.t = v.term
     WHERE v.parcels IS DISTINCT FROM x.n`;
  t.equal(vocabulary.wrong, 0, 'two lanes merging side by side kept the word counts exact');
  const plan = await sql.begin(async (tx) => {
    await tx`SET LOCAL enable_seqscan = off`; // a table this small might be read whole; the index must be usable
    return tx<{ 'QUERY PLAN': string }[]>`EXPLAIN SELECT id FROM core.parcels WHERE search_terms @> ARRAY['SMITH']`;
  });
  const [checkXmin] = await sql<[{ n: number }]>`
    SELECT count(*)::int AS n FROM pg_index WHERE indrelid = ANY (${[...BULK_TABLES]}::regclass[]) AND indcheckxmin`;
  t.equal(checkXmin.n, 0, 'no rebuilt index is hidden from older snapshots (tables vacuumed before the builds)');
  t.match(
    plan.map((r) => r['QUERY PLAN']).join('\n'),
    /parcels_search_terms_idx/,
    'the rebuilt GIN index serves searches',
  );
  t.ok(
    lines.some((l) => /^built the precomputed autocomplete in/.test(l)),
    'the autocomplete built once, after the indexes',
  );
  const built = await typeahead();
  t.ok(built.rows > 100, `the precomputed autocomplete is filled (${built.rows} rows)`);
  t.same(built, await rebuilt(), 'and equals the tables computed from scratch');
});

t.test('into a database that has parcels: nothing deferred', async (t) => {
  lines.length = 0;
  const totals = await load(1);
  t.equal(totals.deferredIndexes, 0);
  t.notOk(lines.some((l) => l.startsWith('bulk first load')));
  t.same(await indexes(), all);
});

t.test('a failing bulk load still builds every index back', async (t) => {
  await sql`TRUNCATE core.parcels, core.sales, core.tax_delinquencies CASCADE`;
  const nal = join(out, expected[1]!.files.nal);
  renameSync(nal, `${nal}.gone`);
  t.teardown(() => renameSync(`${nal}.gone`, nal));
  await t.rejects(load(), /import failed: .*NAL/);
  t.same(await indexes(), all, 'indexes restored after the failure');
  t.equal(await pending(), 0);
});

t.test('a killed bulk load: `make db` (setupDatabase) builds what is still listed', async (t) => {
  const n = await deferIndexes(sql);
  t.equal(n, secondary);
  t.equal(await pending(), secondary, 'definitions kept while the indexes are gone');
  t.ok((await indexes()).length < all.length);
  t.ok((await typeahead()).rows > 100, 'the autocomplete was built before the deferral');
  await sql`UPDATE core.parcels SET owner_name = 'QZX ' || owner_name WHERE id = (SELECT min(id) FROM core.parcels)`;
  t.equal(
    (await typeahead()).rows,
    0,
    'a write while indexes are deferred empties the autocomplete, so it is not left stale and looking built',
  );
  await setupDatabase({ url: db.ownerUrl });
  t.same(await indexes(), all);
  t.equal(await pending(), 0);
  const built = await typeahead();
  t.ok(built.rows > 100, 'the autocomplete built with them');
  t.same(built, await rebuilt(), 'from the parcels as they are (the re-worded owner included)');
  const [qzx] = await sql<[{ n: number }]>`SELECT count(*)::int AS n FROM core.typeahead_prefixes WHERE word = 'QZX'`;
  t.ok(qzx.n > 0, 'QZX, a word written while deferred, is suggested');
});
