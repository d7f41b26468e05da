// Parcel geometry end to end: a zipped shapefile in State Plane (EPSG:2238) reprojected by ogr2ogr, polygons of
// one PARCELNO unioned, a bow tie made valid, unmatched and CO_NO 0 polygons rejected, parcels absent from the
// file cleared; Alachua from GeoJSON (--county, no CO_NO attribute) and GeoJSONSeq.
import t from 'tap';
import { createTestDatabase } from '../helpers/db.ts';
import { importNal } from '../../src/importers/nal.ts';
import { importParcelGeometry } from '../../src/importers/parcel-geometry.ts';
import { fixture, readRejects, rejectsPath } from './fixture.ts';

const db = await createTestDatabase();
t.teardown(() => db.drop());
const sql = db.sql;
const opts = (file: string, name: string, extra = {}) => ({
  file: fixture(file),
  databaseUrl: db.ownerUrl,
  rejects: rejectsPath(name),
  quiet: true,
  ...extra,
});
await importNal(opts('nal/NAL49F202501.csv', 'nal'));
await importNal(opts('nal/Hernando 27 Final NAL 2025.zip', 'nal2'));

t.test('Liberty shapefile', async (t) => {
  const s = await importParcelGeometry(opts('geometry/Liberty 49 PIN 2025.zip', 'liberty'));
  t.equal(s.rowsRead, 312);
  t.same(s.counties, [{ county: 'liberty', rows: 311, updated: 309, cleared: 1, guard: 'first load' }]);
  t.same(
    readRejects(rejectsPath('liberty')).map((r) => [r.line, r.reason]),
    [
      [313, 'CO_NO 0: FDOR matched this polygon to no roll record'],
      [312, 'PARCELNO 99-9S-99-9999-9999-9999 matches no parcel of county 39'],
    ],
  );
  const rows = await sql<
    { parcel_id: string; type: string; parts: number; valid: boolean; inside: boolean; area: number }[]
  >`
    SELECT parcel_id, GeometryType(geom) AS type, ST_NumGeometries(geom) AS parts, ST_IsValid(geom) AS valid,
           ST_Intersects(centroid, geom) AS inside, ST_Area(geom::geography)::float8 AS area
      FROM core.parcels WHERE county_id = 39 AND parcel_id IN ('01-1S-07-0000-0010-0000', '01-1S-07-0000-0020-0000')
     ORDER BY parcel_id`;
  t.match(
    rows[0],
    { type: 'MULTIPOLYGON', parts: 1, valid: true, inside: true },
    'two halves unioned into one polygon',
  );
  t.ok(rows[0]!.area > 800 && rows[0]!.area < 900, `~29 m x 30 m square (${rows[0]!.area} m2)`);
  t.match(rows[1], { type: 'MULTIPOLYGON', parts: 2, valid: true, inside: true }, 'bow tie made valid: two triangles');
  // Reprojected back from State Plane feet to within a millimetre-scale tolerance of the source square.
  const [corner] = await sql`SELECT ST_XMin(geom)::float8 AS x, ST_YMin(geom)::float8 AS y FROM core.parcels
                              WHERE county_id = 39 AND parcel_id = '01-1S-07-0000-0010-0000'`;
  t.ok(Math.abs(corner!.x - -84.88) < 1e-7 && Math.abs(corner!.y - 30.24) < 1e-7, `corner ${corner!.x},${corner!.y}`);
  const [cleared] = await sql`SELECT geom IS NULL AND centroid IS NULL AS cleared FROM core.parcels
                               WHERE county_id = 39 AND parcel_id = '12-1S-07-0000-0011-0000'`;
  t.equal(cleared!.cleared, true, 'a parcel absent from the file has no polygon');
});

t.test('re-run changes nothing', async (t) => {
  const stamp = await sql`SELECT id::text, updated_at FROM core.parcels WHERE county_id = 39 ORDER BY id`;
  const s = await importParcelGeometry(opts('geometry/Liberty 49 PIN 2025.zip', 'liberty2'));
  t.same(s.counties, [{ county: 'liberty', rows: 311, updated: 0, cleared: 0, guard: 'ok' }]);
  t.same(await sql`SELECT id::text, updated_at FROM core.parcels WHERE county_id = 39 ORDER BY id`, stamp);
});

t.test('GeoJSON and GeoJSONSeq need --county without a CO_NO attribute', async (t) => {
  await t.rejects(
    importParcelGeometry(opts('geometry/alachua-parcels.geojson', 'a0')),
    /no CO_NO attribute; pass --county/,
  );
  const s = await importParcelGeometry(opts('geometry/alachua-parcels.geojson', 'a1', { county: 'alachua' }));
  t.same(s.counties, [{ county: 'alachua', rows: 200, updated: 200, cleared: 0, guard: 'first load' }]);
  t.same(s.missingColumns, [], 'CO_NO is not missing when --county stands in for it');
  const seq = opts('geometry/alachua-parcels.geojsonl', 'a2', { county: 'alachua' });
  await t.rejects(importParcelGeometry(seq), {
    message:
      'would clear the polygons of 180 of 200 parcels in alachua (90%), over --max-delete-rate 0.05; nothing was ' +
      'changed; pass --max-delete-rate 0.9 if this is intended',
  });
  const all = await importParcelGeometry({ ...seq, maxDeleteRate: 0.9 });
  t.same(
    all.counties,
    [{ county: 'alachua', rows: 20, updated: 0, cleared: 180, guard: 'ok' }],
    'the 20-feature file is the whole map, once the operator says so',
  );
});

t.test('a broken file is a one-line error', async (t) => {
  await t.rejects(
    importParcelGeometry(opts('nal/NAL49F202501.csv', 'bad', { county: 'liberty' })),
    /not a parcel geometry file: the header lacks WKT; this looks like a NAL roll file: use `import nal`/,
  );
});
