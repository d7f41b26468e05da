// The statute's arithmetic (docs/certificates.md) as a table of worked cases, each written from the rule with the
// hand computation beside it, through api.certificate_payoff; the county's month-of-issue setting both ways; every
// case a 400 answers.
import t from 'tap';
import { createTestDatabase } from '../helpers/db.ts';
import { arrangeCertificates } from '../helpers/certificates.ts';

const db = await createTestDatabase();
t.teardown(db.drop);
const sql = db.sql;
const ids = await arrangeCertificates(sql);

const payoff = async (id: string, asOf: string) => {
  const [row] = await sql`SELECT * FROM api.certificate_payoff(p_id => ${id}::bigint, p_as_of => ${asOf}::date)`;
  return row!;
};

// Certificate dated 2024-06-01 (the first day of the sale), face $1,000.00, month of issue counted (the default).
const WORKED = [
  {
    name: '6% bid redeemed 2024-09-15: June-September is 4 months, 1000 x 6% x 4/12 = 20.00 < 5% of face = 50.00',
    id: ids.six,
    as_of: '2024-09-15',
    want: { months: 4, computed_interest: 20, minimum_interest: 50, minimum_applied: true, interest: 50 },
    pays: 1056.25, // 1000 + 50 + 6.25
    rules: { interest: 'INT-MIN5', rate: 'RATE-BID', months: 'MONTHS-ISSUE-IN' },
  },
  {
    name: '18% redeemed 2026-05-20: June 2024-May 2026 is 24 months, 1000 x 18% x 24/12 = 360.00',
    id: ids.eighteen,
    as_of: '2026-05-20',
    want: { months: 24, computed_interest: 360, minimum_applied: false, interest: 360 },
    pays: 1366.25, // 1000 + 360 + 6.25
    rules: { interest: 'INT-RATE' },
  },
  {
    name: '0% bid: no interest and no 5% minimum (s. 197.472(2))',
    id: ids.zero,
    as_of: '2026-05-20',
    want: { rate: 0, interest: 0, minimum_interest: 0, minimum_applied: false },
    pays: 1006.25, // 1000 + 0 + 6.25
    rules: { interest: 'INT-ZERO' },
  },
  {
    name: 'county-held bought over the counter 2024-10-10: June-October is 5 months at 1.5%, 1000 + 75 + 6.25 = 1081.25',
    id: ids.county,
    as_of: '2024-10-10',
    // on the purchase day the new face has run 1 month (October): 1081.25 x 18% / 12 = 16.22 < 5% = 54.06
    want: {
      holder_kind: 'individual',
      purchase_months: 5,
      purchase_price: 1081.25,
      face_amount: 1081.25,
      face_at_issue: 1000,
      rate: 18,
      interest_from: '2024-10-10',
      months: 1,
      interest: 54.06,
      deed_application_from: '2026-04-01',
      expires_on: '2031-06-01',
    },
    pays: 1141.56, // 1081.25 + 54.06 + 6.25
    rules: { face_amount: 'FACE-OTC', rate: 'RATE-COUNTY', interest: 'INT-MIN5', deed_application_from: 'DEED-APR1' },
  },
  {
    name: 'the same county-held certificate before its purchase: the county holds it at 18%, 4 months = 60.00',
    id: ids.county,
    as_of: '2024-09-30',
    want: { holder_kind: 'county', purchase_price: null, face_amount: 1000, rate: 18, months: 4, interest: 60 },
    pays: 1066.25,
    rules: { face_amount: 'FACE-ISSUE', rate: 'RATE-COUNTY', interest: 'INT-RATE' },
  },
  {
    name: 'its last day, 2031-06-01 (7 years): June 2024-June 2031 is 85 months, 1000 x 18% x 85/12 = 1275.00',
    id: ids.eighteen,
    as_of: '2031-06-01',
    want: { months: 85, interest: 1275, expires_on: '2031-06-01', deed_eligible: true },
    pays: 2281.25,
    rules: { expires_on: 'EXP-7Y' },
  },
  {
    name: 'deed date on its boundary: 2026-04-01 is the first day (April 1 of 2024 + 2)',
    id: ids.six,
    as_of: '2026-04-01',
    want: { deed_application_from: '2026-04-01', deed_eligible: true, months: 23, interest: 115 },
    pays: 1121.25, // 1000 x 6% x 23/12 = 115.00
    rules: {},
  },
  {
    name: 'the day before, 2026-03-31: not yet',
    id: ids.six,
    as_of: '2026-03-31',
    want: { deed_application_from: '2026-04-01', deed_eligible: false, months: 22, interest: 110 },
    pays: 1116.25,
    rules: {},
  },
];

