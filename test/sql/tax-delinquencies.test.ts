// api.* tax-delinquency functions called directly: filters, sorts, paging, NULLs, the unknown bucket, validation.
// Alachua (fixtures load nothing there) holds this file's own records, so the assertions do not move with fixtures.
import t from 'tap';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/db.ts';
import { arrangeAlachua } from '../helpers/delinquencies.ts';

const db = await createTestDatabase();
t.teardown(() => db.drop());
const sql = db.sql;

const [A1, A2, A3, A4, A5, A6] = await arrangeAlachua(sql);
const ALACHUA = ['alachua'];

type Hit = { id: string; [k: string]: unknown };
const search = (args: Record<string, unknown> = {}) => {
  const a: Record<string, unknown> = { p_county: ALACHUA, ...args };
  return sql<Hit[]>`
    SELECT * FROM api.search_tax_delinquencies(
      p_county => ${a.p_county as string[] | null}::text[], p_tax_year => ${(a.p_tax_year as number) ?? null}::int,
      p_status => ${(a.p_status as string) ?? null}::text, p_min_due => ${(a.p_min_due as number) ?? null}::numeric,
      p_max_due => ${(a.p_max_due as number) ?? null}::numeric, p_parcel_id => ${(a.p_parcel_id as string) ?? null}::text,
      p_owner => ${(a.p_owner as string) ?? null}::text, p_vendor => ${(a.p_vendor as string) ?? null}::text,
      p_certificate_number => ${(a.p_certificate_number as string) ?? null}::text,
      p_sort => ${(a.p_sort as string) ?? null}::text, p_limit => ${(a.p_limit as number) ?? 25}::int,
      p_offset => ${(a.p_offset as number) ?? 0}::int)`;
};
const count = async (args: Record<string, unknown> = {}) => {
  const a: Record<string, unknown> = { p_county: ALACHUA, ...args };
  const [row] = await sql<{ n: number }[]>`
    SELECT api.count_tax_delinquencies_matching(
      p_county => ${a.p_county as string[] | null}::text[], p_tax_year => ${(a.p_tax_year as number) ?? null}::int,
      p_status => ${(a.p_status as string) ?? null}::text, p_min_due => ${(a.p_min_due as number) ?? null}::numeric,
      p_max_due => ${(a.p_max_due as number) ?? null}::numeric, p_parcel_id => ${(a.p_parcel_id as string) ?? null}::text,
      p_owner => ${(a.p_owner as string) ?? null}::text, p_vendor => ${(a.p_vendor as string) ?? null}::text,
      p_certificate_number => ${(a.p_certificate_number as string) ?? null}::text) AS n`;
  return row!.n;
};
const ids = (rows: Hit[]) => rows.map((r) => r.id);

t.test('every api object of this surface has a COMMENT', async (t) => {
  const missing = await sql`
    SELECT p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = 'api' AND p.proname ~ 'tax_delinquenc' AND obj_description(p.oid, 'pg_proc') IS NULL
    UNION ALL
    SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'api' AND c.relname ~ 'delinquenc' AND c.relkind IN ('v', 'r')
       AND obj_description(c.oid, 'pg_class') IS NULL
    UNION ALL
    SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
     WHERE n.nspname = 'api' AND t.typname = 'delinquency_hit' AND obj_description(t.oid, 'pg_type') IS NULL`;
  t.same(missing, [], 'no uncommented function, view or type');
  const [{ n }] = (await sql`SELECT count(*)::int AS n FROM pg_proc p JOIN pg_namespace s ON s.oid = p.pronamespace
                              WHERE s.nspname = 'api' AND p.proname ~ 'tax_delinquenc'`) as unknown as [{ n: number }];
  t.ok(n >= 8, `found ${n} functions`);
});

