// Roll history on the fixtures (fixtures/history.sql: 2024 and 2025 for Miami-Dade, Broward and Palm Beach; 2025
// only elsewhere): the rows and change flags written from the fixture's rules, the SDF sale that explains an owner
// change, a parcel new in 2025, the current parcels untouched; REST, MCP and psql give the same rows; a partition of
// one county's year can be swapped and dropped on its own.
import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildTestApp } from '../helpers/app.ts';

const { app, db, newClient } = await buildTestApp(t);
await app.listen({ host: '127.0.0.1', port: 0 });
const sql = db.sql;

interface Roll {
  roll_year: number;
  previous_roll_year: number | null;
  owner_name: string | null;
  just_value: number | null;
  just_value_change: number | null;
  just_value_change_pct: number | null;
  owner_changed: boolean | null;
  use_code_changed: boolean | null;
  dor_use_code: string | null;
  building_value: number | null;
  land_value: number | null;
  living_area_sqft: number | null;
  exemptions: Record<string, number> | null;
  sales: { sale_date: string; grantor: string | null; grantee: string | null }[];
}
const history = (id: number) => sql<Roll[]>`SELECT * FROM api.parcel_history(${id})`;
const parcel = async (id: number) =>
  (
    await sql<
      { just_value: string; land_value: string; owner_name: string; dor_use_code: string; parcel_id: string }[]
    >`
    SELECT just_value, land_value, owner_name, dor_use_code, parcel_id FROM core.parcels WHERE id = ${id}`
  )[0]!;
/** The fixture's rule for a 2024 value: 2025 / (1 + g), g = 30% for id % 10 = 5, else ((7 id) % 16 - 3)%. */
const growth = (id: number) => (id % 10 === 5 ? 30 : ((7 * id) % 16) - 3);
const value2024 = (v2025: number, id: number) => Math.round(v2025 / (1 + growth(id) / 100));
const pct = (now: number, before: number) => Math.round(((now - before) * 100 * 100) / before) / 100;

t.test('parcel 1: two years, newest first, value up by the rule, same owner, no sale joined', async (t) => {
  const rows = await history(1);
  const p = await parcel(1);
  t.same(
    rows.map((r) => r.roll_year),
    [2025, 2024],
  );
  const [y25, y24] = [...rows] as [Roll, Roll];
  t.equal(y25.just_value, Number(p.just_value), 'the newest year is the current parcel');
  t.equal(y24.just_value, value2024(Number(p.just_value), 1));
  t.equal(y25.previous_roll_year, 2024);
  t.equal(y25.just_value_change, y25.just_value! - y24.just_value!);
  t.equal(y25.just_value_change_pct, pct(y25.just_value!, y24.just_value!));
  t.equal(y25.owner_changed, false);
  t.equal(y25.use_code_changed, false);
  t.equal(y25.building_value, Number(p.just_value) - Number(p.land_value), 'building = just - land');
  t.same(y25.sales, []);
  t.equal(y24.previous_roll_year, null, 'the oldest row compares with nothing');
  t.equal(y24.owner_changed, null);
  t.equal(y24.just_value_change_pct, null);
});

t.test('an owner change explained by a 2024 SDF sale carries the sale; one without a sale has none', async (t) => {
  const [sold] = await sql<{ id: number; grantor: string; grantee: string; sale_date: string }[]>`
    SELECT p.id::int, s.grantor, s.grantee, s.sale_date::text FROM core.parcels p
      JOIN core.sales s ON s.county_id = p.county_id AND s.parcel_key = p.parcel_key
     WHERE p.county_id IN (13, 6, 50) AND p.id % 20 <> 3 AND s.grantor IS NOT NULL
       AND s.sale_date >= '2024-01-01' AND s.sale_date < '2025-01-01'
     ORDER BY p.id LIMIT 1`;
  const rows = await history(sold!.id);
  t.equal(rows[0]!.owner_changed, true);
  t.equal(rows[1]!.owner_name, sold!.grantor, '2024 owner is the seller');
  t.same(
    rows[0]!.sales.map((s) => [s.sale_date, s.grantor, s.grantee]),
    [[sold!.sale_date, sold!.grantor, sold!.grantee]],
  );
  // parcel 2 (SMITH JOHN & MARY): the spouse was added by a deed the SDF does not list
  const two = await history(2);
  t.equal(two[0]!.owner_changed, true);
  t.equal(two[1]!.owner_name, 'SMITH JOHN');
  t.same(two[0]!.sales, [], 'no sale between the rolls');
});