for (const c of WORKED) {
  t.test(c.name, async (t) => {
    const row = await payoff(c.id, c.as_of);
    t.match(row, { ...c.want, as_of: c.as_of, certificate_date: '2024-06-01', redemption_fee: 6.25 });
    t.equal(row.payer_pays, c.pays, `the payer pays ${c.pays}`);
    t.equal(row.holder_receives, c.pays - 6.25, 'the holder receives all but the fee');
    t.equal(row.month_of_issue_counted, true, 'the answer says which reading it used');
    t.match(row.rules, { ...c.rules, redemption_fee: 'FEE', payer_pays: 'PAY', holder_receives: 'RECEIVE' });
  });
}

t.test('the month of issue, a county setting: counted by default, not when the county says so', async (t) => {
  const counted = await payoff(ids.eighteen, '2026-05-20');
  t.match(counted, { months: 24, interest: 360, payer_pays: 1366.25, month_of_issue_counted: true });
  await sql`INSERT INTO core.county_certificate_settings (county_id, month_of_issue_counts) VALUES (1, false)`;
  t.teardown(() => sql`DELETE FROM core.county_certificate_settings WHERE county_id = 1`);
  // June 2024 not counted: July 2024-May 2026 is 23 months, 1000 x 18% x 23/12 = 345.00
  const not = await payoff(ids.eighteen, '2026-05-20');
  t.match(not, { months: 23, interest: 345, payer_pays: 1351.25, month_of_issue_counted: false });
  t.equal(not.rules.months, 'MONTHS-ISSUE-OUT');
  // over the counter: June-October without June is 4 months, 1000 + 60 + 6.25
  t.match(await payoff(ids.county, '2024-10-10'), { purchase_months: 4, purchase_price: 1066.25 });
  const [hit] = await sql`SELECT payoff_today FROM api.search_tax_delinquencies(p_certificate_number => 'W-18')`;
  const [today] = await sql`SELECT payer_pays FROM api.certificate_payoff(${ids.eighteen}::bigint)`;
  t.equal(hit!.payoff_today, today!.payer_pays, "the hit's payoff_today uses the county's reading too");
});

t.test('each case without a payoff is a 400 (22023) that says which', async (t) => {
  const cases: [string, string, RegExp][] = [
    [ids.unsold, '2025-01-01', /^id: record \d+ has no tax certificate \(status delinquent\)$/],
    [ids.redeemed, '2025-01-01', /^id: certificate W-R was redeemed$/],
    [ids.cancelled, '2025-01-01', /^id: certificate W-X was cancelled$/],
    [ids.eighteen, '2031-06-02', /^as_of: certificate W-18 was cancelled after 2031-06-01, 7 years after its date/],
    [ids.eighteen, '2024-05-31', /^as_of: 2024-05-31 is before the date of certificate W-18 \(2024-06-01\)$/],
  ];
  for (const [id, asOf, message] of cases) {
    await t.rejects(payoff(id, asOf), { code: '22023', message }, `${id} on ${asOf}`);
  }
  const none = await sql`SELECT * FROM api.certificate_payoff(p_id => 999999999)`;
  t.equal(none.length, 0, 'an unknown id is no row (404 over HTTP)');
});

