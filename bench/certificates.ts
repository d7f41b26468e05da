// Certificate arithmetic at the scale this machine builds in a minute or two (bench/results/certificates.md): a
// database of its own with --parcels parcels in the 67 counties (one in seven in Miami-Dade) and --records
// delinquency records over tax years 2017-2025 (60% sold certificates, 10% struck, 20% redeemed, 10% unsold), made
// in SQL. At 4 connections in one run, against the existing county search as the control:
// GET /v1/tax-delinquencies/{id}/payoff, GET /v1/parcels/{id}/certificates and a county search with deed_eligible.
// Before the API, the deed_eligible statements are timed in SQL against the same statements written the way they were
// before a stopped clock was stored as 'infinity' (expires_on NULL, eligibility an OR), on a copy of the column with
// the indexes it had: a before/after ratio from one run.
//   node --import tsx bench/certificates.ts [--parcels 150000] [--records 600000] [--seconds 8]
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
  },
});
const parcels = Number(values.parcels);
const records = Number(values.records);
const seconds = Number(values.seconds);
const log = (line: string) => console.error(line);
const database = `florida_bench_certificates_${parcels}`;
const url = withDatabase(ownerDatabaseUrl(), database);

const admin = postgres(withDatabase(ownerDatabaseUrl(), 'postgres'), { max: 1, onnotice: () => {} });
await admin.unsafe(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
await admin.end();
await setupDatabase({ url });
const sql = postgres(url, { max: 1, onnotice: () => {} });

const t0 = performance.now();
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
await sql`VACUUM ANALYZE core.parcels`;
await sql`VACUUM ANALYZE core.tax_delinquencies`;
const built = (performance.now() - t0) / 1000;

const [shape] = await sql<{ open: number; eligible: number; md: number; md_eligible: number }[]>`
  SELECT count(*) FILTER (WHERE deed_application_from IS NOT NULL)::int AS open,
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
    SELECT p.id::int FROM core.parcels p
     WHERE EXISTS (SELECT FROM core.tax_delinquencies d WHERE d.parcel_key = p.parcel_key AND d.county_id = p.county_id
                     AND d.deed_application_from IS NOT NULL)
     ORDER BY random() LIMIT 3000`
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

// expires_on as it was before: NULL for a stopped clock, with the indexes it had
for (const statement of [
  'ALTER TABLE core.tax_delinquencies ADD COLUMN expires_before date',
  'SET session_replication_role = replica',
  'UPDATE core.tax_delinquencies SET expires_before = expires_on WHERE isfinite(expires_on)',
  'SET session_replication_role = DEFAULT',
  `CREATE INDEX bench_county_deed_before ON core.tax_delinquencies (county_id, deed_application_from, expires_before)
     WHERE deed_application_from IS NOT NULL`,
  `CREATE INDEX bench_county_expires_before ON core.tax_delinquencies (county_id, expires_before, id)
     WHERE expires_before IS NOT NULL`,
  'VACUUM ANALYZE core.tax_delinquencies',
]) {
  await sql.unsafe(statement);
}
const eligibleBefore =
  'd.deed_application_from <= current_date AND (d.expires_before >= current_date OR d.expires_before IS NULL)';
const eligibleAfter = 'd.deed_application_from <= current_date AND d.expires_on >= current_date';
const statements = (county: string) => {
  const c = `d.county_id = (SELECT id FROM core.counties WHERE slug = '${county}')`;
  return {
    before: [
      `SELECT d.id FROM core.tax_delinquencies d WHERE ${c} AND ${eligibleBefore} ORDER BY d.expires_before NULLS LAST, d.id LIMIT 25`,
      `SELECT count(*) FROM core.tax_delinquencies d WHERE ${c} AND ${eligibleBefore}`,
    ],
    after: [
      `SELECT d.id FROM core.tax_delinquencies d WHERE ${c} AND ${eligibleAfter} ORDER BY d.expires_on NULLS LAST, d.id LIMIT 25`,
      `SELECT count(*) FROM core.tax_delinquencies d WHERE ${c} AND ${eligibleAfter}`,
    ],
  };
};
const beforePlan = await plan(statements('miami-dade').before[0]!);
const timings = { before: [[], []] as number[][], after: [[], []] as number[][] };
for (let round = 0; round < 6; round++) {
  for (const county of counties) {
    const s = statements(county);
    for (const kind of ['before', 'after'] as const) {
      for (const i of [0, 1]) {
        const t = performance.now();
        await sql.unsafe(s[kind][i]!);
        if (round > 0) timings[kind][i]!.push(performance.now() - t);
      }
    }
  }
}
await sql.unsafe('ALTER TABLE core.tax_delinquencies DROP COLUMN expires_before');
await sql`VACUUM ANALYZE core.tax_delinquencies`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const worst = (xs: number[]) => Math.max(...xs);

const bench = await benchClient(sql);
const api = await startApi(await freePort(), {
  DATABASE_URL: url,
  API_DATABASE_URL: withRole(url, 'api_reader'),
  REDIS_KEY_PREFIX: `bench:${database}:`,
});
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
  `\`node --import tsx bench/certificates.ts --parcels ${parcels} --records ${records} --seconds ${seconds}\` on ` +
    `${new Date().toISOString().slice(0, 10)}, 2 shared cores (other work running): a database of its own with ` +
    `${n(parcels)} parcels and ${n(records)} delinquency records made in SQL in ${built.toFixed(0)} s; ` +
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
  'The expires_soonest page as it was before (a stopped clock NULL, eligibility an OR):',
  '',
  ...beforePlan.map((l) => `    ${l}`),
  '',
  `## Before / after, in SQL (10 counties, ${timings.after[0]!.length} times each, interleaved)`,
  '',
  '| statement | before median ms | after median ms | median before / after | before max ms | after max ms |',
  '| --- | ---: | ---: | ---: | ---: | ---: |',
  ...(['expires_soonest page', 'total'] as const).map((name, i) => {
    const [b, a] = [timings.before[i]!, timings.after[i]!];
    return (
      `| ${name} | ${median(b).toFixed(2)} | ${median(a).toFixed(2)} | ${(median(b) / median(a)).toFixed(1)} | ` +
      `${worst(b).toFixed(2)} | ${worst(a).toFixed(2)} |`
    );
  }),
  '',
];
writeReport('bench/results/certificates.md', lines.join('\n'));
log(lines.join('\n'));
