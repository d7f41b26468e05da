// The offline base map: api.basemap_tile decoded with @mapbox/vector-tile (its layers, the county names, the tile
// bounds, bad coordinates), ingest.refresh_county_shapes (the shapes cover the mapped parcels, follow a change of
// the parcels, leave the unmapped counties at their seats), and GET /explorer/basemap over HTTP (public, cached).
import t from 'tap';
import { VectorTile, type VectorTileFeature } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { buildTestApp } from '../helpers/app.ts';

const { app, db } = await buildTestApp(t);
const sql = db.sql;

/** The XYZ tile holding a point at a zoom. */
function tileOf(lng: number, lat: number, z: number): [number, number, number] {
  const n = 2 ** z;
  const r = (lat * Math.PI) / 180;
  return [z, Math.floor(((lng + 180) / 360) * n), Math.floor(((1 - Math.asinh(Math.tan(r)) / Math.PI) / 2) * n)];
}

async function tileOfSql([z, x, y]: number[]): Promise<Buffer> {
  const [row] = await sql<{ tile: Buffer }[]>`SELECT api.basemap_tile(${z!}, ${x!}, ${y!}) AS tile`;
  return row!.tile;
}

function layers(body: Buffer): Record<string, VectorTileFeature[]> {
  const tile = new VectorTile(new PbfReader(body));
  return Object.fromEntries(
    Object.entries(tile.layers).map(([name, layer]) => [
      name,
      Array.from({ length: layer.length }, (_, i) => layer.feature(i)),
    ]),
  );
}

const refresh = (ids: number[] | null = null) =>
  sql<{ county_id: number; parcels_mapped: number; mapped: boolean }[]>`
    SELECT county_id::int, parcels_mapped, mapped FROM ingest.refresh_county_shapes(${ids}::smallint[])`;

t.test('before any refresh: the state and all 67 county names, at their seats', async (t) => {
  const all = layers(await tileOfSql([0, 0, 0]));
  t.same(Object.keys(all).sort(), ['county_labels', 'florida'], 'no county shape yet');
  t.equal(all.florida!.length, 1);
  t.equal(all.florida![0]!.type, 3, 'Florida is a polygon');
  const labels = all.county_labels!;
  t.equal(labels.length, 67, 'every county named');
  const byName = new Map(labels.map((f) => [f.properties.name, f]));
  for (const name of ['Miami-Dade', 'St. Johns', 'DeSoto', 'Liberty', 'Palm Beach']) t.ok(byName.has(name), name);
  const orange = byName.get('Orange')!;
  t.equal(orange.id, 48, 'the feature id is the county id');
  t.match(orange.properties, { slug: 'orange', seat: 'Orlando', mapped: false, parcels_mapped: 0 });
  t.ok(Number(orange.properties.parcel_count) > 0, 'Orange has parcels (fixtures)');
  t.equal(byName.get('Baker')!.properties.parcel_count, 0, 'Baker has none');
  // Orlando (-81.379, 28.538) at zoom 0: a 4096 grid over the world, about 10 km a unit
  const [pt] = orange.loadGeometry()[0]!;
  t.ok(Math.abs(pt!.x - ((-81.379 + 180) / 360) * 4096) <= 1, 'at its seat: x');
  const lat = (28.538 * Math.PI) / 180;
  t.ok(Math.abs(pt!.y - ((1 - Math.asinh(Math.tan(lat)) / Math.PI) / 2) * 4096) <= 1, 'at its seat: y');
});

t.test('tile bounds: a tile holds what meets it, nothing else; away from Florida, nothing', async (t) => {
  const zxy = tileOf(-81.379, 28.538, 7); // central Florida
  const names = layers(await tileOfSql(zxy)).county_labels!.map((f) => String(f.properties.name));
  const expected = await sql<{ name: string }[]>`
    SELECT c.name FROM core.county_shapes s JOIN core.counties c ON c.id = s.county_id
     WHERE ST_Intersects(s.label_point, ST_Transform(ST_TileEnvelope(${zxy[0]}::int, ${zxy[1]}::int, ${zxy[2]}::int,
                                                                     margin => 64.0 / 4096), 4326))
     ORDER BY 1`;
  t.ok(expected.length > 3 && expected.length < 67, `${expected.length} labels within the tile and its buffer`);
  t.same(names.sort(), expected.map((r) => r.name).sort(), 'exactly those');
  t.ok(names.includes('Orange') && !names.includes('Escambia'), 'Orange in, Escambia (Pensacola) out');
  t.equal((await tileOfSql(tileOf(2.35, 48.85, 6))).length, 0, 'Paris: an empty tile');
  t.equal((await tileOfSql(tileOf(-84.5, 27, 9))).length, 0, 'the Gulf of Mexico: an empty tile');
});

t.test('bad coordinates: 22023 naming the bound', async (t) => {
  for (const [zxy, message] of [
    [[23, 0, 0], /z: must be a zoom level from 0 to 22/],
    [[-1, 0, 0], /z: must be/],
    [[3, 8, 0], /x: must be from 0 to 7 at zoom 3/],
    [[3, 0, -1], /y: must be from 0 to 7 at zoom 3/],
  ] as const) {
    await t.rejects(tileOfSql([...zxy]), { code: '22023', message }, zxy.join('/'));
  }
});