t.test('a hit has the DelinquencyHit fields with JS numbers, YYYY-MM-DD dates and text ids', async (t) => {
  const [hit] = await search({ p_certificate_number: 'AL-2024-0001' });
  // payoff_today moves with the calendar: its arithmetic is test/certificates/'s
  t.same(
    { ...hit, payoff_today: typeof hit!.payoff_today },
    {
      id: A1,
      county_slug: 'alachua',
      county_parcel_id: '01234-005-00',
      tax_year: 2024,
      status: 'certificate_sold',
      delinquent_amount: 1000.1,
      total_due: 1500.5,
      certificate_number: 'AL-2024-0001',
      certificate_sale_date: '2025-06-01',
      owner_name: 'SMITH, JOHN A',
      site_address_full: '100 MAIN ST, GAINESVILLE',
      source_vendor: 'LienHub',
      face_amount: 1200,
      certificate_holder: 'ACME CAPITAL LLC',
      certificate_interest_rate: 5.25,
      bid_rate: 5.25,
      deed_application_from: '2027-04-01',
      expires_on: '2032-06-01',
      payoff_today: 'number',
    },
  );
  const [empty] = await search({ p_status: 'unknown' });
  t.equal(empty!.id, A4);
  for (const k of Object.keys(hit!).filter((k) => !['id', 'county_slug', 'county_parcel_id', 'tax_year'].includes(k)))
    t.equal(empty![k], null, `${k} is null when unknown`);
});

t.test('sorts: due_desc is the default, NULLs last, ties by id', async (t) => {
  t.same(ids(await search()), [A6, A1, A3, A2, A5, A4], 'default');
  t.same(ids(await search({ p_sort: 'due_desc' })), [A6, A1, A3, A2, A5, A4], 'due_desc');
  t.same(ids(await search({ p_sort: 'due_asc' })), [A5, A2, A1, A3, A6, A4], 'due_asc');
  t.same(ids(await search({ p_sort: 'year_newest' })), [A1, A3, A4, A5, A2, A6], 'year_newest');
});

t.test('each filter, and count_tax_delinquencies_matching agrees with it', async (t) => {
  const cases: [string, Record<string, unknown>, string[]][] = [
    ['tax_year', { p_tax_year: 2023 }, [A2]],
    ['status, case-insensitive', { p_status: 'DELINQUENT' }, [A6, A3]],
    ["status 'unknown' is the no-status bucket", { p_status: 'unknown' }, [A4]],
    ['status with no match', { p_status: 'open' }, []],
    ['min_due inclusive', { p_min_due: 1500.5 }, [A6, A1, A3]],
    ['max_due inclusive', { p_max_due: 800 }, [A2, A5]],
    ['min_due = max_due', { p_min_due: 800, p_max_due: 800 }, [A2]],
    ['parcel_id, punctuation-insensitive', { p_parcel_id: '0123400500' }, [A1, A2]],
    ['parcel_id, other punctuation and case', { p_parcel_id: ' 01234.005.00 ' }, [A1, A2]],
    ['owner contains, case-insensitive', { p_owner: 'smith' }, [A1, A2]],
    ['owner with punctuation', { p_owner: "o'neil smythe" }, [A3]],
    ['owner with odd Unicode', { p_owner: 'José' }, [A5]],
    ['vendor, case-insensitive exact', { p_vendor: 'realtaxlien' }, [A5]],
    ['certificate_number', { p_certificate_number: 'AL-2023-0042' }, [A2]],
    ['combined', { p_tax_year: 2024, p_vendor: 'LienHub', p_min_due: 1000 }, [A1, A3]],
    ['county list with another county', { p_county: ['alachua', 'orange'], p_tax_year: 2022 }, [A6]],
    ['county slug case-insensitive', { p_county: ['ALACHUA'], p_tax_year: 2022 }, [A6]],
    ['a county with no feed', { p_county: ['orange'] }, []],
  ];
  for (const [name, args, expected] of cases) {
    t.same(ids(await search(args)), expected, name);
    t.equal(await count(args), expected.length, `${name}: count`);
  }
  const all = await count({ p_county: null });
  const [{ n }] = (await sql`SELECT count(*)::int AS n FROM core.tax_delinquencies`) as unknown as [{ n: number }];
  t.equal(all, n, 'no county is statewide');
  t.equal(await count({ p_county: [] }), n, 'an empty county list is statewide too');
});