t.test('use code change, a 30% jump, exemptions, a parcel new in 2025, a county with one year', async (t) => {
  const eleven = await history(11); // id % 40 = 11: vacant in 2024
  t.equal(eleven[1]!.dor_use_code, '0000');
  t.equal(eleven[1]!.building_value, 0);
  t.equal(eleven[1]!.living_area_sqft, null);
  t.equal(eleven[0]!.use_code_changed, true);
  const five = await history(5);
  const p5 = await parcel(5);
  t.equal(five[0]!.just_value_change_pct, pct(Number(p5.just_value), value2024(Number(p5.just_value), 5)));
  t.ok(five[0]!.just_value_change_pct! > 29.9 && five[0]!.just_value_change_pct! < 30.1, 'about 30%');
  const [home] = await sql<{ id: number }[]>`
    SELECT id::int FROM core.parcels WHERE county_id = 13 AND dor_use_code = '0100' AND id % 2 = 0 AND id % 20 <> 3
     ORDER BY id LIMIT 1`;
  t.same((await history(home!.id))[1]!.exemptions, { '01': 25000 });
  t.same((await history(3)).length, 1, 'parcel 3 (id % 20 = 3) is new in 2025: one row');
  const three = (await history(3))[0]!;
  t.equal(three.owner_changed, null);
  t.equal(three.just_value_change_pct, null);
  t.equal((await history(12)).length, 1, 'Hillsborough has 2025 only');
  t.same(await history(999999), [], 'no row for an unknown id');
  const [gone] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM core.parcel_rolls r
     WHERE r.roll_year = 2024 AND NOT EXISTS (SELECT 1 FROM core.parcels p WHERE p.county_id = r.county_id AND p.parcel_id = r.parcel_id)`;
  const [parents] = await sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM core.parcels WHERE county_id IN (13, 6, 50) AND id % 20 = 3`;
  t.equal(gone!.n, parents!.n, 'each parcel new in 2025 had a 2024 parent that is gone');
});

t.test('the current parcels keep the change columns the history gives', async (t) => {
  const [r] = await sql<{ bad: number }[]>`
    SELECT count(*)::int AS bad FROM core.parcels p
     WHERE p.just_value_change_pct IS DISTINCT FROM (SELECT h.just_value_change_pct::numeric FROM api.parcel_history(p.id) h WHERE h.roll_year = p.roll_year)
        OR p.owner_changed_year IS DISTINCT FROM (SELECT max(h.roll_year) FROM api.parcel_history(p.id) h WHERE h.owner_changed)`;
  t.equal(r!.bad, 0);
  const [n] = await sql<{ changed: number; rolls: number }[]>`
    SELECT count(*) FILTER (WHERE owner_changed_year = 2025)::int AS changed, count(*)::int AS rolls FROM core.parcels`;
  t.ok(n!.changed > 0, 'some owners changed in 2025');
  t.equal(n!.rolls, 1555, 'the fixtures still load 1,555 current parcels');
});

t.test('a call reads no parcel it was not given and keeps one generic plan', async (t) => {
  t.same(await history(-1), [], 'no parcel, no row');
  // a custom plan, which the planner prefers for this query, is made at every call over every roll partition
  const [f] = await sql<{ config: string[] }[]>`
    SELECT proconfig AS config FROM pg_proc WHERE oid = 'api.parcel_history(bigint)'::regprocedure`;
  t.ok(f!.config.includes('plan_cache_mode=force_generic_plan'), f!.config.join(', '));
});

