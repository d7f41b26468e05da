// How matches are stored (docs/saved-searches.md#matching): one saved.match_records row per record an import brought
// into some searches, with their ids; one saved.search_matches row per (search, import) with its match ids. A page of
// the cursor reads only the search's rows it shows, however many imports matched it before.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import { FAST, api } from '../webhooks/helpers.ts';
import { importList } from './helpers.ts';

const ctx = await buildTestApp(t, FAST);
const { db } = ctx;
const sql = db.sql;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

t.test('one row per record with its searches, one row per search and import', async (t) => {
  const { key } = await ctx.newClient('lead_feed');
  const m = api(ctx, key);
  const post = async (name: string, params: Record<string, string>) =>
    (await m.post('/v1/saved-searches', { name, resource: 'tax_delinquencies', params })).json().data.id as string;
  const all = await post('all', { county: 'union' });
  const over = await post('over 500', { county: 'union', min_due: '500' });
  const load = await importList(
    db,
    'union',
    2070,
    [100, 400, 600, 900].map((due, i) => ({ parcel: `ST-${i}`, due })),
  );
  const records = await sql<{ due: string; searches: string[] }[]>`
    SELECT (r.delinquency).total_due::text AS due, ARRAY(SELECT saved.public_id(x) FROM unnest(r.search_ids) x ORDER BY 1) AS searches
      FROM saved.match_records r WHERE r.load_id = ${load.loadId} ORDER BY r.id`;
  t.same(
    records.map((r) => [r.due, r.searches]),
    [
      ['100.00', [all]],
      ['400.00', [all]],
      ['600.00', [all, over].sort()],
      ['900.00', [all, over].sort()],
    ],
    'each record once, with the searches it entered',
  );
  const segments = await sql<{ search: string; n: number }[]>`
    SELECT saved.public_id(search_id) AS search, cardinality(match_ids) AS n
      FROM saved.search_matches WHERE load_id = ${load.loadId} ORDER BY 2`;
  t.same(
    segments.map((s) => [s.search, s.n]),
    [
      [over, 2],
      [all, 4],
    ],
    "each search's match ids of the import in one row",
  );
});

t.test('a page reads only the rows of the imports it shows', async (t) => {
  const { key } = await ctx.newClient('lead_feed');
  const m = api(ctx, key);
  const s = (
    await m.post('/v1/saved-searches', { name: 'holmes', resource: 'tax_delinquencies', params: { county: 'holmes' } })
  ).json().data.id as string;
  // twelve imports of five matches each: twelve rows of the search in saved.search_matches
  for (let year = 2050; year < 2062; year++) {
    await importList(
      db,
      'holmes',
      year,
      Array.from({ length: 5 }, (_, i) => ({ parcel: `PG-${year}-${i}`, due: 100 + i })),
    );
  }
  const pages: string[][] = [];
  for (let since = '0'; ;) {
    const page = (await m.get(`/v1/saved-searches/${s}/matches?since=${since}&limit=5`)).json();
    pages.push(page.data.map((x: { cursor: string }) => x.cursor));
    if (!page.has_more) break;
    since = page.next_cursor;
  }
  const cursors = pages.flat();
  t.equal(cursors.length, 60, 'every match');
  t.same(
    cursors.map(Number),
    [...cursors.map(Number)].sort((a, b) => a - b),
    'in cursor order',
  );
  t.equal(new Set(cursors).size, 60, 'none twice');

  // the seventh page from the sixth page's last cursor: the index reads the search's seventh row and stops
  const since = pages[5]!.at(-1)!;
  // (a test database's table is small enough to scan whole: as for the other hot reads, seqscan is off)
  const [plan] = await sql.begin(async (tx) => {
    await tx`SET LOCAL enable_seqscan = off`;
    return tx<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>`
      EXPLAIN (ANALYZE, FORMAT JSON) SELECT id FROM saved.match_ids_after(${s.slice(3)}::uuid, ${since}::bigint, 5)`;
  });
  const scans = nodes(plan!['QUERY PLAN'][0].Plan).filter((n) => n['Relation Name'] === 'search_matches');
  t.equal(scans.length, 1, 'one read of saved.search_matches');
  t.match(scans[0]!['Node Type'], /Index/, 'through its index');
  t.ok(scans[0]!['Actual Rows'] * scans[0]!['Actual Loops'] <= 2, "at most the page's rows of the twelve");
  const ids = await sql<{ id: string }[]>`
    SELECT id::text FROM saved.match_ids_after(${s.slice(3)}::uuid, ${since}::bigint, 5)`;
  t.same(
    ids.map((r) => r.id),
    pages[6],
    'the page the API gave',
  );
});