t.test('paging: limit and offset slice the sorted list; the count stays exact', async (t) => {
  t.same(ids(await search({ p_limit: 2 })), [A6, A1]);
  t.same(ids(await search({ p_limit: 2, p_offset: 2 })), [A3, A2]);
  t.same(ids(await search({ p_limit: 2, p_offset: 5 })), [A4]);
  t.same(ids(await search({ p_offset: 100 })), []);
  t.equal(await count(), 6);
});

t.test('bad input raises 22023 naming the parameter', async (t) => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ p_county: ['atlantis'] }, /county.*'atlantis'/],
    [{ p_county: ['x'.repeat(41)] }, /county/],
    [{ p_county: [''] }, /county/],
    [{ p_tax_year: 1800 }, /tax_year/],
    [{ p_status: 'x'.repeat(41) }, /status/],
    [{ p_min_due: 10, p_max_due: 5 }, /min_due.*max_due/],
    [{ p_parcel_id: '---' }, /parcel_id/],
    [{ p_parcel_id: 'x'.repeat(101) }, /parcel_id/],
    [{ p_owner: '!!!' }, /owner/],
    [{ p_owner: 'x'.repeat(201) }, /owner/],
    [{ p_vendor: 'x'.repeat(81) }, /vendor/],
    [{ p_certificate_number: 'x'.repeat(81) }, /certificate_number/],
    [{ p_sort: 'price' }, /sort/],
    [{ p_limit: 0 }, /limit/],
    [{ p_limit: 501 }, /limit/],
    [{ p_offset: -1 }, /offset/],
  ];
  for (const [args, message] of cases) {
    await t.rejects(search(args), { code: '22023', message }, JSON.stringify(args));
  }
  await t.rejects(count({ p_min_due: 10, p_max_due: 5 }), { code: '22023' }, 'count validates too');
  await t.rejects(sql`SELECT * FROM api.search_tax_delinquencies(p_min_due => 'NaN')`, {
    code: '22023',
    message: /min_due/,
  });
  await t.rejects(sql`SELECT * FROM api.search_tax_delinquencies(p_max_due => 'Infinity')`, { code: '22023' });
});

t.test('injection-shaped input is data, never SQL', async (t) => {
  for (const v of ["x' OR '1'='1", "'; DROP TABLE core.tax_delinquencies; --", '%', '_', '\\', '$1']) {
    t.same(await search({ p_status: v }), [], `status ${v}`);
    t.same(await search({ p_vendor: v }), [], `vendor ${v}`);
    t.same(await search({ p_certificate_number: v }), [], `certificate ${v}`);
  }
  t.same(ids(await search({ p_owner: "x' OR 1=1 --" })), [], 'owner');
  t.equal((await count({ p_county: null })) > 0, true, 'table still there');
});

t.test('get_tax_delinquencies_by_parcel: punctuation-insensitive, newest year first, county scope', async (t) => {
  const byParcel = (parcel: string | null, county: string | null = null, limit = 25, offset = 0) =>
    sql<Hit[]>`SELECT * FROM api.get_tax_delinquencies_by_parcel(p_parcel_id => ${parcel}::text,
                 p_county => ${county}::text, p_limit => ${limit}::int, p_offset => ${offset}::int)`;
  for (const p of ['01234-005-00', '0123400500', '01234 005 00', '01234.005.00', '01234/005/00']) {
    t.same(ids(await byParcel(p)), [A1, A2], p);
  }
  t.same(ids(await byParcel('0123400500', 'Alachua')), [A1, A2], 'county scope');
  t.same(ids(await byParcel('0123400500', 'orange')), [], 'a county with no feed: no rows');
  t.same(ids(await byParcel('99999999')), [], 'a parcel current on taxes: no rows');
  t.same(ids(await byParcel('0123400500', null, 1, 1)), [A2], 'paging');
  t.same(ids(await byParcel('123400500')), [], 'leading zeros are kept');
  await t.rejects(byParcel(null), { code: '22023', message: /parcel_id/ });
  await t.rejects(byParcel('0123400500', 'atlantis'), { code: '22023', message: /county/ });
});

