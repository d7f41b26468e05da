// A deleted search's matches go with it (the match tables have no foreign key; a statement trigger deletes them): when
// the search is deleted, when several are in one statement (as a client's deletion cascades), and when the deletion
// comes while a matching that matched it is still open (it waits for its commit, then deletes what it wrote).
// Its saved_search.matched events not yet sent go nowhere: pending deliveries are skipped, later fan-outs skip them.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import { FAST, api, receiver } from '../webhooks/helpers.ts';
import { importList, type Row } from './helpers.ts';

const ctx = await buildTestApp(t, FAST);
const { db } = ctx;
const sql = db.sql;

const rows = (prefix: string): Row[] =>
  Array.from({ length: 12 }, (_, i) => ({ parcel: `${prefix}-${i}`, due: 900 + i }));
const matchesOf = async (publicId: string) =>
  (await sql`SELECT count(*)::int AS n FROM saved.matches WHERE search_id = ${publicId.slice(3)}::uuid`)[0]!
    .n as number;

/** The distinct lists of searches (public ids) in a load's match records (saved.match_records). */
const recordsOf = async (loadId: number | string) =>
  (
    await sql<{ ids: string[] }[]>`
      SELECT DISTINCT ARRAY(SELECT saved.public_id(x) FROM unnest(search_ids) x) AS ids
        FROM saved.match_records WHERE load_id = ${loadId} ORDER BY 1`
  ).map((r) => r.ids);

async function newSearch(key: string, name: string, deliver?: { webhook_endpoints: string[] }) {
  const res = await api(ctx, key).post('/v1/saved-searches', {
    name,
    resource: 'tax_delinquencies',
    params: { county: 'liberty' },
    ...(deliver ? { deliver } : {}),
  });
  if (res.statusCode !== 201) throw new Error(res.body);
  return res.json().data.id as string;
}

t.test('deleting a search deletes its matches and no other', async (t) => {
  const { key } = await ctx.newClient('lead_feed');
  const [a, b] = [await newSearch(key, 'a'), await newSearch(key, 'b')];
  const load = await importList(db, 'liberty', 2041, rows('DA'));
  t.equal(await matchesOf(a), 12, 'the import matched the first search');
  t.equal(await matchesOf(b), 12, 'and the second');
  t.equal((await api(ctx, key).del(`/v1/saved-searches/${a}`)).statusCode, 204);
  t.equal(await matchesOf(a), 0, 'the deleted search has no match left');
  t.equal(await matchesOf(b), 12, 'the other keeps its matches');
  t.same(await recordsOf(load.loadId), [[b]], "the records it shared keep the other search's id only");
  t.equal((await api(ctx, key).del(`/v1/saved-searches/${b}`)).statusCode, 204);
  t.same(await recordsOf(load.loadId), [], 'a record no search is left in goes');
});

t.test("one statement deleting a client's searches deletes all their matches", async (t) => {
  const other = await ctx.newClient('lead_feed');
  const [c, d] = [await newSearch(other.key, 'c'), await newSearch(other.key, 'd')];
  const load = await importList(db, 'liberty', 2042, rows('DC'));
  t.equal((await matchesOf(c)) + (await matchesOf(d)), 24, 'matched');
  await sql`DELETE FROM saved.searches WHERE client_id = ${other.client.id}`;
  t.equal((await matchesOf(c)) + (await matchesOf(d)), 0, 'gone with them');
  t.same(await recordsOf(load.loadId), [], 'and the records they alone had matched');
});

t.test('a deletion during a matching waits for it, then deletes what it wrote', async (t) => {
  const { key } = await ctx.newClient('lead_feed');
  const s = await newSearch(key, 'd');
  let deletion: Promise<{ statusCode: number }> | undefined;
  await importList(db, 'liberty', 2043, rows('DD'), { match: false });
  await sql.begin(async (tx) => {
    await tx`SELECT saved.match_next()`;
    const [r] = await tx`SELECT count(*)::int AS n FROM saved.matches WHERE search_id = ${s.slice(3)}::uuid`;
    t.equal(r!.n, 12, 'the matching has written the matches');
    deletion = api(ctx, key).del(`/v1/saved-searches/${s}`);
    // the deletion waits for the lock the matching holds to its commit
    for (let i = 0; i < 500; i++) {
      const [w] = await sql`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`;
      if (w!.n > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error('the deletion never waited for the matching');
  });
  t.equal((await deletion!).statusCode, 204, 'deleted after the matching committed');
  t.equal(await matchesOf(s), 0, "no match of the deleted search is left from the matching's commit");
});

t.test("a deleted search's events not yet sent go nowhere, and another search's still go", async (t) => {
  const { key } = await ctx.newClient('lead_feed');
  const r = await receiver(t);
  const ep = await api(ctx, key).create({ url: r.url, events: ['county.data_refreshed'], counties: ['broward'] });
  const deliver = { webhook_endpoints: [ep.id] };
  const [gone, kept] = [await newSearch(key, 'gone', deliver), await newSearch(key, 'kept', deliver)];
  const fanOut = async () => {
    for (let i = 0; i < 100; i++) if (!(await sql`SELECT (webhooks.fan_out(1000)).more`)[0]!.more) return;
  };
  /** The search's deliveries, by import: [load id, status, reason]. */
  const deliveriesOf = async (publicId: string) =>
    (
      await sql<{ load_id: string; status: string; reason: string | null }[]>`
        SELECT e.load_id::text, d.status, d.reason FROM webhooks.deliveries d JOIN webhooks.events e ON e.id = d.event_id
         WHERE e.data ->> 'saved_search_id' = ${publicId} ORDER BY e.id`
    ).map((x) => [x.load_id, x.status, x.reason]);
  const fanned = await importList(db, 'liberty', 2044, rows('DE'));
  await fanOut();
  const queued = await importList(db, 'liberty', 2045, rows('DF')); // its events not fanned out yet
  t.same(await deliveriesOf(gone), [[fanned.loadId, 'pending', null]], 'the first import made a pending delivery');
  t.equal((await api(ctx, key).del(`/v1/saved-searches/${gone}`)).statusCode, 204, 'deleted');
  await fanOut();
  t.same(
    await deliveriesOf(gone),
    [[fanned.loadId, 'skipped', 'the saved search was deleted']],
    'its pending delivery is skipped with the reason, and its queued event made none',
  );
  t.same(
    await deliveriesOf(kept),
    [
      [fanned.loadId, 'pending', null],
      [queued.loadId, 'pending', null],
    ],
    "the other search's events still go",
  );
  await r.close();
});
