// The exact total of a deed_eligible / expires_before / expires_after search comes from
// core.tax_certificate_deadline_counts: it equals, for every as-of day around each deadline and every combination
// of county, year, status and certificate filter, the count of records that pass the rule checked row by row; the
// triggers keep the counts exact through inserts, updates and deletes; the HTTP total is the rows' own count.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import { arrangeCertificates } from '../helpers/certificates.ts';

t.setTimeout(600_000); // a few thousand filter combinations, twice, on a loaded machine

const { get, db } = await buildTestApp(t);
const sql = db.sql;
await sql`UPDATE accounts.clients SET custom_rpm = 1000000, custom_monthly_credits = 100000000`;
await arrangeCertificates(sql);
// A stopped clock and a certificate without a status, so that 'infinity' and 'unknown' are on file.
await sql`
  INSERT INTO core.tax_delinquencies (county_id, parcel_id, tax_year, status, total_due, certificate_number,
    certificate_sale_date, face_amount, certificate_holder, certificate_interest_rate, bid_rate)
  VALUES (1, 'W-700', 2016, 'tda_filed', 900, 'W-T', '2017-06-01', 900, 'ACME LLC', 9, 9),
         (1, 'W-800', 2021, NULL, 700, 'W-N', '2022-06-01', 700, 'ACME LLC', 4, 4)`;

/** Every group of the counts table against a fresh count of the table: the rows that differ. */
const drift = () => sql`
  (SELECT county_id, tax_year, status, deed_application_from, expires_on, records
     FROM core.tax_certificate_deadline_counts
   EXCEPT
   SELECT county_id, tax_year, coalesce(status, 'unknown'), deed_application_from, expires_on, count(*)
     FROM core.tax_delinquencies WHERE deed_application_from IS NOT NULL GROUP BY 1, 2, 3, 4, 5)
  UNION ALL
  (SELECT county_id, tax_year, coalesce(status, 'unknown'), deed_application_from, expires_on, count(*)
     FROM core.tax_delinquencies WHERE deed_application_from IS NOT NULL GROUP BY 1, 2, 3, 4, 5
   EXCEPT
   SELECT county_id, tax_year, status, deed_application_from, expires_on, records
     FROM core.tax_certificate_deadline_counts)`;

/**
 * For every as-of day (each deadline on file, the day before and after, and today), county set, tax year, status
 * and certificate filter: the total search gives (search.tax_delinquency_count with the filter's day set to it)
 * against the records that pass the rule written out row by row from chapter 197 (open certificate; April 1 of the
 * second year after its date; 7 years after it unless the clock stopped). Returns the combinations and mismatches.
 */
const compare = () => sql<{ combos: number; mismatches: unknown[] | null }[]>`
  WITH days AS (
    SELECT DISTINCT d + k AS as_of
      FROM (SELECT deed_application_from AS d FROM core.tax_delinquencies
            UNION SELECT expires_on FROM core.tax_delinquencies WHERE isfinite(expires_on)
            UNION SELECT search.florida_today()) x, unnest('{-1,0,1}'::int[]) k
     WHERE d IS NOT NULL
  ), counties AS (
    SELECT NULL::text[] AS county UNION ALL SELECT ARRAY[slug] FROM core.counties WHERE id IN (1, 13)
    UNION ALL SELECT '{miami-dade,broward}'
  ), years AS (SELECT NULL::int AS tax_year UNION ALL SELECT 2023),
  statuses AS (SELECT NULL::text AS status UNION ALL SELECT 'unknown'),
  kinds AS (
    SELECT * FROM (VALUES (true, NULL::date, NULL::date), (false, date '2032-01-01', NULL), (NULL, date '2031-06-01', NULL),
                          (NULL, NULL, date '2030-06-01'), (true, date '2033-01-01', date '2030-06-01'),
                          (false, NULL, date '2020-01-01')) v(deed_eligible, expires_before, expires_after)
  ), combos AS (
    SELECT * FROM days, counties, years, statuses, kinds
  ), rule AS (
    SELECT d.*,
           d.certificate_sale_date IS NOT NULL AND d.face_amount IS NOT NULL
             AND coalesce(d.status, '') NOT IN ('redeemed', 'cancelled', 'canceled', 'expired', 'deeded') AS open,
           make_date(extract(year FROM d.certificate_sale_date)::int + 2, 4, 1) AS apply_from,
           coalesce(d.status IN ('tda_filed', 'deed_applied', 'bankruptcy'), false) AS stopped,
           (d.certificate_sale_date + interval '7 years')::date AS last_day,
           c.slug
      FROM core.tax_delinquencies d JOIN core.counties c ON c.id = d.county_id
  ), checked AS (
    SELECT x.*,
           search.tax_delinquency_count(jsonb_populate_record(
             search.tax_delinquency_filter_of(p_county => x.county, p_tax_year => x.tax_year, p_status => x.status,
               p_deed_eligible => x.deed_eligible, p_expires_before => x.expires_before,
               p_expires_after => x.expires_after),
             jsonb_build_object('today', x.as_of))) AS total,
           (SELECT count(*) FROM rule r
             WHERE (x.county IS NULL OR r.slug = ANY (x.county))
               AND (x.tax_year IS NULL OR r.tax_year = x.tax_year)
               AND (x.status IS NULL OR coalesce(r.status, 'unknown') = x.status)
               AND (x.deed_eligible IS NULL OR x.deed_eligible = coalesce(
                     r.open AND x.as_of >= r.apply_from AND (r.stopped OR x.as_of <= r.last_day), false))
               AND (x.expires_before IS NULL OR (r.open AND NOT r.stopped AND r.last_day < x.expires_before))
               AND (x.expires_after IS NULL OR (r.open AND NOT r.stopped AND r.last_day > x.expires_after))
           )::int AS by_rule
      FROM combos x
  )
  SELECT count(*)::int AS combos,
         json_agg(json_build_object('as_of', as_of, 'county', county, 'tax_year', tax_year, 'status', status,
                                    'deed_eligible', deed_eligible, 'expires_before', expires_before,
                                    'expires_after', expires_after, 'total', total, 'by_rule', by_rule))
           FILTER (WHERE total <> by_rule) AS mismatches
    FROM checked`;