t.test('count_tax_delinquencies: descending counts, ties by status, NULL as unknown', async (t) => {
  const counts = (county: string | null, year: number | null = null) =>
    sql`SELECT * FROM api.count_tax_delinquencies(p_county => ${county}::text, p_tax_year => ${year}::int)`;
  t.same(
    [...(await counts('alachua'))],
    [
      { status: 'delinquent', count: 2 },
      { status: 'certificate_sold', count: 1 },
      { status: 'redeemed', count: 1 },
      { status: 'struck', count: 1 },
      { status: 'unknown', count: 1 },
    ],
  );
  t.same(
    [...(await counts('alachua', 2024))],
    [
      { status: 'certificate_sold', count: 1 },
      { status: 'delinquent', count: 1 },
      { status: 'struck', count: 1 },
      { status: 'unknown', count: 1 },
    ],
  );
  t.same([...(await counts('orange'))], [], 'a county with no feed: no rows');
  t.same([...(await counts('alachua', 1999))], [], 'a year with nothing');
  const statewide = await counts(null);
  const [{ n }] = (await sql`SELECT count(*)::int AS n FROM core.tax_delinquencies`) as unknown as [{ n: number }];
  t.equal(
    statewide.reduce((s, r) => s + (r.count as number), 0),
    n,
    'statewide counts add up to every record',
  );
  const ordered = [...statewide].sort((a, b) => b.count - a.count || (a.status < b.status ? -1 : 1));
  t.same([...statewide], ordered, 'statewide order is count desc, status asc');
  t.equal(new Set(statewide.map((r) => r.status)).size, statewide.length, 'one row per status');
  await t.rejects(counts('atlantis'), { code: '22023', message: /county/ });
  await t.rejects(counts(null, 3000), { code: '22023', message: /tax_year/ });
});

