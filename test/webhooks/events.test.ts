// Events from real imports of the fixtures, delivered to a real receiver and verified with the standardwebhooks
// library: each type, data equal to what REST returns, previous on updates, county.data_refreshed; re-importing the
// same file and a rolled-back import emit nothing; type and county filters.
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { buildTestApp } from '../helpers/app.ts';
import { importDelinquencies } from '../../src/importers/delinquencies.ts';
import { importNal } from '../../src/importers/nal.ts';
import { importSdf } from '../../src/importers/sdf.ts';
import { importParcelGeometry } from '../../src/importers/parcel-geometry.ts';
import { fixture, rejectsPath } from '../importers/fixture.ts';
import { ALL_EVENTS, FAST, api, importLiberty, receiver, sleep, startWorker, waitFor } from './helpers.ts';

const ctx = await buildTestApp(t, FAST);
const { db } = ctx;
const sql = db.sql;
const m = api(ctx);
const opts = (file: string, extra = {}) => ({
  file: fixture(file),
  databaseUrl: db.ownerUrl,
  rejects: rejectsPath(`webhooks-${file.replace(/\W/g, '_')}`),
  quiet: true,
  ...extra,
});

const all = await receiver(t);
const dadeCreated = await receiver(t);
const libertyOnly = await receiver(t);
const everything = await m.create({ url: all.url, events: ALL_EVENTS });
await m.create({ url: dadeCreated.url, events: ['tax_delinquency.created'], counties: ['Miami-Dade'] });
await m.create({ url: libertyOnly.url, events: ALL_EVENTS, counties: ['liberty'] });
await startWorker(t, db);

const eventsOf = async (type: string) =>
  (await sql`SELECT count(*)::int AS n FROM webhooks.events WHERE type = ${type}`)[0]!.n;
const total = async () => (await sql`SELECT count(*)::int AS n FROM webhooks.events`)[0]!.n as number;
const verify = (secret: string, r: { headers: Record<string, unknown>; body: string }) =>
  new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { id: string };

/**
 * A DelinquencyHit less the certificate fields the API works out when asked (deed and expiry dates, today's payoff):
 * an event carries the record as the import left it (docs/webhooks.md), and a receiver asks /payoff for a day.
 */
const withoutDayFields = (hit: Record<string, unknown>) => {
  const { deed_application_from: _deed, expires_on: _expires, payoff_today: _payoff, ...rest } = hit;
  return rest;
};

