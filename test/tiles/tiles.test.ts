// Vector tiles of parcels, decoded with @mapbox/vector-tile: the features of known tiles, the zoom rules, bounds,
// ETag and 304 (not charged), and the TileJSON document.
import t from 'tap';
import { VectorTile, type VectorTileFeature } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import postgres from 'postgres';
import { buildTestApp } from '../helpers/app.ts';

const { app, db, get, key, newClient } = await buildTestApp(t);
const sql = db.sql;
await sql`UPDATE accounts.clients SET custom_rpm = 1000000, custom_monthly_credits = 100000000`;

/** The XYZ tile holding a point at a zoom. */
function tileOf(lng: number, lat: number, z: number): [number, number, number] {
  const n = 2 ** z;
  const r = (lat * Math.PI) / 180;
  return [z, Math.floor(((lng + 180) / 360) * n), Math.floor(((1 - Math.asinh(Math.tan(r)) / Math.PI) / 2) * n)];
}
/** Inside parcel 1 (fixtures/README.md). */
const P1 = [-80.19985, 25.770135] as const;
const url = ([z, x, y]: number[]) => `/v1/tiles/parcels/${z}/${x}/${y}.mvt`;

function features(body: Buffer): VectorTileFeature[] {
  const tile = new VectorTile(new PbfReader(body));
  t.same(Object.keys(tile.layers), ['parcels'], 'one layer, parcels');
  const layer = tile.layers.parcels!;
  t.equal(layer.extent, 4096);
  return Array.from({ length: layer.length }, (_, i) => layer.feature(i));
}

/** Ids of the parcels whose polygon meets the tile, grown by `buffer` of 4096 units on each side. */
async function parcelsIn([z, x, y]: [number, number, number], buffer: number): Promise<number[]> {
  const rows = await sql<{ id: number }[]>`
    SELECT id::int FROM core.parcels
     WHERE ST_Intersects(geom, ST_Transform(ST_TileEnvelope(${z}::int, ${x}::int, ${y}::int, margin => ${buffer / 4096}::float8), 4326))
     ORDER BY 1`;
  return rows.map((r) => r.id);
}

t.test('a polygon tile at zoom 16: the parcels there, their properties, their shapes', async (t) => {
  const zxy = tileOf(P1[0], P1[1], 16);
  const res = await get(url(zxy));
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'application/vnd.mapbox-vector-tile');
  const fs = features(res.rawPayload);
  const ids = fs.map((f) => f.id!).sort((a, b) => a - b);
  const inside = await parcelsIn(zxy, 0);
  const buffered = await parcelsIn(zxy, 64);
  t.ok(inside.length > 10, `${inside.length} parcels meet the tile`);
  t.ok(
    inside.every((id) => ids.includes(id)),
    'every parcel meeting the tile is in it',
  );
  t.ok(
    ids.every((id) => buffered.includes(id)),
    'and nothing beyond its buffer',
  );
  t.ok(
    fs.every((f) => f.type === 3),
    'polygons',
  );
  const one = fs.find((f) => f.id === 1)!;
  t.same(one.properties, {
    id: 1,
    parcel_id: '0131320350010',
    county: 'miami-dade',
    dor_use_code: '0100',
    just_value: 840500,
    owner_name: 'SMITH JOHN',
  });
  const ring = (one.toGeoJSON(zxy[1], zxy[2], 16).geometry as { coordinates: number[][][] }).coordinates[0]!;
  const lngs = ring.map((p) => p[0]!);
  const lats = ring.map((p) => p[1]!);
  // parcel 1 is the square (-80.2 25.77) - (-80.1997 25.77027); a z16 tile's grid step is about 15 cm
  t.ok(Math.abs(Math.min(...lngs) + 80.2) < 2e-6 && Math.abs(Math.max(...lngs) + 80.1997) < 2e-6, 'its longitudes');
  t.ok(Math.abs(Math.min(...lats) - 25.77) < 2e-6 && Math.abs(Math.max(...lats) - 25.77027) < 2e-6, 'its latitudes');
  const five = fs.find((f) => f.id === 5)!;
  t.equal(five.loadGeometry().length, 2, 'a MultiPolygon of two parts keeps both rings');
  t.notOk(
    fs.some((f) => f.id === 15),
    'an unmapped parcel is on no tile',
  );
});