t.test('sources: camelCase rows, filters, order, exact count, by county', async (t) => {
  type Src = Record<string, unknown>;
  const list = (a: {
    county?: string;
    vendor?: string;
    kind?: string;
    active?: boolean;
    limit?: number;
    offset?: number;
  }) =>
    sql<Src[]>`SELECT * FROM api.list_tax_delinquency_sources(p_county => ${a.county ?? null}::text,
                 p_vendor => ${a.vendor ?? null}::text, p_source_kind => ${a.kind ?? null}::text,
                 p_active => ${a.active ?? null}::boolean, p_limit => ${a.limit ?? 100}::int,
                 p_offset => ${a.offset ?? 0}::int)`;
  const total = async (a: { county?: string; vendor?: string; kind?: string; active?: boolean }) =>
    (
      await sql<{ n: number }[]>`SELECT api.count_tax_delinquency_sources(p_county => ${a.county ?? null}::text,
                 p_vendor => ${a.vendor ?? null}::text, p_source_kind => ${a.kind ?? null}::text,
                 p_active => ${a.active ?? null}::boolean) AS n`
    )[0]!.n;
  const rows = await list({ county: 'alachua' });
  t.same(
    rows.map((r) => r.taxYear),
    [2024, 2023, 2022],
    'newest tax year first',
  );
  t.same(rows[1], {
    id: rows[1]!.id,
    countyId: '1',
    countySlug: 'alachua',
    taxYear: 2023,
    vendor: 'Grant Street Group',
    saleUrl: 'https://alachua.lienhub.com',
    downloadUrl: 'https://example.test/2023.csv',
    sourceKind: 'bulk_download',
    requiresLogin: false,
    lastCheckedAt: '2024-07-02T00:00:00Z',
    lastSuccessAt: null,
    lastError: 'HTTP 503',
    active: false,
    notes: '',
    createdAt: '2024-01-01T00:00:00Z',
    updatedAt: '2024-07-02T00:00:00Z',
  });
  const cases: [Parameters<typeof list>[0], number[]][] = [
    [{ county: 'alachua', vendor: 'lienhub' }, [2024, 2022]],
    [{ county: 'alachua', vendor: 'STREET' }, [2023]],
    [{ county: 'alachua', kind: 'BULK_DOWNLOAD' }, [2023]],
    [{ county: 'alachua', active: true }, [2024, 2022]],
    [{ county: 'alachua', active: false }, [2023]],
    [{ county: 'alachua', vendor: '%' }, []],
    [{ county: 'orange' }, []],
    [{ county: 'alachua', limit: 1, offset: 1 }, [2023]],
  ];
  for (const [args, years] of cases) {
    t.same(
      (await list(args)).map((r) => r.taxYear),
      years,
      JSON.stringify(args),
    );
    if (args.limit === undefined) t.equal(await total(args), years.length, `${JSON.stringify(args)}: count`);
  }
  const all = await list({ limit: 500 });
  const names = await sql<{ slug: string }[]>`SELECT slug FROM core.counties ORDER BY name`;
  const order = new Map(names.map((c, i) => [c.slug, i]));
  for (let i = 1; i < all.length; i++) {
    const a = all[i - 1]!;
    const b = all[i]!;
    const ok =
      order.get(a.countySlug as string)! < order.get(b.countySlug as string)! ||
      (a.countySlug === b.countySlug && (a.taxYear as number) > (b.taxYear as number));
    t.ok(ok, `${a.countySlug} ${a.taxYear} before ${b.countySlug} ${b.taxYear}`);
  }
  t.equal(await total({}), all.length, 'statewide total');
  const byCounty = await sql<Src[]>`SELECT * FROM api.list_tax_delinquency_sources_by_county(p_county => 'ALACHUA')`;
  t.same(byCounty, rows, 'by county: the same rows, newest first');
  t.same([...(await sql`SELECT * FROM api.list_tax_delinquency_sources_by_county(p_county => 'atlantis')`)], []);
  await t.rejects(list({ county: 'atlantis' }), { code: '22023', message: /county/ });
  await t.rejects(list({ limit: 501 }), { code: '22023', message: /limit/ });
  await t.rejects(list({ offset: -1 }), { code: '22023', message: /offset/ });
  await t.rejects(list({ vendor: 'x'.repeat(81) }), { code: '22023', message: /vendor/ });
  await t.rejects(list({ kind: 'x'.repeat(41) }), { code: '22023', message: /source_kind/ });
  await t.rejects(total({ county: 'atlantis' }), { code: '22023', message: /county/ });
});

t.test('freshness: total, latest year, last ingest, last source success', async (t) => {
  const [f] = await sql`SELECT * FROM api.get_tax_delinquency_freshness()`;
  const [e] = await sql`
    SELECT count(*)::int AS total, max(tax_year)::int AS latest_tax_year,
           to_char(max(ingested_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS last_ingested_at,
           (SELECT to_char(max(last_success_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
              FROM core.tax_delinquency_sources) AS last_source_success_at
      FROM core.tax_delinquencies`;
  t.same(f, e);
  t.type(f!.total, 'number');
  t.ok((f!.total as number) >= 6);
  t.ok((f!.latest_tax_year as number) >= 2024);
});