t.test('a delinquency list: created, updated (with previous) and removed, as REST returns them', async (t) => {
  const [before] = await sql`
    SELECT id::text, status, total_due::float8 AS total_due FROM core.tax_delinquencies
     WHERE county_id = 13 AND parcel_id = '0131320350010' AND tax_year = 2024`;
  const gone = await sql`SELECT id::text FROM core.tax_delinquencies WHERE county_id = 13 AND tax_year = 2024`;
  const byParcel = '/v1/tax-delinquencies/by-parcel?parcel_id=0131320350010&county=miami-dade';
  const restBefore = withoutDayFields(
    (await ctx.get(byParcel)).json().data.find((d: { id: string }) => d.id === before!.id),
  );
  const s = await importDelinquencies(opts('delinquencies/standard-2025.csv'));
  const md = s.counties.find((c) => c.county === 'miami-dade')!;
  const al = s.counties.find((c) => c.county === 'alachua')!;
  const expected =
    Number(md.inserted) + Number(al.inserted) + Number(md.updated) + Number(al.updated) + Number(md.deleted) + 2;
  await waitFor('every event at the catch-all receiver', () => all.requests.length >= expected);
  await sleep(300);
  t.equal(all.requests.length, expected, 'one request per record changed, plus a refresh per county');

  for (const r of all.requests) {
    const verified = verify(everything.secret, r);
    t.equal(verified.id, r.headers['webhook-id'], 'the body is the event the webhook-id names');
  }
  const events = all.events();
  const byType = (type: string) => events.filter((e) => e.type === type);
  t.equal(byType('tax_delinquency.created').length, Number(md.inserted) + Number(al.inserted));
  t.equal(byType('tax_delinquency.removed').length, Number(md.deleted));
  t.equal(byType('county.data_refreshed').length, 2);

  const updated = byType('tax_delinquency.updated');
  t.equal(updated.length, 1);
  const u = updated[0]!;
  t.equal(u.data.id, before!.id);
  t.equal(u.data.total_due, 3612.48);
  // data is what GET /v1/tax-delinquencies/by-parcel returns for the record; previous holds the old value of every
  // field that changed, and nothing else
  const restAfter = withoutDayFields(
    (await ctx.get(byParcel)).json().data.find((d: { id: string }) => d.id === before!.id),
  );
  t.same(u.data, restAfter, 'data equals the REST object, less the worked-out certificate fields');
  t.notOk('payoff_today' in u.data, 'payoff_today, which changes every day, is not in an event');
  const changed = Object.keys(restAfter).filter((k) => restAfter[k] !== restBefore[k]);
  t.ok(changed.length > 0);
  t.same(
    u.previous,
    Object.fromEntries(changed.map((k) => [k, restBefore[k]])),
    'previous: the old values of what changed',
  );
  t.same(Object.keys(u.previous!), changed, "in the object's field order");
  const created = byType('tax_delinquency.created').find((e) => e.data.county_slug === 'alachua')!;
  const rest2 = await ctx.get(
    `/v1/tax-delinquencies/by-parcel?parcel_id=${encodeURIComponent(String(created.data.county_parcel_id))}&county=alachua`,
  );
  t.same(
    created.data,
    withoutDayFields(rest2.json().data.find((d: { id: string }) => d.id === created.data.id)),
    'a created record is its REST object too',
  );
  const kept =
    await sql`SELECT id::text FROM core.tax_delinquencies WHERE id = ANY (${gone.map((g) => g.id)}::bigint[])`;
  t.same(
    byType('tax_delinquency.removed')
      .map((e) => e.data.id)
      .sort(),
    gone
      .map((g) => g.id)
      .filter((id) => !kept.some((k) => k.id === id))
      .sort(),
    'every removed record, by its id',
  );
  const refresh = byType('county.data_refreshed').find((e) => e.data.county_slug === 'miami-dade')!;
  t.same(refresh.data, {
    county_slug: 'miami-dade',
    county_name: 'Miami-Dade',
    kind: 'delinquencies',
    rows_added: md.inserted,
    rows_changed: md.updated,
    rows_removed: md.deleted,
  });
  t.ok(
    events.every(
      (e) => /^evt_[0-9a-f]{16}$/.test(e.id) && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(e.created_at),
    ),
    'event ids and times',
  );
  const ids = all.requests.map((r) => String(r.headers['webhook-id']));
  t.same(ids, [...ids].sort(), 'one endpoint gets its events in the order they were made');

  // filters: Miami-Dade creations only; Liberty only (nothing in this file)
  await waitFor('the Miami-Dade receiver', () => dadeCreated.requests.length >= Number(md.inserted));
  await sleep(300);
  t.equal(dadeCreated.requests.length, Number(md.inserted), 'type and county filter');
  t.ok(dadeCreated.events().every((e) => e.type === 'tax_delinquency.created' && e.data.county_slug === 'miami-dade'));
  t.equal(libertyOnly.requests.length, 0, 'a county the file does not touch');
});

t.test('re-importing the same file emits nothing', async (t) => {
  const n = await total();
  const seen = all.requests.length;
  const s = await importDelinquencies(opts('delinquencies/standard-2025.csv'));
  t.ok(
    s.counties.every((c) => c.inserted === 0 && c.updated === 0 && c.deleted === 0),
    'nothing changed',
  );
  await sleep(800);
  t.equal(await total(), n, 'no event written');
  t.equal(all.requests.length, seen, 'nothing sent');
});

t.test('a rolled-back import emits nothing', async (t) => {
  const n = await total();
  await t.rejects(
    importDelinquencies(
      opts('delinquencies/collector-liberty-2025.csv', {
        county: 'liberty',
        taxYear: 2025,
        vendor: 'TaxCertSale',
        beforeCommit: async (tx: { unsafe: (q: string) => Promise<unknown> }) => {
          const [{ n: written }] = (await tx.unsafe('SELECT count(*)::int AS n FROM webhooks.events')) as unknown as [
            { n: number },
          ];
          t.ok(written > n, 'the import wrote events in its transaction');
          throw new Error('boom');
        },
      }),
    ),
    /boom/,
  );
  await sleep(800);
  t.equal(await total(), n, 'the events went with the rollback');
  t.equal(libertyOnly.requests.length, 0, 'nothing sent');
  t.equal((await sql`SELECT count(*)::int AS n FROM webhooks.outbox`)[0]!.n, 0, 'nothing queued');
});