t.test('REST and MCP give what psql gives; 404 and 400', async (t) => {
  const c = await newClient('developer');
  for (const id of [1, 2, 3, 273]) {
    const res = await app.inject({ url: `/v1/parcels/${id}/history`, headers: c.headers });
    t.equal(res.statusCode, 200);
    t.same(res.json().data, JSON.parse(JSON.stringify(await history(id))), `parcel ${id}`);
  }
  const missing = await app.inject({ url: '/v1/parcels/999999/history', headers: c.headers });
  t.equal(missing.statusCode, 404);
  t.equal(missing.json().error.code, 'not_found');
  const bad = await app.inject({ url: '/v1/parcels/abc/history', headers: c.headers });
  t.equal(bad.statusCode, 400);

  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const client = new Client({ name: 'tap', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/api/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${c.key}` } },
    }),
  );
  t.teardown(() => client.close());
  const tool = (await client.callTool({ name: 'get_parcel_history', arguments: { id: 2 } })) as {
    isError?: boolean;
    content: { text: string }[];
    structuredContent?: { data: unknown };
  };
  t.notOk(tool.isError);
  t.same(tool.structuredContent?.data, JSON.parse(JSON.stringify(await history(2))));
  t.match(tool.content[0]!.text, /2 roll years; 2025 .*owner changed in 2025/);
  const none = (await client.callTool({ name: 'get_parcel_history', arguments: { id: 999999 } })) as {
    isError?: boolean;
  };
  t.ok(none.isError);
});

t.test('one county-year partition is swapped and dropped on its own', async (t) => {
  const before2025 =
    await sql`SELECT * FROM core.parcel_rolls WHERE county_id = 13 AND roll_year = 2025 ORDER BY parcel_id`;
  const broward = await sql`SELECT * FROM core.parcel_rolls WHERE county_id = 6 ORDER BY roll_year, parcel_id`;
  // a rebuilt 2024 Miami-Dade: the same rows with just value 1,000 higher
  await sql`CREATE TABLE core.rebuilt (LIKE core.parcel_rolls INCLUDING ALL)`;
  await sql`INSERT INTO core.rebuilt SELECT * FROM core.parcel_rolls WHERE county_id = 13 AND roll_year = 2024`;
  await sql`UPDATE core.rebuilt SET just_value = just_value + 1000`;
  const old24 = (await history(1))[1]!.just_value!;
  await sql`SELECT ingest.swap_roll_partition(2024::smallint, 13::smallint, 'core.rebuilt'::regclass)`;
  t.equal((await history(1))[1]!.just_value, old24 + 1000, 'the swapped-in year is read');
  t.equal(
    (await history(1))[0]!.just_value_change_pct,
    pct((await history(1))[0]!.just_value!, old24 + 1000),
    'the change is against the new year',
  );
  const [p1] = await sql<{ pct: string }[]>`SELECT just_value_change_pct::text AS pct FROM core.parcels WHERE id = 1`;
  t.equal(Number(p1!.pct), pct((await history(1))[0]!.just_value!, old24 + 1000), 'the parcel change column follows');
  t.same(
    await sql`SELECT * FROM core.parcel_rolls WHERE county_id = 13 AND roll_year = 2025 ORDER BY parcel_id`,
    before2025,
    'the other year is untouched',
  );
  await sql`SELECT ingest.drop_roll_partition(2024::smallint, 13::smallint)`;
  t.equal((await history(1)).length, 1, 'dropped: one year left');
  const [left] = await sql<{ pct: string | null; year: number | null }[]>`
    SELECT just_value_change_pct::text AS pct, owner_changed_year AS year FROM core.parcels WHERE id = 2`;
  t.same(left, { pct: null, year: null }, 'no previous year: no change on the parcel');
  t.same(
    await sql`SELECT * FROM core.parcel_rolls WHERE county_id = 6 ORDER BY roll_year, parcel_id`,
    broward,
    'another county is untouched',
  );
  t.same(await sql`SELECT roll_year FROM core.parcel_roll_years WHERE county_id = 13 ORDER BY 1`, [
    { roll_year: 2025 },
  ]);
  const [{ n }] = [...(await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM core.parcels`)] as [{ n: number }];
  t.equal(n, 1555, 'the current parcels are untouched');
});