t.test('the hot filters can be answered from an index (enable_seqscan off)', async (t) => {
  await sql.begin(async (tx) => {
    await tx`SET LOCAL enable_seqscan = off`;
    const plan = async (where: string) =>
      (await tx.unsafe(`EXPLAIN SELECT id FROM core.tax_delinquencies d WHERE ${where}`))
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    t.match(await plan(`d.owner_search LIKE '%SMITH%'`), /tax_delinquencies_owner_trgm_idx/, 'owner contains');
    t.match(await plan(`d.parcel_key = '0123400500'`), /tax_delinquencies_key_idx/, 'parcel key');
    t.notMatch(await plan(`d.county_id = ANY ('{1}') AND d.tax_year = 2024`), /Seq Scan/, 'county + year');
    t.notMatch(await plan(`d.county_id = 1 AND d.status IS NULL`), /Seq Scan/, 'county + unknown status');
    t.match(await plan(`d.certificate_number = 'AL-2024-0001'`), /certificate_idx/, 'certificate number');
    t.match(await plan(`lower(d.source_vendor) = 'lienhub'`), /vendor_idx/, 'vendor');
    // the default sort's page straight from an index, no sort of the matches (one county as the search writes it)
    await tx`SET LOCAL enable_sort = off`;
    const page = async (where: string) =>
      (
        await tx.unsafe(`EXPLAIN SELECT id FROM core.tax_delinquencies d WHERE ${where}
                         ORDER BY d.total_due DESC NULLS LAST, d.id LIMIT 25`)
      )
        .map((r) => r['QUERY PLAN'])
        .join('\n');
    const oneCounty = `(cardinality('{1}'::smallint[]) = 1 AND d.county_id = ('{1}'::smallint[])[1])`;
    const withStatus = await page(`${oneCounty} AND d.tax_year = 2024 AND d.status = 'redeemed'`);
    t.match(withStatus, /county_(year_)?(status_)?due_idx/, 'county + year + status, by amount due');
    t.notMatch(withStatus, /Sort/);
    const withoutStatus = await page(`${oneCounty} AND d.tax_year = 2024`);
    t.match(withoutStatus, /county_(year_)?due_idx/, 'county + year, by amount due');
    t.notMatch(withoutStatus, /Sort/);
    const countyOnly = await page(oneCounty);
    t.match(countyOnly, /county_due_idx/, 'county alone, by amount due');
    t.notMatch(countyOnly, /Sort/);
  });
});

