// Certificate reads at 4 connections (bench/results/certificates.md), against the existing county search as the
// control: GET /v1/tax-delinquencies/{id}/payoff, GET /v1/parcels/{id}/certificates and a county search with
// deed_eligible (default order and expires_soonest). Either on a database of its own made in SQL in a minute or two
// (--parcels parcels in the 67 counties, one in seven in Miami-Dade, --records delinquency records over tax years
// 2017-2025: 60% sold certificates, 10% struck, 20% redeemed, 10% unsold), or on a database given whole
// (--database-url, any scale: the 1M bench state, the full state), which it reads only (and adds a bench API key).
// Before the API, the exact total of a deed_eligible search is timed in SQL both ways, interleaved: counting the
// county's eligible certificates (how search.tax_delinquency_count did it) and summing
// core.tax_certificate_deadline_counts (how it does it).
//   node --import tsx bench/certificates.ts [--parcels 150000] [--records 600000] [--seconds 8]
//   node --import tsx bench/certificates.ts --database-url postgres://postgres@127.0.0.1:55432/<db> [--seconds 8]
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { ownerDatabaseUrl, withDatabase, withRole } from '../src/db-url.ts';
import { setupDatabase } from '../scripts/db-setup.ts';
import { benchClient, startApi } from './api.ts';
import { drive, type DriveResult } from './driver.ts';
import { freePort } from './load.ts';
import { writeReport } from './report.ts';

const { values } = parseArgs({
  options: {
    parcels: { type: 'string', default: '150000' },
    records: { type: 'string', default: '600000' },
    seconds: { type: 'string', default: '8' },
    'database-url': { type: 'string' },
  },
});
const given = values['database-url'];
const parcels = Number(values.parcels);
const records = Number(values.records);
const seconds = Number(values.seconds);
const log = (line: string) => console.error(line);
const url = given ?? withDatabase(ownerDatabaseUrl(), `florida_bench_certificates_${parcels}`);
const database = new URL(url).pathname.slice(1);
const t0 = performance.now();
if (!given) await build();
const built = (performance.now() - t0) / 1000;
const sql = postgres(url, { max: 1, onnotice: () => {} });