t.test('a feed without a rate: a 400 for a bidder, 18% for a holder written as the county', async (t) => {
  const rows = await sql<{ id: string }[]>`
    INSERT INTO core.tax_delinquencies (county_id, parcel_id, tax_year, status, certificate_number,
      certificate_sale_date, face_amount, certificate_holder)
    VALUES (1, 'W-800', 2023, 'certificate_sold', 'W-NR', '2024-06-01', 1000, 'ACME LLC'),
           (1, 'W-801', 2023, 'certificate_sold', 'W-NRC', '2024-06-01', 1000, 'Alachua County')
    RETURNING id::text`;
  t.teardown(() => sql`DELETE FROM core.tax_delinquencies WHERE id IN ${sql(rows.map((r) => r.id))}`);
  await t.rejects(payoff(rows[0]!.id, '2025-01-01'), {
    code: '22023',
    message: /^id: certificate W-NR has no interest rate in the feed$/,
  });
  // June 2024-May 2026 is 24 months at the county's 18%: 1000 x 18% x 24/12 = 360.00
  t.match(await payoff(rows[1]!.id, '2026-05-20'), {
    holder_kind: 'county',
    rate: 18,
    interest: 360,
    payer_pays: 1366.25,
    rules: { rate: 'RATE-COUNTY' },
  });
  const [hit] = await sql`SELECT payoff_today FROM api.search_tax_delinquencies(p_certificate_number => 'W-NR')`;
  t.equal(hit!.payoff_today, null, 'a hit without a payoff has payoff_today null');
});

t.test('dates every open certificate gets, and none for a closed one', async (t) => {
  const rows = await sql<{ certificate_number: string; deed_application_from: string; expires_on: string }[]>`
    SELECT certificate_number, deed_application_from, expires_on
      FROM api.search_tax_delinquencies(p_county => '{alachua}', p_sort => 'expires_soonest', p_limit => 50)`;
  const by = Object.fromEntries(rows.map((r) => [r.certificate_number ?? 'none', r]));
  t.match(by['W-18'], { deed_application_from: '2026-04-01', expires_on: '2031-06-01' });
  t.match(by['W-18B'], { deed_application_from: '2027-04-01', expires_on: '2032-06-01' });
  t.match(by['W-R'], { deed_application_from: null, expires_on: null }, 'redeemed: none');
  t.match(by['W-X'], { deed_application_from: null, expires_on: null }, 'cancelled: none');
  t.equal(rows.at(-1)!.expires_on, null, 'expires_soonest puts records without an expiry last');
});

t.test('a deed application on record stops the 7-year clock (s. 197.482)', async (t) => {
  const [row] = await sql<{ id: string }[]>`
    INSERT INTO core.tax_delinquencies (county_id, parcel_id, tax_year, status, certificate_number,
      certificate_sale_date, face_amount, certificate_holder, certificate_interest_rate)
    VALUES (1, 'W-700', 2023, 'tda_filed', 'W-TDA', '2024-06-01', 1000, 'ACME LLC', 18) RETURNING id::text`;
  // June 2024-July 2031 is 86 months: 1000 x 18% x 86/12 = 1290.00, past the 7 years the clock no longer runs
  const late = await payoff(row!.id, '2031-07-15');
  t.match(late, { months: 86, interest: 1290, payer_pays: 2296.25, expires_on: null, deed_eligible: true });
  t.equal(late.rules.expires_on, 'EXP-STOPPED');
  const eligible = await sql`SELECT certificate_number, expires_on FROM api.search_tax_delinquencies(
    p_county => '{alachua}', p_deed_eligible => true, p_sort => 'expires_soonest', p_limit => 100)`;
  t.same(eligible.at(-1), { certificate_number: 'W-TDA', expires_on: null }, 'eligible, after every dated expiry');
  // stored as 'infinity' so that eligibility is an index range; never shown, and no date filter reaches it
  const [stored] = await sql<{ expires_on: string }[]>`
    SELECT expires_on::text FROM core.tax_delinquencies WHERE id = ${row!.id}`;
  t.equal(stored!.expires_on, 'infinity');
  const dated = await sql`SELECT certificate_number FROM api.search_tax_delinquencies(p_county => '{alachua}',
    p_expires_after => '2020-01-01', p_limit => 100)`;
  t.ok(dated.length > 0, 'dated certificates found');
  t.notOk(
    dated.some((r) => r.certificate_number === 'W-TDA'),
    'expires_after leaves out a stopped clock',
  );
  const all = await sql<{ certificate_number: string | null; expires_on: string | null }[]>`
    SELECT certificate_number, expires_on FROM api.search_tax_delinquencies(p_county => '{alachua}',
      p_sort => 'expires_soonest', p_limit => 100)`;
  const stoppedAt = all.findIndex((r) => r.certificate_number === 'W-TDA');
  t.ok(
    all.slice(0, stoppedAt).every((r) => r.expires_on !== null),
    'after every dated expiry',
  );
});