t.test('zoom rules: polygons from 15, points at 14, empty below and where nothing is', async (t) => {
  const z15 = features((await get(url(tileOf(P1[0], P1[1], 15)))).rawPayload);
  t.ok(z15.length > 50 && z15.every((f) => f.type === 3), `zoom 15: ${z15.length} polygons`);
  const z14res = await get(url(tileOf(P1[0], P1[1], 14)));
  t.equal(z14res.statusCode, 200);
  const z14 = features(z14res.rawPayload);
  const inMiamiDade = await sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM core.parcels WHERE county_id = 13 AND centroid IS NOT NULL`;
  t.equal(z14.length, inMiamiDade[0]!.n, 'zoom 14: a point for every mapped parcel of the block');
  t.ok(
    z14.every((f) => f.type === 1),
    'points',
  );
  t.same(z14.find((f) => f.id === 1)!.properties, { id: 1, dor_use_code: '0100' }, 'with id and use code only');
  const [lng, lat] = (
    z14.find((f) => f.id === 1)!.toGeoJSON(...(tileOf(P1[0], P1[1], 14).slice(1) as [number, number]), 14).geometry as {
      coordinates: number[];
    }
  ).coordinates as [number, number];
  t.ok(Math.abs(lng - P1[0]) < 2e-5 && Math.abs(lat - P1[1]) < 2e-5, 'the point inside the parcel');

  for (const z of [13, 10, 0]) {
    const res = await get(url(tileOf(P1[0], P1[1], z)));
    t.equal(res.statusCode, 204, `zoom ${z}: empty`);
    t.equal(res.rawPayload.length, 0);
    t.equal(res.headers['content-type'], undefined);
  }
  const sea = await get(url(tileOf(-79.5, 25.77, 16)));
  t.equal(sea.statusCode, 204, 'the Atlantic: empty');
  t.ok(sea.headers.etag, 'an empty tile has a validator too');
  const deep = await get(url(tileOf(P1[0], P1[1], 22)));
  t.equal(deep.statusCode, 200, 'zoom 22 is served');
  t.equal(
    features(deep.rawPayload)
      .map((f) => f.id)
      .join(),
    '1',
    'a 10 m tile inside parcel 1 holds parcel 1',
  );
});

t.test('bounds: 400 naming the coordinate; unknown shapes are 404 or 400', async (t) => {
  for (const [path, message] of [
    ['/v1/tiles/parcels/23/0/0.mvt', "path parameter 'z' must be <= 22"],
    ['/v1/tiles/parcels/-1/0/0.mvt', "path parameter 'z' must be >= 0"],
    ['/v1/tiles/parcels/16/65536/0.mvt', 'x: must be from 0 to 65535 at zoom 16'],
    ['/v1/tiles/parcels/16/0/65536.mvt', 'y: must be from 0 to 65535 at zoom 16'],
    ['/v1/tiles/parcels/0/1/0.mvt', 'x: must be from 0 to 0 at zoom 0'],
    ['/v1/tiles/parcels/16/-1/0.mvt', "path parameter 'x' must be >= 0"],
    ['/v1/tiles/parcels/16/1.5/0.mvt', "path parameter 'x' must be integer"],
    ['/v1/tiles/parcels/16/0/4194304.mvt', "path parameter 'y' must be <= 4194303"],
    ['/v1/tiles/parcels/16/0/99999999999999999999.mvt', "path parameter 'y' must be <= 4194303"],
    ['/v1/tiles/parcels/z/0/0.mvt', "path parameter 'z' must be integer"],
  ] as const) {
    const res = await get(path);
    t.equal(res.statusCode, 400, path);
    t.equal(res.json().error.message, message, path);
  }
  t.equal((await get('/v1/tiles/parcels/16/0/0')).statusCode, 404, 'the .mvt suffix is part of the route');
  t.equal((await get('/v1/tiles/parcels/16/0/0.pbf')).statusCode, 404);
  t.equal((await get(url([0, 0, 0]))).statusCode, 204, 'the whole world at zoom 0 is a valid, empty tile');
  const last = 2 ** 22 - 1;
  t.equal((await get(url([22, last, last]))).statusCode, 204, 'the last tile of zoom 22');
  const anonymous = await app.inject({ url: url(tileOf(P1[0], P1[1], 16)) });
  t.equal(anonymous.statusCode, 401, 'tiles need a key');
});

/** Charged requests of a client so far (pending and flushed). */
async function used(headers: Record<string, string>): Promise<number> {
  await app.flushUsage();
  return (await app.inject({ url: '/v1/account/usage', headers })).json().data.events_count;
}

t.test('a strong ETag and Cache-Control; If-None-Match gives a 304, which is not charged', async (t) => {
  const c = await newClient('pro');
  const tile = url(tileOf(P1[0], P1[1], 16));
  const call = (headers: Record<string, string> = {}) =>
    app.inject({ url: tile, headers: { ...c.headers, ...headers } });
  const first = await call();
  t.equal(first.statusCode, 200);
  const etag = first.headers.etag as string;
  t.match(etag, /^"[\w-]{22}"$/, 'a strong validator (no W/)');
  t.equal(first.headers['cache-control'], 'private, max-age=3600');
  t.equal((await call()).headers.etag, etag, 'the same tile, the same validator');
  t.equal(await used(c.headers), 2, 'a 200 costs one credit');

  for (const inm of [etag, `W/${etag}`, '*', `"other", ${etag}`]) {
    const res = await call({ 'if-none-match': inm });
    t.equal(res.statusCode, 304, `If-None-Match: ${inm}`);
    t.equal(res.rawPayload.length, 0);
    t.equal(res.headers.etag, etag);
    t.equal(res.headers['cache-control'], 'private, max-age=3600');
    t.ok(res.headers['x-ratelimit-remaining'], 'the rate-limit headers of every answer');
  }
  t.equal(await used(c.headers), 2, 'four 304s cost nothing');
  t.equal((await call({ 'if-none-match': '"other"' })).statusCode, 200, 'another validator: the tile');
  t.equal(await used(c.headers), 3);

  const head = await app.inject({ method: 'HEAD', url: tile, headers: { ...c.headers, 'if-none-match': etag } });
  t.equal(head.statusCode, 304, 'HEAD revalidates too');

  const empty = await call({ 'if-none-match': '' });
  t.equal(empty.statusCode, 200, 'an empty If-None-Match matches nothing');

  await sql`UPDATE core.parcels SET owner_name = 'SMITH JOHN JR' WHERE id = 1`;
  t.teardown(() => sql`UPDATE core.parcels SET owner_name = 'SMITH JOHN' WHERE id = 1`);
  const changed = await call({ 'if-none-match': etag });
  t.equal(changed.statusCode, 200, 'a changed tile is sent again');
  t.not(changed.headers.etag, etag, 'with a new validator');
  t.equal(features(changed.rawPayload).find((f) => f.id === 1)!.properties.owner_name, 'SMITH JOHN JR');

  const sea = url(tileOf(-79.5, 25.77, 16));
  const empty204 = await app.inject({ url: sea, headers: c.headers });
  const again = await app.inject({
    url: sea,
    headers: { ...c.headers, 'if-none-match': empty204.headers.etag as string },
  });
  t.equal(again.statusCode, 304, 'an empty tile revalidates as well');
});

t.test('TileJSON: free, the tile template, the zooms and fields the tiles have', async (t) => {
  const c = await newClient('developer');
  for (const prefix of ['/v1', '/api/v1']) {
    const res = await app.inject({
      url: `${prefix}/tiles/parcels.json`,
      headers: { ...c.headers, host: 'tiles.example:8080' },
    });
    t.equal(res.statusCode, 200);
    const doc = res.json();
    t.equal(doc.tilejson, '3.0.0');
    t.same(doc.tiles, [`http://tiles.example:8080${prefix}/tiles/parcels/{z}/{x}/{y}.mvt`]);
    t.equal(doc.minzoom, 14);
    t.equal(doc.maxzoom, 16);
    t.equal(doc.vector_layers[0].id, 'parcels');
    t.same(Object.keys(doc.vector_layers[0].fields), [
      'id',
      'parcel_id',
      'county',
      'dor_use_code',
      'just_value',
      'owner_name',
    ]);
    const [z, x, y] = tileOf(P1[0], P1[1], doc.maxzoom);
    const template = (doc.tiles[0] as string).replace('http://tiles.example:8080', '');
    const tile = await app.inject({
      url: template.replace('{z}', String(z)).replace('{x}', String(x)).replace('{y}', String(y)),
      headers: c.headers,
    });
    t.equal(tile.statusCode, 200, 'the template gives tiles');
    const fields = Object.keys(features(tile.rawPayload)[0]!.properties).sort();
    t.same(fields, Object.keys(doc.vector_layers[0].fields).sort(), 'the fields advertised are the fields sent');
    const below = await app.inject({ url: url(tileOf(P1[0], P1[1], doc.minzoom - 1)), headers: c.headers });
    t.equal(below.statusCode, 204, 'below minzoom: empty');
  }
  t.equal(await used(c.headers), 4, 'TileJSON is free; the tiles (two per base path) are charged');
});

t.test('api.parcel_tile in psql, as the API role: the same bytes; bad input is 22023', async (t) => {
  const api = postgres(db.apiUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => api.end());
  const [z, x, y] = tileOf(P1[0], P1[1], 16);
  const [row] = await api<{ tile: Buffer }[]>`SELECT api.parcel_tile(${z}, ${x}, ${y}) AS tile`;
  const http = await get(url([z, x, y]));
  t.ok(row!.tile.equals(http.rawPayload), 'the HTTP body is the function result');
  await t.rejects(api`SELECT api.parcel_tile(16, -1, 0)`, {
    code: '22023',
    message: 'x: must be from 0 to 65535 at zoom 16',
  });
  await t.rejects(api`SELECT api.parcel_tile(NULL, 0, 0)`, { code: '22023' });
  await t.rejects(api`SELECT api.parcel_tile(31, 0, 0)`, {
    code: '22023',
    message: 'z: must be a zoom level from 0 to 22',
  });
  const [zooms] = await api`SELECT * FROM api.parcel_tile_zooms()`;
  t.same(zooms, { min_zoom: 14, polygon_zoom: 15, max_zoom: 22 });
});

void key;
