// What the offline base map costs at a scale this machine builds in minutes: PARCELS synthetic mapped parcels
// (default 1,000,000) spread over all 67 counties around their seats, in a scratch copy of the template database
// (TEMPLATE, default florida_test_template; dropped at the end). Measured in one run, as ratios to floors:
//   - ingest.refresh_county_shapes() for every county, against a plain scan of the same centroids (the least any
//     refresh reads), and for the largest county alone;
//   - api.basemap_tile over the tiles covering Florida at zooms 5-10, against `SELECT 1` round trips.
// Writes bench/results/basemap.md.
//   tsx bench/basemap.ts
import { writeFileSync } from 'node:fs';
import postgres from 'postgres';
import { ownerDatabaseUrl, withDatabase } from '../src/db-url.ts';

const PARCELS = Number(process.env.PARCELS ?? 1_000_000);
const TEMPLATE = process.env.TEMPLATE ?? 'florida_test_template';
const SCRATCH = `bench_basemap_${process.pid}`;
const OUT = new URL('results/basemap.md', import.meta.url).pathname;

const admin = postgres(withDatabase(ownerDatabaseUrl(), 'postgres'), { max: 1, onnotice: () => {} });
await admin.unsafe(`CREATE DATABASE ${SCRATCH} TEMPLATE ${TEMPLATE}`);
const sql = postgres(withDatabase(ownerDatabaseUrl(), SCRATCH), { max: 1, onnotice: () => {} });

/** Median seconds of `runs` runs of `fn`. */
async function median(runs: number, fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

/** The XYZ tiles covering Florida's box at a zoom. */
function tilesAt(z: number): [number, number, number][] {
  const n = 2 ** z;
  const x = (lng: number) => Math.floor(((lng + 180) / 360) * n);
  const y = (lat: number) => {
    const r = (lat * Math.PI) / 180;
    return Math.floor(((1 - Math.asinh(Math.tan(r)) / Math.PI) / 2) * n);
  };
  const out: [number, number, number][] = [];
  for (let i = x(-87.64); i <= x(-79.97); i++) for (let j = y(31.0); j <= y(24.39); j++) out.push([z, i, j]);
  return out;
}

try {
  // Only the columns the base map reads matter; the search triggers would only slow the load of the scratch copy.
  const loadStart = Date.now();
  await sql.unsafe(`ALTER TABLE core.parcels DISABLE TRIGGER USER`);
  await sql.unsafe(`
    INSERT INTO core.parcels (county_id, parcel_id, geom, centroid)
    SELECT s.county_id, 'BENCH' || g, NULL,
           ST_SetSRID(ST_MakePoint(ST_X(s.seat_point) + (random() - 0.5) * 0.5,
                                   ST_Y(s.seat_point) + (random() - 0.5) * 0.4), 4326)
      FROM generate_series(1, ${PARCELS}) g
      JOIN core.county_shapes s ON s.county_id = 1 + (g % 67)`);
  await sql`ANALYZE core.parcels`;
  const loadSeconds = (Date.now() - loadStart) / 1000;

  const scan = await median(3, () => sql`SELECT count(*) FROM core.parcels WHERE centroid IS NOT NULL`);
  const all = await median(3, () => sql`SELECT count(*) FROM ingest.refresh_county_shapes()`);
  const one = await median(3, () => sql`SELECT count(*) FROM ingest.refresh_county_shapes(ARRAY[13]::smallint[])`);
  const [cells] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM (SELECT DISTINCT floor(ST_X(centroid) / 0.01), floor(ST_Y(centroid) / 0.01)
                                      FROM core.parcels WHERE centroid IS NOT NULL) c`;
  const [shape] = await sql<{ points: number; kb: number }[]>`
    SELECT sum(ST_NPoints(shape))::int AS points, (sum(ST_MemSize(shape)) / 1024)::int AS kb FROM core.county_shapes`;

  const rows: string[] = [];
  const floor = await median(5, async () => {
    for (let i = 0; i < 50; i++) await sql`SELECT 1`;
  });
  for (const z of [5, 6, 7, 8, 9, 10]) {
    const tiles = tilesAt(z);
    let bytes = 0;
    const seconds = await median(3, async () => {
      bytes = 0;
      for (const [tz, tx, ty] of tiles) {
        const [r] = await sql<{ n: number }[]>`SELECT length(api.basemap_tile(${tz}, ${tx}, ${ty}))::int AS n`;
        bytes += r!.n;
      }
    });
    const perTile = seconds / tiles.length;
    rows.push(
      `| ${z} | ${tiles.length} | ${(perTile * 1000).toFixed(2)} | ${(perTile / (floor / 50)).toFixed(1)} | ` +
        `${(bytes / tiles.length / 1024).toFixed(1)} |`,
    );
  }

  const report = `# Offline base map: refresh and tiles

Run: \`PARCELS=${PARCELS} node --import tsx bench/basemap.ts\` on ${new Date().toISOString().slice(0, 10)}, a shared
2-core machine; ${PARCELS.toLocaleString('en-US')} synthetic mapped parcels (centroids spread 0.5° × 0.4° around each
county's seat, all 67 counties) in a scratch copy of the test template (loaded in ${loadSeconds.toFixed(0)} s).

## Refresh (ingest.refresh_county_shapes)

| what | median s | ratio to the scan floor |
|---|---|---|
| floor: count the mapped centroids (one scan) | ${scan.toFixed(2)} | 1.0 |
| every county | ${all.toFixed(2)} | ${(all / scan).toFixed(1)} |
| one county (Miami-Dade, 1/67 of the parcels) | ${one.toFixed(2)} | ${(one / scan).toFixed(2)} |

The shapes: ${shape!.points.toLocaleString('en-US')} vertices, ${shape!.kb} kB in all.

## Tiles (api.basemap_tile), over Florida's box

Floor: one \`SELECT 1\` round trip, ${((floor / 50) * 1000).toFixed(2)} ms.

| zoom | tiles | ms per tile | ratio to the floor | kB per tile |
|---|---|---|---|---|
${rows.join('\n')}

## Statewide

The refresh reads each mapped centroid once and groups them by 0.01° cell (about 1 km; this run covers
${cells!.n.toLocaleString('en-US')} cells), then unions one rectangle per run of covered cells in a row. The read and
the grouping grow with the parcels: the statewide 10.8 M are about ${(10_800_000 / PARCELS).toFixed(0)}× this run's,
so about ${((all * 10_800_000) / PARCELS / 60).toFixed(1)} min at this run's rate for every county at once. The union
grows with the cells covered, which Florida's land bounds (about 150,000 cells). A load that touched a few counties
can refresh only those (\`scripts/basemap.ts <slug> ...\`). Tiles read only the 67 shapes and the outline, whatever
the number of parcels.
`;
  writeFileSync(OUT, report);
  console.log(report);
} finally {
  await sql.end();
  await admin.unsafe(`DROP DATABASE IF EXISTS ${SCRATCH} WITH (FORCE)`);
  await admin.end();
}