t.test('the Liberty list, then a sale (SDF) and an owner change (NAL)', async (t) => {
  const s = await importDelinquencies(
    opts('delinquencies/collector-liberty-2025.csv', { county: 'liberty', taxYear: 2025, vendor: 'TaxCertSale' }),
  );
  const lib = s.counties.find((c) => c.county === 'liberty')!;
  await waitFor('Liberty events', () => libertyOnly.requests.length >= Number(lib.inserted) + 1);
  t.ok(
    libertyOnly.events().every((e) => e.data.county_slug === 'liberty'),
    'county filter',
  );

  const seen = libertyOnly.requests.length;
  const sdf = await importSdf(opts('sdf/SDF49F202501.csv'));
  const libSales = sdf.counties.find((c) => c.county === 'liberty')!;
  t.ok(Number(libSales.inserted) > 0, 'the file has new Liberty sales');
  await waitFor('sale events', () => libertyOnly.requests.length >= seen + Number(libSales.inserted) + 1);
  const sales = libertyOnly.events().filter((e) => e.type === 'parcel.sale_recorded');
  t.equal(sales.length, Number(libSales.inserted), 'one parcel.sale_recorded per new sale');
  const sale = sales[0]!;
  const rest = await ctx.get(`/v1/sales/search?county=liberty&limit=500`);
  t.same(
    sale.data,
    rest.json().data.find((x: { id: string }) => x.id === sale.data.id),
    'data is the SaleHit',
  );
  t.equal(
    await eventsOf('parcel.sale_recorded'),
    sales.length + Number(sdf.counties.find((c) => c.county === 'alachua')!.inserted),
    'and one per new Alachua sale, for the endpoint of every county',
  );

  const before = await sql`SELECT id::int, owner_name FROM core.parcels WHERE county_id = 39 ORDER BY id`;
  const seen2 = libertyOnly.requests.length;
  const nal = await importNal(opts('nal/NAL49F202501.csv'));
  const after = await sql`SELECT id::int, owner_name FROM core.parcels WHERE county_id = 39`;
  const changed = before.filter((b) => after.some((a) => a.id === b.id && a.owner_name !== b.owner_name));
  t.ok(changed.length > 0, 'the NAL changes owners');
  const libNal = nal.counties.find((c) => c.county === 'liberty')!;
  await waitFor(
    'owner events',
    () =>
      libertyOnly.events().filter((e) => e.type === 'parcel.owner_changed').length >= changed.length &&
      libertyOnly.requests.length > seen2 + changed.length,
  );
  const owners = libertyOnly.events().filter((e) => e.type === 'parcel.owner_changed');
  t.same(owners.map((e) => e.data.id).sort(), changed.map((c) => c.id).sort(), 'one per parcel whose owner changed');
  const o = owners[0]!;
  const was = changed.find((c) => c.id === o.data.id)!;
  t.same(o.previous, { owner_name: was.owner_name });
  const restParcel = (await ctx.get(`/v1/parcels/${o.data.id}`)).json().data;
  t.same(o.data, { ...restParcel, geometry: null }, 'data is the ParcelHit without geometry');
  const refresh = libertyOnly.events().find((e) => e.type === 'county.data_refreshed' && e.data.kind === 'nal')!;
  t.same(refresh.data, {
    county_slug: 'liberty',
    county_name: 'Liberty',
    kind: 'nal',
    rows_added: libNal.inserted,
    rows_changed: libNal.updated,
    rows_removed: libNal.deleted,
  });
});

t.test(
  'polygons (parcel-geometry) refresh a county; with no endpoint subscribed, an import writes no event',
  async (t) => {
    const seen = libertyOnly.requests.length;
    const geo = await importParcelGeometry(opts('geometry/Liberty 49 PIN 2025.zip'));
    const lib = geo.counties.find((c) => c.county === 'liberty')!;
    await waitFor('the refresh', () =>
      libertyOnly.events().some((e) => e.type === 'county.data_refreshed' && e.data.kind === 'parcel-geometry'),
    );
    const refresh = libertyOnly
      .events()
      .find((e) => e.type === 'county.data_refreshed' && e.data.kind === 'parcel-geometry')!;
    t.match(refresh.data, {
      county_slug: 'liberty',
      rows_added: 0,
      rows_changed: lib.updated,
      rows_removed: lib.cleared,
    });
    t.equal(libertyOnly.requests.length, seen + 1, 'a polygon change is no owner change');

    for (const e of (await m.get('/v1/webhooks')).json().data) await m.del(`/v1/webhooks/${e.id}`);
    const n = await total();
    const s = await importLiberty(db, 1970, 5);
    t.equal(s.counties[0]!.inserted, 5);
    t.equal(await total(), n, 'nobody subscribed: nothing written');
    t.equal((await sql`SELECT count(*)::int AS n FROM webhooks.outbox`)[0]!.n, 0);
  },
);