t.test('the counts are the table’s own', async (t) => {
  t.ok((await sql`SELECT 1 FROM core.tax_certificate_deadline_counts`).length > 10, 'groups on file');
  t.same(await drift(), []);
});

t.test('every total equals the rule applied row by row, on every day around each deadline', async (t) => {
  const [r] = await compare();
  t.ok(r!.combos > 1000, `${r!.combos} combinations`);
  t.same(r!.mismatches, null);
  const [eligible] = await sql<{ n: number }[]>`
    SELECT search.tax_delinquency_count(jsonb_populate_record(search.tax_delinquency_filter_of(p_deed_eligible => true),
      jsonb_build_object('today', date '2031-05-31')))::int AS n`;
  t.ok(eligible!.n > 100, `${eligible!.n} eligible statewide on 2031-05-31: the comparison is not of empty sets`);
});

t.test('the triggers keep the counts through inserts, updates and deletes', async (t) => {
  await sql`UPDATE core.tax_delinquencies SET status = 'redeemed' WHERE id % 7 = 0 AND deed_application_from IS NOT NULL`;
  await sql`UPDATE core.tax_delinquencies SET status = 'tda_filed' WHERE id % 11 = 0 AND deed_application_from IS NOT NULL`;
  await sql`UPDATE core.tax_delinquencies SET certificate_sale_date = certificate_sale_date - 400 WHERE id % 5 = 1`;
  await sql`UPDATE core.tax_delinquencies SET status = NULL WHERE id % 13 = 2`;
  await sql`DELETE FROM core.tax_delinquencies WHERE id % 9 = 4`;
  await sql`
    INSERT INTO core.tax_delinquencies (county_id, parcel_id, tax_year, status, total_due, certificate_number,
      certificate_sale_date, face_amount, bid_rate)
    SELECT county_id, parcel_id || '-X', tax_year + 1, status, total_due, certificate_number || '-X',
           certificate_sale_date + 365, face_amount, bid_rate
      FROM core.tax_delinquencies WHERE id % 3 = 0`;
  t.same(await drift(), [], 'exact after the writes');
  const [r] = await compare();
  t.same(r!.mismatches, null, `${r!.combos} combinations still agree`);
  await sql`DELETE FROM core.tax_delinquencies WHERE county_id = 13`;
  t.same(await drift(), [], 'and after a county is emptied');
});

t.test(
  'HTTP: the total of deed_eligible and expires_soonest is the number of rows the search pages through',
  async (t) => {
    for (const county of ['broward', 'palm-beach', 'alachua']) {
      for (const sort of ['', '&sort=expires_soonest']) {
        const url = `/v1/tax-delinquencies/search?county=${county}&deed_eligible=true&limit=500${sort}`;
        const res = await get(url);
        t.equal(res.statusCode, 200, url);
        const body = res.json();
        t.equal(body.pagination.total, body.data.length, `${url}: total = rows`);
        const [rule] = await sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM core.tax_delinquencies d JOIN core.counties c ON c.id = d.county_id
         WHERE c.slug = ${county} AND d.deed_application_from <= search.florida_today()
           AND d.expires_on >= search.florida_today()`;
        t.equal(body.data.length, rule!.n, `${url}: the rows are the eligible certificates`);
      }
    }
  },
);