/** The database of its own: parcels and delinquency records made in SQL. */
async function build() {
  const admin = postgres(withDatabase(ownerDatabaseUrl(), 'postgres'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  await admin.end();
  await setupDatabase({ url });
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  log(`certificates: ${parcels} parcels, ${records} delinquency records`);
  await sql`
  INSERT INTO core.parcels (county_id, parcel_id, owner_name)
  SELECT CASE WHEN g % 7 = 0 THEN (SELECT id FROM core.counties WHERE slug = 'miami-dade')
              ELSE (SELECT array_agg(id ORDER BY id) FROM core.counties)[1 + g % 67] END,
         'B' || lpad(g::text, 9, '0'), 'OWNER ' || g
    FROM generate_series(1, ${parcels}::int) g`;
  // the records' triggers (status counts, webhooks, saved searches) are off for the synthetic load; the counts the
  // search's totals read are built once after it
  await sql`SET session_replication_role = replica`;
  await sql`
  INSERT INTO core.tax_delinquencies (county_id, parcel_id, tax_year, status, delinquent_amount, total_due,
    certificate_number, certificate_sale_date, owner_name, face_amount, certificate_holder, certificate_interest_rate,
    bid_rate, county_purchase_date)
  SELECT p.county_id, p.parcel_id, y, s, amount, amount * 1.08,
         CASE WHEN s <> 'delinquent' THEN y || '-' || r END,
         CASE WHEN s <> 'delinquent' THEN make_date(y + 1, 6, 1) END, p.owner_name,
         CASE WHEN s <> 'delinquent' THEN amount * 1.1 END,
         CASE WHEN s = 'struck' THEN 'COUNTY HELD' WHEN s <> 'delinquent' THEN 'FUND ' || r % 40 END,
         CASE WHEN s = 'struck' THEN 18 WHEN s <> 'delinquent' THEN (r % 73) * 0.25 END,
         CASE WHEN s NOT IN ('struck', 'delinquent') THEN (r % 73) * 0.25 END,
         CASE WHEN s = 'struck' AND r % 5 = 0 THEN make_date(y + 2, (1 + r % 12)::int, (1 + r % 28)::int) END
    FROM generate_series(1, ${records}::bigint) r
    CROSS JOIN LATERAL (SELECT (2017 + r % 9)::int AS y,
                               (ARRAY['certificate_sold', 'certificate_sold', 'certificate_sold', 'certificate_sold',
                                      'certificate_sold', 'certificate_sold', 'struck', 'redeemed', 'redeemed',
                                      'delinquent'])[1 + (r / 9) % 10] AS s,
                               round((200 + (r * 7919) % 9800)::numeric, 2) AS amount) x
    JOIN core.parcels p ON p.id = 1 + (r * 104729) % ${parcels}::int
  ON CONFLICT DO NOTHING`;
  await sql`SET session_replication_role = DEFAULT`;
  await sql`DELETE FROM core.tax_delinquency_status_counts`;
  await sql`
  INSERT INTO core.tax_delinquency_status_counts (county_id, tax_year, status, records)
  SELECT county_id, tax_year, coalesce(status, 'unknown'), count(*) FROM core.tax_delinquencies GROUP BY 1, 2, 3`;
  await sql`DELETE FROM core.tax_certificate_deadline_counts`;
  await sql`
  INSERT INTO core.tax_certificate_deadline_counts (county_id, tax_year, status, deed_application_from, expires_on, records)
  SELECT county_id, tax_year, coalesce(status, 'unknown'), deed_application_from, expires_on, count(*)
    FROM core.tax_delinquencies WHERE deed_application_from IS NOT NULL GROUP BY 1, 2, 3, 4, 5`;
  await sql`VACUUM ANALYZE core.parcels`;
  await sql`VACUUM ANALYZE core.tax_delinquencies`;
  await sql.end();
}

const [shape] = await sql<
  { parcels: number; records: number; open: number; eligible: number; md: number; md_eligible: number }[]
>`
  SELECT (SELECT count(*) FROM core.parcels)::int AS parcels, count(*)::int AS records,
         count(*) FILTER (WHERE deed_application_from IS NOT NULL)::int AS open,
         count(*) FILTER (WHERE deed_application_from <= current_date AND expires_on >= current_date)::int AS eligible,
         count(*) FILTER (WHERE county_id = (SELECT id FROM core.counties WHERE slug = 'miami-dade'))::int AS md,
         count(*) FILTER (WHERE county_id = (SELECT id FROM core.counties WHERE slug = 'miami-dade')
                            AND deed_application_from <= current_date AND expires_on >= current_date)::int AS md_eligible
    FROM core.tax_delinquencies`;
const openIds = (
  await sql<{ id: number }[]>`
    SELECT id::int FROM core.tax_delinquencies
     WHERE deed_application_from IS NOT NULL AND expires_on >= current_date ORDER BY random() LIMIT 3000`
).map((r) => r.id);
const parcelIds = (
  await sql<{ id: number }[]>`
    WITH d AS (SELECT county_id, parcel_key FROM core.tax_delinquencies
                WHERE deed_application_from IS NOT NULL ORDER BY random() LIMIT 6000)
    SELECT DISTINCT p.id::int FROM d JOIN core.parcels p USING (county_id, parcel_key) LIMIT 3000`
).map((r) => r.id);
const counties = (
  await sql<{ slug: string }[]>`
    SELECT c.slug FROM core.counties c JOIN core.tax_delinquencies d ON d.county_id = c.id
     GROUP BY c.slug ORDER BY count(*) DESC LIMIT 10`
).map((r) => r.slug);
const plan = async (query: string) =>
  (await sql.unsafe<{ 'QUERY PLAN': string }[]>(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${query}`))
    .map((r) => r['QUERY PLAN'])
    .filter((l) => /Index|Scan|Sort|Limit/.test(l) && !/Filter|Cond/.test(l))
    .map((l) => l.trim());
// the statements the search runs for a county page and its total, as search.tax_delinquency_page_sql writes them
const [page] = await sql<{ q: string; w: string }[]>`
  SELECT search.tax_delinquency_page_sql(f, NULL, 25, 0) AS q, search.tax_delinquency_where(f) AS w
    FROM search.tax_delinquency_filter_of(p_county => '{miami-dade}', p_deed_eligible => true) f`;
const [soonest] = await sql<{ q: string }[]>`
  SELECT search.tax_delinquency_page_sql(f, 'expires_soonest', 25, 0) AS q
    FROM search.tax_delinquency_filter_of(p_county => '{miami-dade}', p_deed_eligible => true) f`;
const plans = {
  page: await plan(page!.q),
  soonest: await plan(soonest!.q),
  count: await plan(`SELECT count(*) FROM core.tax_delinquencies d WHERE ${page!.w}`),
};

// the exact total of a county's deed_eligible search both ways, interleaved: counting the rows, summing the counts
const where = (county: string) =>
  sql<{ w: string }[]>`SELECT search.tax_delinquency_where(search.tax_delinquency_filter_of(
                         p_county => ${[county]}::text[], p_deed_eligible => true)) AS w`.then((r) => r[0]!.w);
const totalPlan = await plan(`SELECT sum(d.records) FROM core.tax_certificate_deadline_counts d WHERE ${page!.w}`);
const timings = { before: [] as number[], after: [] as number[] };
for (let round = 0; round < 6; round++) {
  for (const county of counties) {
    const w = await where(county);
    for (const [kind, from] of [
      ['before', 'count(*) FROM core.tax_delinquencies d'],
      ['after', 'sum(d.records) FROM core.tax_certificate_deadline_counts d'],
    ] as const) {
      const t = performance.now();
      await sql.unsafe(`SELECT ${from} WHERE ${w}`);
      if (round > 0) timings[kind].push(performance.now() - t);
    }
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const worst = (xs: number[]) => Math.max(...xs);

const bench = await benchClient(sql);
const api = await startApi(
  await freePort(),
  { DATABASE_URL: url, API_DATABASE_URL: withRole(url, 'api_reader'), REDIS_KEY_PREFIX: `bench:${database}:` },
  [],
  300, // a loaded machine starts it slowly
);
const headers = { authorization: `Bearer ${bench.key}` };
const S = '/v1/tax-delinquencies';
const cases: [string, string[]][] = [
  ['county search (control, existing)', counties.map((c) => `${S}/search?county=${c}`)],
  ['county search, deed_eligible=true', counties.map((c) => `${S}/search?county=${c}&deed_eligible=true`)],
  [
    'county search, deed_eligible=true, expires_soonest',
    counties.map((c) => `${S}/search?county=${c}&deed_eligible=true&sort=expires_soonest`),
  ],
  ['payoff', openIds.map((id) => `${S}/${id}/payoff`)],
  ['parcel certificates', parcelIds.map((id) => `/v1/parcels/${id}/certificates`)],
];
const measured: [string, DriveResult][] = [];
try {
  for (const [name, paths] of cases) {
    await drive({ base: api.base, paths, headers, concurrency: 4, seconds: 2 }); // warm-up
    measured.push([name, await drive({ base: api.base, paths, headers, concurrency: 4, seconds })]);
    log(`certificates: ${name} done`);
  }
} finally {
  await api.stop();
  await bench.retire();
}
await sql.end();

const control = measured[0]![1];
const n = (v: number) => v.toLocaleString('en-US');
const lines = [
  '# Certificate arithmetic benchmark',
  '',
  (given
    ? `\`node --import tsx bench/certificates.ts --database-url …/${database} --seconds ${seconds}\` on ` +
      `${new Date().toISOString().slice(0, 10)}, 2 shared cores (other work running): ${database} as given, ` +
      `${n(shape!.parcels)} parcels and ${n(shape!.records)} delinquency records; `
    : `\`node --import tsx bench/certificates.ts --parcels ${parcels} --records ${records} --seconds ${seconds}\` on ` +
      `${new Date().toISOString().slice(0, 10)}, 2 shared cores (other work running): a database of its own with ` +
      `${n(parcels)} parcels and ${n(records)} delinquency records made in SQL in ${built.toFixed(0)} s; `) +
    `${n(shape!.open)} open certificates, ${n(shape!.eligible)} deed-eligible today; Miami-Dade ${n(shape!.md)} ` +
    `records, ${n(shape!.md_eligible)} eligible. 4 connections, ${seconds} s a request kind after a 2 s warm-up, ` +
    'one API process, the requests of each kind spread over 10 counties / 3,000 ids.',
  '',
  '| request | requests | rps | p50 ms | p95 ms | p99 ms | p99 / control | non-2xx |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...measured.map(
    ([name, r]) =>
      `| ${name} | ${r.requests} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p95.toFixed(2)} | ` +
      `${r.p99.toFixed(2)} | ${(r.p99 / control.p99).toFixed(2)} | ${r.non2xx} |`,
  ),
  '',
  '## Plans (Miami-Dade, deed_eligible=true)',
  '',
  'The page (default order, amount due):',
  '',
  ...plans.page.map((l) => `    ${l}`),
  '',
  'The page with sort=expires_soonest:',
  '',
  ...plans.soonest.map((l) => `    ${l}`),
  '',
  'Its exact total (either order):',
  '',
  ...plans.count.map((l) => `    ${l}`),
  '',
  'The same total from the deadline counts, as the search reads it now:',
  '',
  ...totalPlan.map((l) => `    ${l}`),
  '',
  `## The exact total of a deed_eligible county search, in SQL (10 counties, ${timings.after.length} times each, interleaved)`,
  '',
  '| statement | counting the rows: median ms | summing the counts: median ms | ratio | max ms, rows | max ms, counts |',
  '| --- | ---: | ---: | ---: | ---: | ---: |',
  `| total | ${median(timings.before).toFixed(2)} | ${median(timings.after).toFixed(2)} | ` +
    `${(median(timings.before) / median(timings.after)).toFixed(1)} | ${worst(timings.before).toFixed(2)} | ` +
    `${worst(timings.after).toFixed(2)} |`,
  '',
];
writeReport('bench/results/certificates.md', lines.join('\n'));
log(lines.join('\n'));