t.test('the refresh draws each loaded county from its mapped parcels', async (t) => {
  const rows = await refresh();
  t.equal(rows.length, 67, 'every county refreshed');
  const counts = await sql<{ county_id: number; n: number }[]>`
    SELECT county_id::int, count(centroid)::int AS n FROM core.parcels GROUP BY 1 HAVING count(centroid) > 0`;
  t.ok(counts.length >= 6, `${counts.length} counties with mapped parcels (fixtures)`);
  t.same(
    rows.filter((r) => r.mapped).map((r) => [r.county_id, r.parcels_mapped]),
    counts.map((c) => [c.county_id, c.n]).sort((a, b) => a[0]! - b[0]!),
    'a shape for each, drawn from all its mapped parcels',
  );
  const [cover] = await sql<{ outside: number; mislabelled: number }[]>`
    SELECT (SELECT count(*)::int FROM core.parcels p JOIN core.county_shapes s USING (county_id)
             WHERE p.centroid IS NOT NULL AND NOT ST_Covers(s.shape, p.centroid)) AS outside,
           (SELECT count(*)::int FROM core.county_shapes
             WHERE shape IS NOT NULL AND NOT ST_Covers(shape, label_point)) AS mislabelled`;
  t.equal(cover!.outside, 0, 'every mapped parcel lies inside its county shape');
  t.equal(cover!.mislabelled, 0, 'every name sits inside its shape');
  const [unmapped] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM core.county_shapes
     WHERE shape IS NULL AND (parcels_mapped <> 0 OR NOT label_point ~= seat_point OR refreshed_at IS NULL)`;
  t.equal(unmapped!.n, 0, 'the others: no shape, the name at the seat, refreshed');

  // the tile around downtown Miami now holds Miami-Dade's shape
  const miami = layers(await tileOfSql(tileOf(-80.195, 25.771, 12)));
  t.same(
    miami.counties!.map((f) => [f.id, f.properties.name, f.properties.slug]),
    [[13, 'Miami-Dade', 'miami-dade']],
    'the county shape, named',
  );
  t.equal(miami.counties![0]!.type, 3, 'a polygon');
  t.match(miami.county_labels!.find((f) => f.id === 13)!.properties, { mapped: true, parcels_mapped: 382 });
  t.ok(
    (await refresh()).every((r, i) => r.parcels_mapped === rows[i]!.parcels_mapped),
    'a second refresh draws the same',
  );
});

t.test('a refresh follows the parcels: one county at a time, and back to the seat when none is mapped', async (t) => {
  await refresh();
  const [before] = await sql<{ orange: string; broward: string }[]>`
    SELECT (SELECT ST_AsText(shape) FROM core.county_shapes WHERE county_id = 48) AS orange,
           (SELECT ST_AsText(shape) FROM core.county_shapes WHERE county_id = 6) AS broward`;
  await sql`UPDATE core.parcels SET geom = NULL, centroid = NULL WHERE county_id IN (48, 6)`;
  t.same(await refresh([48]), [{ county_id: 48, parcels_mapped: 0, mapped: false }], 'only the county asked for');
  const [after] = await sql<{ orange: string | null; broward: string; at_seat: boolean }[]>`
    SELECT (SELECT ST_AsText(shape) FROM core.county_shapes WHERE county_id = 48) AS orange,
           (SELECT ST_AsText(shape) FROM core.county_shapes WHERE county_id = 6) AS broward,
           (SELECT label_point ~= seat_point FROM core.county_shapes WHERE county_id = 48) AS at_seat`;
  t.equal(after!.orange, null, 'Orange lost its shape');
  t.ok(after!.at_seat, 'and its name went back to Orlando');
  t.equal(after!.broward, before!.broward, 'Broward untouched until it is refreshed');
  t.not(before!.orange, null);
});

t.test('GET /explorer/basemap: public, free, cached, and a 400 for bad coordinates', async (t) => {
  const res = await app.inject({ url: '/explorer/basemap/5/8/13.mvt' });
  t.equal(res.statusCode, 200, 'no key needed');
  t.equal(res.headers['content-type'], 'application/vnd.mapbox-vector-tile');
  t.equal(res.headers['cache-control'], 'public, max-age=3600');
  t.equal(res.headers['x-ratelimit-limit'], undefined, 'outside the metered API');
  t.same(res.rawPayload, await tileOfSql([5, 8, 13]), 'the bytes of api.basemap_tile');
  t.ok(layers(res.rawPayload).florida, 'Florida is in it');
  const again = await app.inject({
    url: '/explorer/basemap/5/8/13.mvt',
    headers: { 'if-none-match': String(res.headers.etag) },
  });
  t.equal(again.statusCode, 304, 'revalidated by its ETag');
  t.equal((await app.inject({ url: '/explorer/basemap/6/0/0.mvt' })).statusCode, 204, 'an empty tile: 204');
  for (const [path, message] of [
    ['23/0/0', "path parameter 'z' must be <= 22"],
    ['3/8/0', 'x: must be from 0 to 7 at zoom 3'],
    ['3/0/8', 'y: must be from 0 to 7 at zoom 3'],
    ['a/0/0', "path parameter 'z' must be integer"],
    ['3/0/-1', "path parameter 'y' must be >= 0"],
  ] as const) {
    const bad = await app.inject({ url: `/explorer/basemap/${path}.mvt` });
    t.equal(bad.statusCode, 400, path);
    t.equal(bad.json().error.message, message, `${path}: the error envelope says why`);
  }
});
