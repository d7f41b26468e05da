// GET /v1/tax-delinquencies/{id}/payoff, /v1/parcels/{id}/certificates and the certificate filters of search over
// HTTP: the same numbers as SQL, every 400 in the error envelope, and the MCP tools answering the same.
import t, { type Test } from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildTestApp } from '../helpers/app.ts';
import { arrangeCertificates } from '../helpers/certificates.ts';

const { app, get, db, newClient } = await buildTestApp(t);
const sql = db.sql;
await sql`UPDATE accounts.clients SET custom_rpm = 1000000, custom_monthly_credits = 100000000`;
const ids = await arrangeCertificates(sql);

async function ok(t: Test, url: string) {
  const res = await get(url);
  t.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 300)}`);
  return res.json();
}
async function bad(t: Test, url: string, message: RegExp) {
  const res = await get(url);
  t.equal(res.statusCode, 400, url);
  const body = res.json();
  t.equal(body.error?.code, 'bad_request', `${url}: bad_request`);
  t.match(body.error?.message, message, `${url}: ${body.error?.message}`);
}
const P = (id: string | number, asOf?: string) => `/v1/tax-delinquencies/${id}/payoff${asOf ? `?as_of=${asOf}` : ''}`;

t.test('payoff: HTTP gives the rows of api.certificate_payoff, number for number', async (t) => {
  for (const [id, asOf] of [
    [ids.six, '2024-09-15'],
    [ids.eighteen, '2026-05-20'],
    [ids.zero, '2026-05-20'],
    [ids.county, '2024-10-10'],
  ] as const) {
    const body = await ok(t, P(id, asOf));
    const [row] = await sql`SELECT * FROM api.certificate_payoff(p_id => ${id}::bigint, p_as_of => ${asOf}::date)`;
    t.same(body.data, row, `${id} on ${asOf}`);
    t.match(body.meta, { request_id: /^req_/ });
  }
  const six = await ok(t, P(ids.six, '2024-09-15'));
  t.match(six.data, { months: 4, interest: 50, minimum_applied: true, payer_pays: 1056.25 });
  const county = await ok(t, P(ids.county, '2024-10-10'));
  t.match(county.data, { purchase_price: 1081.25, deed_application_from: '2026-04-01' });
});

t.test('payoff: as_of defaults to today in Florida', async (t) => {
  const [clock] = await sql<{ today: string }[]>`SELECT to_char(search.florida_today(), 'YYYY-MM-DD') AS today`;
  const today = clock!.today;
  const body = await ok(t, P(ids.eighteen));
  t.equal(body.data.as_of, today);
  const [row] = await sql`SELECT * FROM api.certificate_payoff(p_id => ${ids.eighteen}::bigint)`;
  t.same(body.data, row, 'the same numbers as psql without as_of');
});

t.test('payoff: every 400 in the error envelope, an unknown id 404', async (t) => {
  await bad(t, P(ids.unsold, '2025-01-01'), /^id: record \d+ has no tax certificate/);
  await bad(t, P(ids.redeemed, '2025-01-01'), /^id: certificate W-R was redeemed$/);
  await bad(t, P(ids.cancelled, '2025-01-01'), /^id: certificate W-X was cancelled$/);
  await bad(t, P(ids.eighteen, '2031-06-02'), /^as_of: certificate W-18 was cancelled after 2031-06-01/);
  await bad(t, P(ids.eighteen, '2024-05-31'), /^as_of: 2024-05-31 is before the date of certificate W-18/);
  await bad(t, P(ids.eighteen, '2024-13-45'), /as_of/);
  await bad(t, P(ids.eighteen, 'tomorrow'), /as_of/);
  await bad(t, P('abc', '2025-01-01'), /id/);
  await bad(t, P(0, '2025-01-01'), /id/);
  const res = await get(P(999999999, '2025-01-01'));
  t.equal(res.statusCode, 404);
  t.equal(res.json().error?.code, 'not_found');
});

t.test(
  'search: deed_eligible, expires_before / expires_after and expires_soonest, against the code own today',
  async (t) => {
    const [clock] = await sql<{ year: number }[]>`SELECT extract(year FROM search.florida_today())::int AS year`;
    const year = clock!.year;
    // dated 3 years back: eligible since April 1 of last year, expires in 4 years; 1 year back: eligible next April;
    // 8 years back: expired last June
    await sql`INSERT INTO core.tax_delinquencies (county_id, parcel_id, tax_year, status, total_due, certificate_number,
              certificate_sale_date, face_amount, certificate_holder, certificate_interest_rate)
            VALUES (1, 'E-1', ${year - 4}, 'certificate_sold', 10, 'E-OLD', make_date(${year - 3}, 6, 1), 10, 'X', 18),
                   (1, 'E-2', ${year - 2}, 'certificate_sold', 20, 'E-NEW', make_date(${year - 1}, 6, 1), 20, 'X', 18),
                   (1, 'E-3', ${year - 9}, 'certificate_sold', 30, 'E-GONE', make_date(${year - 8}, 6, 1), 30, 'X', 18)`;
    const S = '/v1/tax-delinquencies/search?county=alachua&limit=100';
    const numbers = (body: { data: { certificate_number: string | null }[] }) =>
      body.data.map((h) => h.certificate_number);
    const eligible = await ok(t, `${S}&deed_eligible=true&sort=expires_soonest`);
    t.ok(numbers(eligible).includes('E-OLD'), 'eligible: dated 3 years back');
    t.notOk(numbers(eligible).includes('E-NEW'), 'not yet: dated last year');
    t.notOk(numbers(eligible).includes('E-GONE'), 'not after expiry');
    t.notOk(numbers(eligible).includes('W-R'), 'not redeemed');
    t.equal(eligible.pagination.total, eligible.data.length);
    const sorted = eligible.data.map((h: { expires_on: string }) => h.expires_on);
    t.same(sorted, [...sorted].sort(), 'expires_soonest: soonest first');
    for (const h of eligible.data) t.type(h.payoff_today, 'number', `${h.certificate_number} has a payoff today`);
    const notEligible = await ok(t, `${S}&deed_eligible=false`);
    t.equal(
      notEligible.pagination.total + eligible.pagination.total,
      (await ok(t, S)).pagination.total,
      'false is every other record',
    );
    const gone = (await ok(t, `${S}&certificate_number=E-GONE`)).data[0];
    t.match(gone, { expires_on: `${year - 1}-06-01`, payoff_today: null }, 'expired: no payoff today');
    // E-OLD expires on June 1 in 4 years, E-NEW in 6 years, E-GONE expired last year (the W- rows have fixed dates)
    const dated = (body: { data: { certificate_number: string | null }[] }) =>
      numbers(body)
        .filter((n) => n?.startsWith('E-'))
        .sort();
    t.same(dated(await ok(t, `${S}&expires_before=${year + 4}-06-01`)), ['E-GONE'], 'expires_before is strict');
    t.same(dated(await ok(t, `${S}&expires_before=${year + 4}-06-02`)), ['E-GONE', 'E-OLD']);
    t.same(dated(await ok(t, `${S}&expires_after=${year + 4}-06-01`)), ['E-NEW'], 'expires_after is strict');
    t.same(dated(await ok(t, `${S}&expires_after=${year}-01-01&expires_before=${year + 7}-01-01`)), ['E-NEW', 'E-OLD']);
    const rows = await sql`SELECT * FROM api.search_tax_delinquencies(p_county => '{alachua}', p_deed_eligible => true,
                           p_sort => 'expires_soonest', p_limit => 100)`;
    t.same(eligible.data, [...rows], 'the same rows as psql');
    await bad(t, `${S}&expires_after=2030-01-01&expires_before=2029-01-01`, /^expires_after: must be before/);
    await bad(t, `${S}&expires_before=2030-02-30`, /expires_before/);
    await bad(t, `${S}&deed_eligible=maybe`, /deed_eligible/);
    await bad(t, `${S}&sort=expires_latest`, /expires_soonest/);
  },
);

t.test('parcel certificates: payoffs, what a deed applicant redeems for the others, unsold taxes', async (t) => {
  const body = await ok(t, `/v1/parcels/${ids.parcel}/certificates?as_of=2026-05-20`);
  const [row] = await sql`SELECT * FROM api.parcel_certificates(p_id => ${ids.parcel}, p_as_of => '2026-05-20')`;
  t.same(body.data, row, 'the same as psql');
  const d = body.data;
  t.match(d, { county_slug: 'alachua', county_parcel_id: 'W-200', as_of: '2026-05-20', deed_application_fee: 75 });
  t.same(
    d.certificates.map((c: { certificate_number: string }) => c.certificate_number),
    ['W-18', 'W-18B'],
    'open certificates, oldest first',
  );
  // W-18: 1366.25 (above). W-18B, dated 2025-06-01, $500 at 12%: June 2025-May 2026 is 12 months = 60.00
  const [w18, w18b] = d.certificates;
  t.equal(w18.payer_pays, 1366.25);
  t.equal(w18b.payer_pays, 566.25);
  t.equal(d.certificates_total, 1932.5);
  t.equal(w18.redeem_others, 566.25, "W-18's applicant redeems W-18B");
  t.equal(w18b.redeem_others, 1366.25);
  t.same(d.unsold_delinquencies, [
    { id: ids.unsold, tax_year: 2024, status: 'delinquent', delinquent_amount: null, total_due: 812.5 },
  ]);
  t.equal(d.unsold_total, 812.5);
  t.equal(w18.deed_application_cost, 566.25 + 812.5 + 75, 'others + unsold + the fee');
  t.equal(w18.deed_eligible, true);
  t.equal(w18b.deed_eligible, false);
  const res = await get('/v1/parcels/999999999/certificates');
  t.equal(res.statusCode, 404);
  await bad(t, `/v1/parcels/${ids.parcel}/certificates?as_of=2026-02-30`, /as_of/);
  // fixture case 1 (fixtures/README.md): 2022 redeemed, 2023 certificate_sold, 2024 delinquent
  const [smith] = await sql<{ id: number }[]>`
    SELECT id::int FROM core.parcels WHERE county_id = 13 AND parcel_key = '0131320350010'`;
  const fixture = await ok(t, `/v1/parcels/${smith!.id}/certificates?as_of=2026-05-20`);
  t.same(
    fixture.data.certificates.map((c: { certificate_number: string }) => c.certificate_number),
    ['2023-001001'],
    'the redeemed certificate is not listed',
  );
  t.equal(fixture.data.certificates[0].redeem_others, 0, 'a single certificate redeems no other');
  t.match(fixture.data.unsold_delinquencies, [{ tax_year: 2024, status: 'delinquent' }]);
  const [bare] = await sql<{ id: number }[]>`
    SELECT p.id::int FROM core.parcels p WHERE NOT EXISTS (SELECT FROM core.tax_delinquencies d
      WHERE d.parcel_key = p.parcel_key AND d.county_id = p.county_id) ORDER BY p.id LIMIT 1`;
  const none = await ok(t, `/v1/parcels/${bare!.id}/certificates`);
  t.match(none.data, { certificates: [], certificates_total: 0, unsold_delinquencies: [], unsold_total: 0 });
});

t.test('MCP: the tools answer what REST answers', async (t) => {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const c = await newClient('developer');
  await sql`UPDATE accounts.clients SET custom_rpm = 1000000, custom_monthly_credits = 100000000`;
  const client = new Client({ name: 'tap', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${c.key}` } },
    }),
  );
  t.teardown(() => client.close());
  type Result = { isError?: boolean; content: { text: string }[]; structuredContent?: { data: unknown } };
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as Result;
  const payoff = await call('get_certificate_payoff', { id: Number(ids.six), as_of: '2024-09-15' });
  t.same(payoff.structuredContent?.data, (await ok(t, P(ids.six, '2024-09-15'))).data);
  t.match(payoff.content[0]!.text, /payer pays \$1,056\.25/);
  const parcel = await call('get_parcel_certificates', { id: ids.parcel, as_of: '2026-05-20' });
  t.same(parcel.structuredContent?.data, (await ok(t, `/v1/parcels/${ids.parcel}/certificates?as_of=2026-05-20`)).data);
  const refused = await call('get_certificate_payoff', { id: Number(ids.redeemed) });
  t.equal(refused.isError, true);
  t.match(refused.content[0]!.text, /was redeemed/);
});