// A page's records are chosen by a query over core.tax_delinquencies alone, planned for each request; what a hit adds
// to its record (the county, the payoff) is the entry points' static statement, planned once a session. Computed in
// the query that chooses the page, the payoff weighed on the choice of plan (it made a county and status search walk
// the statewide amount-due index) and the joins doubled the planning of a search that runs in a third of a ms.
t.test("a page is chosen from the records alone: its query joins nothing and computes no hit's fields", async (t) => {
  type Node = { 'Node Type': string; 'Relation Name'?: string; Output?: string[]; Plans?: Node[] };
  const nodes = (n: Node): Node[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
  for (const [name, filter] of [
    ['county and status', `p_county => '{alachua}', p_status => 'certificate_sold'`],
    ['statewide', `p_min_due => 0`],
    ['several counties and a year', `p_county => '{alachua,broward}', p_tax_year => 2024`],
  ]) {
    const [page] = await sql.unsafe<{ q: string }[]>(`SELECT search.tax_delinquency_page_sql(
      search.tax_delinquency_filter_of(${filter}), 'due_desc', 25, 0) AS q`);
    const [row] = await sql.unsafe(`EXPLAIN (VERBOSE, FORMAT JSON) ${page!.q}`);
    const all = nodes((row!['QUERY PLAN'] as { Plan: Node }[])[0]!.Plan);
    const relations = [...new Set(all.flatMap((n) => (n['Relation Name'] ? [n['Relation Name']] : [])))];
    t.same(relations, ['tax_delinquencies'], `${name}: reads the records and nothing else`);
    t.notMatch(all.flatMap((n) => n.Output ?? []).join(' '), /certificate_payoff|slug/, `${name}: no hit field`);
  }
  const [hit] = await sql`SELECT payoff_today, county_slug FROM api.search_tax_delinquencies(
    p_county => '{alachua}', p_status => 'certificate_sold', p_limit => 1)`;
  t.match(hit, { county_slug: 'alachua', payoff_today: Number }, 'the entry point completes the hit');
});

t.test('status counts stay exact through inserts, status changes and deletes (trigger-maintained)', async (t) => {
  const fromTable = () => sql`
    SELECT county_id, tax_year, coalesce(status, 'unknown') AS status, count(*)::int AS records
      FROM core.tax_delinquencies GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;
  const fromCounts = () => sql`
    SELECT county_id, tax_year, status, records::int AS records
      FROM core.tax_delinquency_status_counts ORDER BY 1, 2, 3`;
  t.same(await fromCounts(), await fromTable(), 'agree after the fixtures and this file loaded');
  await sql.begin(async (tx) => {
    await tx`INSERT INTO core.tax_delinquencies (county_id, parcel_id, tax_year, status)
             VALUES (1, 'TRIG-1', 2019, NULL), (1, 'TRIG-2', 2019, 'delinquent'), (1, 'TRIG-3', NULL, 'open')`;
    await tx`UPDATE core.tax_delinquencies SET status = 'redeemed' WHERE parcel_id IN ('TRIG-1', 'TRIG-2')`;
    await tx`DELETE FROM core.tax_delinquencies WHERE parcel_id = 'TRIG-3'`;
  });
  t.same(await fromCounts(), await fromTable(), 'agree after an insert, an update of status and a delete');
  const [row] = await sql`SELECT records::int FROM core.tax_delinquency_status_counts
                           WHERE county_id = 1 AND tax_year = 2019 AND status = 'redeemed'`;
  t.equal(row?.records, 2, 'two records moved to redeemed');
  t.same(
    await sql`SELECT 1 FROM core.tax_delinquency_status_counts WHERE county_id = 1 AND tax_year IS NULL`,
    [],
    'a group that reaches zero is removed',
  );
  await sql`DELETE FROM core.tax_delinquencies WHERE parcel_id LIKE 'TRIG-%'`;
  t.same(await fromCounts(), await fromTable(), 'agree after deleting them again');
});

t.test('status counts and county / year / status totals never read the records table', async (t) => {
  // With core.tax_delinquencies locked exclusively by another session, anything that reads it waits and hits the
  // lock timeout; these calls must still answer, from the trigger-maintained counts.
  const locker = postgres(db.ownerUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => locker.end());
  await locker.begin(async (lk) => {
    await lk`LOCK TABLE core.tax_delinquencies IN ACCESS EXCLUSIVE MODE`;
    await sql.begin(async (tx) => {
      await tx`SET LOCAL lock_timeout = '500ms'`;
      const counts = await tx`SELECT status, count FROM api.count_tax_delinquencies(p_county => 'alachua')`;
      t.ok(counts.length > 0, 'status counts');
      const [total] =
        await tx`SELECT api.count_tax_delinquencies_matching(p_status => 'unknown', p_tax_year => 2024) AS n`;
      t.ok((total!.n as number) > 0, 'exact total of a county / year / status search');
    });
    await t.rejects(
      sql.begin(async (tx) => {
        await tx`SET LOCAL lock_timeout = '200ms'`;
        await tx`SELECT count(*) FROM core.tax_delinquencies`;
      }),
      { code: '55P03' },
      'control: a query that does read the table waits for the lock',
    );
  });
});

t.test('several counties and a year: pages merged from each county, in the same order as one query', async (t) => {
  for (const [offset, limit] of [
    [0, 5],
    [3, 7],
    [100, 25],
    [150, 500],
  ] as const) {
    const page = await sql<{ id: string }[]>`
      SELECT id FROM api.search_tax_delinquencies(p_county => '{miami-dade,hillsborough,broward}', p_tax_year => 2025,
                                                  p_limit => ${limit}, p_offset => ${offset})`;
    const truth = await sql<{ id: string }[]>`
      SELECT d.id::text AS id FROM core.tax_delinquencies d JOIN core.counties c ON c.id = d.county_id
       WHERE c.slug IN ('miami-dade', 'hillsborough', 'broward') AND d.tax_year = 2025
       ORDER BY d.total_due DESC NULLS LAST, d.id LIMIT ${limit} OFFSET ${offset}`;
    t.same(
      page.map((r) => r.id),
      truth.map((r) => r.id),
      `offset ${offset}, limit ${limit}`,
    );
  }
  const [{ total }] = await sql<[{ total: number }]>`
    SELECT api.count_tax_delinquencies_matching(p_county => '{miami-dade,hillsborough,broward}', p_tax_year => 2025) AS total`;
  t.ok(total > 150, `spans the pages above (${total})`);
});
