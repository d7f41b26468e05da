// GeoJSON of parcels: valid per RFC 7946 (check-geojson and GDAL's ogrinfo read it), the same parcels and fields as
// JSON, 7 decimals, the right-hand rule, and not plan-gated.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check } from '@placemarkio/check-geojson';
import { buildTestApp } from '../helpers/app.ts';

const { app, db, get, newClient, invalidate } = await buildTestApp(t);
const sql = db.sql;
await sql`UPDATE accounts.clients SET custom_rpm = 1000000, custom_monthly_credits = 100000000`;

type Hit = Record<string, unknown> & { id: number; geometry: string | null };
interface Feature {
  type: 'Feature';
  id: number;
  geometry: { type: string; coordinates: unknown } | null;
  properties: Record<string, unknown>;
}

const dir = mkdtempSync(join(tmpdir(), 'geojson-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** ogrinfo's summary of a saved answer (GDAL reads the file as is). */
function ogrinfo(name: string, body: string): string {
  const file = join(dir, `${name}.geojson`);
  writeFileSync(file, body);
  return execFileSync('ogrinfo', ['-ro', '-al', '-so', file], { encoding: 'utf8' });
}

/** Twice the signed area of a ring (positive: counterclockwise). */
const signedArea = (ring: number[][]) =>
  ring.slice(1).reduce((sum, [x, y], i) => sum + (ring[i]![0]! * y! - x! * ring[i]![1]!), 0);

const withoutGeometry = (hit: Hit) => Object.fromEntries(Object.entries(hit).filter(([k]) => k !== 'geometry'));

t.test('search: a FeatureCollection of the same parcels, in order, with their polygons', async (t) => {
  for (const url of [
    '/v1/parcels/search?county=miami-dade,liberty&limit=500',
    '/v1/parcels/search?query=smith john&limit=20',
    '/v1/parcels/search?county=liberty&sort=just_value_desc&limit=100',
  ]) {
    const json = (await get(url)).json();
    const hits = json.data as Hit[];
    for (const [how, res] of [
      ['format=geojson', await get(`${url}&format=geojson`)],
      ['Accept', await get(url, { accept: 'application/geo+json' })],
    ] as const) {
      t.equal(res.statusCode, 200, `${url} ${how}`);
      t.equal(res.headers['content-type'], 'application/geo+json');
      const fc = check(res.body) as unknown as { type: string; features: Feature[] };
      t.equal(fc.type, 'FeatureCollection', 'valid GeoJSON (check-geojson)');
      t.same(
        fc.features.map((f) => f.id),
        hits.map((h) => h.id),
        `${url}: the same parcels in the same order`,
      );
      t.same(
        fc.features.map((f) => f.properties),
        hits.map(withoutGeometry),
        'properties: the ParcelHit fields, in order',
      );
      t.same(
        fc.features.map((f) => Object.keys(f.properties)),
        hits.map((h) => Object.keys(withoutGeometry(h))),
        'in the JSON order',
      );
      t.equal(Number(res.headers['x-total-count']), json.pagination.total);
    }
  }
  const fc = JSON.parse((await get('/v1/parcels/search?county=liberty&limit=100&format=geojson')).body);
  const unmapped = fc.features.find((f: Feature) => f.id === 15);
  t.equal(unmapped.geometry, null, 'an unmapped parcel is a Feature with a null geometry');
  t.ok(
    fc.features.filter((f: Feature) => f.id !== 15).every((f: Feature) => f.geometry?.type === 'Polygon'),
    'the others have their polygon, although JSON search results have none',
  );
});

t.test('one parcel: a Feature whose geometry is the JSON geometry', async (t) => {
  for (const [url, type] of [
    ['/v1/parcels/1', 'Polygon'],
    ['/v1/parcels/5', 'MultiPolygon'],
    ['/v1/parcels/by-parcel-id?county=miami-dade&parcel_id=01-3132-035-0010', 'Polygon'],
    ['/v1/parcels/by-parcel-id?county=broward&parcel_id=494213BA0140', 'Polygon'],
  ] as const) {
    const hit = (await get(url)).json().data as Hit;
    const res = await get(`${url}${url.includes('?') ? '&' : '?'}format=geojson`);
    t.equal(res.statusCode, 200, url);
    t.equal(res.headers['content-type'], 'application/geo+json');
    t.equal(res.headers['x-total-count'], undefined, 'no list headers on one object');
    const f = check(res.body) as unknown as Feature;
    t.equal(f.type, 'Feature');
    t.equal(f.id, hit.id);
    t.equal(f.geometry!.type, type);
    t.same(f.geometry, JSON.parse(hit.geometry!), 'the polygon of the JSON answer');
    t.same(f.properties, withoutGeometry(hit));
    const info = ogrinfo(`one-${hit.id}`, res.body);
    t.match(info, /Feature Count: 1/, 'ogrinfo reads a saved Feature');
  }
  const unmapped = check((await get('/v1/parcels/15?format=geojson')).body) as unknown as Feature;
  t.equal(unmapped.geometry, null);
});

t.test('GDAL reads a saved answer as is: WGS 84, every feature, every field', async (t) => {
  const body = (await get('/v1/parcels/search?county=miami-dade&limit=200&format=geojson')).body;
  const info = ogrinfo('search', body);
  t.match(info, /Feature Count: 200/);
  t.match(info, /ID\["EPSG",4326\]/, 'RFC 7946 coordinates are WGS 84');
  for (const field of ['parcel_id: String', 'owner_name: String', 'just_value: Integer', 'centroid_lat: Real']) {
    t.match(info, field);
  }
  const gpkg = join(dir, 'search.gpkg');
  execFileSync('ogr2ogr', ['-f', 'GPKG', gpkg, join(dir, 'search.geojson')]);
  t.match(execFileSync('ogrinfo', ['-ro', '-so', gpkg, 'search'], { encoding: 'utf8' }), /Feature Count: 200/);
});

t.test('coordinates: 7 decimals; exterior rings counterclockwise, holes clockwise (RFC 7946 3.1.6)', async (t) => {
  // parcel 3 stored clockwise with a clockwise hole's opposite, with more decimals than the answer keeps
  await sql`UPDATE core.parcels SET geom = ST_Multi(ST_GeomFromText(
              'POLYGON((-80.123456789 25.5, -80.123456789 25.51, -80.11 25.51, -80.11 25.5, -80.123456789 25.5),
                       (-80.12 25.502, -80.115 25.502, -80.115 25.505, -80.12 25.505, -80.12 25.502))', 4326))
            WHERE id = 3`;
  const f = JSON.parse((await get('/v1/parcels/3?format=geojson')).body) as Feature;
  const [outer, hole] = (f.geometry as { coordinates: number[][][] }).coordinates as [number[][], number[][]];
  t.ok(signedArea(outer) > 0, 'exterior ring counterclockwise');
  t.ok(signedArea(hole) < 0, 'hole clockwise');
  t.ok(
    outer.some(([x]) => x === -80.1234568),
    '-80.123456789 is written with 7 decimals',
  );
  check(JSON.stringify(f));
});

t.test('pagination headers, errors as JSON, not plan-gated, one credit', async (t) => {
  const res = await get('/v1/parcels/search?county=miami-dade&limit=10&offset=10&format=geojson');
  t.match(res.headers.link, /offset=20&format=geojson>; rel="next", <[^>]*offset=0&format=geojson>; rel="prev"$/);
  t.equal(res.headers.vary, 'Accept');
  const missing = await get('/v1/parcels/999999?format=geojson');
  t.equal(missing.statusCode, 404);
  t.match(missing.headers['content-type'], /^application\/json/);
  const bad = await get('/v1/parcels/search?format=geojson&near=1,2');
  t.equal(bad.statusCode, 400);
  t.match(bad.json().error.message, /near/, 'the message of the JSON answer');
  t.equal((await get('/v1/parcels/search?format=xml')).statusCode, 400);
  t.equal((await get('/v1/parcels/1/sales?format=geojson')).statusCode, 400, 'sales are not parcels: no GeoJSON there');

  for (const plan of ['free', 'developer']) {
    const c = await newClient(plan);
    await invalidate(c.client.id);
    const one = await app.inject({ url: '/v1/parcels/1?format=geojson', headers: c.headers });
    t.equal(one.statusCode, 200, `${plan}: GeoJSON is JSON, on every plan`);
    const many = await app.inject({
      url: '/v1/parcels/search?limit=3',
      headers: { ...c.headers, accept: 'application/geo+json' },
    });
    t.equal(many.statusCode, 200);
    await app.flushUsage();
    const usage = (await app.inject({ url: '/v1/account/usage', headers: c.headers })).json().data;
    t.equal(usage.events_count, 2, 'one credit a request');
  }
});
