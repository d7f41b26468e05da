// The other formats under load: vector tiles at zoom 16 over Miami-Dade (target p95 ≤ 30 ms at 4 connections) and a
// CSV page of 500 parcels against the same page in JSON (target: CSV within 1.5× JSON). One API process (bench/server.ts
// with auth and metering, an Enterprise key), the exact-percentile driver of bench/driver.ts; tiles and the two page
// formats alternate over `--rounds` rounds and the medians over rounds are reported, with the tile sizes per zoom.
// Each workload also runs alone (1 connection) in each round: its own service time, with nothing queued before it.
// Writes bench/results/formats.md unless --no-write.
//   DATABASE_URL=$(node --import tsx bench/state.ts --parcels 100000) node --import tsx bench/formats.ts \
//     [--seconds 10] [--concurrency 4] [--rounds 3] [--alone-seconds 5]
import { execSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { ownerDatabaseUrl } from '../src/db-url.ts';
import { benchClient, startApi } from './api.ts';
import { drive, type DriveResult } from './driver.ts';
import { freePort } from './load.ts';
import { writeReport } from './report.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '3' },
    'alone-seconds': { type: 'string', default: '5' },
    'no-write': { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);
const aloneSeconds = Number(values['alone-seconds']);
const COUNTY = 'miami-dade';
const PAGE = 500;

const owner = postgres(ownerDatabaseUrl(), { max: 2, onnotice: () => {} });
const log = (line: string) => console.error(line);

/** The XYZ tiles of zoom z over a longitude/latitude box. */
function tilesOver(box: { w: number; s: number; e: number; n: number }, z: number): [number, number, number][] {
  const n = 2 ** z;
  const col = (lng: number) => Math.floor(((lng + 180) / 360) * n);
  const row = (lat: number) => {
    const r = (lat * Math.PI) / 180;
    return Math.floor(((1 - Math.asinh(Math.tan(r)) / Math.PI) / 2) * n);
  };
  const out: [number, number, number][] = [];
  for (let x = col(box.w); x <= col(box.e); x++) for (let y = row(box.n); y <= row(box.s); y++) out.push([z, x, y]);
  return out;
}

/** Size of each non-empty tile (bytes) and its parcels, read through api.parcel_tile itself. */
async function tileSizes(tiles: [number, number, number][]) {
  const rows: { zxy: [number, number, number]; bytes: number }[] = [];
  for (const zxy of tiles) {
    const [r] = await owner<
      { bytes: number }[]
    >`SELECT length(api.parcel_tile(${zxy[0]}, ${zxy[1]}, ${zxy[2]}))::int AS bytes`;
    if (r!.bytes > 0) rows.push({ zxy, bytes: r!.bytes });
  }
  return rows;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => x.toFixed(2);

const [box] = await owner<{ w: number; s: number; e: number; n: number; parcels: number; total: number }[]>`
  SELECT ST_XMin(e) AS w, ST_YMin(e) AS s, ST_XMax(e) AS e, ST_YMax(e) AS n, parcels::int,
         (SELECT count(*)::int FROM core.parcels) AS total
    FROM (SELECT ST_Extent(p.geom)::geometry AS e, count(*) AS parcels
            FROM core.parcels p JOIN core.counties c ON c.id = p.county_id WHERE c.slug = ${COUNTY}) x`;
if (!box || box.parcels === 0) throw new Error(`no ${COUNTY} parcels in this database: run bench/state.ts first`);
log(`formats: ${box.total} parcels, ${box.parcels} in ${COUNTY}`);

const sizes = new Map<number, { tiles: number; meanKb: number; maxKb: number; parcels: number }>();
let z16: [number, number, number][] = [];
for (const z of [14, 15, 16]) {
  const rows = await tileSizes(tilesOver(box, z));
  const [counted] = await owner<{ n: number }[]>`
    SELECT max(n)::int AS n FROM (
      SELECT count(*) AS n FROM unnest(${rows.map((r) => r.zxy[1])}::int[], ${rows.map((r) => r.zxy[2])}::int[]) t(x, y)
        JOIN core.parcels p ON p.geom && ST_Transform(ST_TileEnvelope(${z}, t.x, t.y), 4326)
       GROUP BY t.x, t.y) c`;
  const kb = rows.map((r) => r.bytes / 1024);
  sizes.set(z, {
    tiles: rows.length,
    meanKb: kb.reduce((a, b) => a + b, 0) / kb.length,
    maxKb: Math.max(...kb),
    parcels: counted?.n ?? 0,
  });
  if (z === 16) z16 = rows.map((r) => r.zxy);
}
const tilePaths = z16.map(([z, x, y]) => `/v1/tiles/parcels/${z}/${x}/${y}.mvt`);
const pages = Math.max(1, Math.min(20, Math.floor(box.parcels / PAGE)));
const jsonPaths = Array.from(
  { length: pages },
  (_, i) => `/v1/parcels/search?county=${COUNTY}&limit=${PAGE}&offset=${i * PAGE}`,
);
const csvPaths = jsonPaths.map((p) => `${p}&format=csv`);

const bench = await benchClient(owner);
const api = await startApi(await freePort(), {});
const headers = { authorization: `Bearer ${bench.key}` };
const run = (paths: string[], secs: number, conns: number, requests?: number) =>
  drive({ base: api.base, paths, headers, concurrency: conns, seconds: secs, requests });

type Workload = 'tiles' | 'json' | 'csv';
const WORKLOADS: [Workload, string[]][] = [
  ['tiles', tilePaths],
  ['json', jsonPaths],
  ['csv', csvPaths],
];
/** Per workload, the result of each round at `concurrency` connections and alone (1 connection). */
const loaded: Record<Workload, DriveResult[]> = { tiles: [], json: [], csv: [] };
const alone: Record<Workload, DriveResult[]> = { tiles: [], json: [], csv: [] };
const loads: number[] = [];
try {
  for (const [, paths] of WORKLOADS) {
    await run(paths, 2, concurrency); // warm-up: JIT, pools, plans, the key cache
    await run(paths, 60, concurrency, paths.length); // and each distinct request once
  }
  for (let r = 0; r < rounds; r++) {
    for (const [name, paths] of WORKLOADS) {
      for (const [into, conns, secs] of [
        [loaded, concurrency, seconds],
        [alone, 1, aloneSeconds],
      ] as const) {
        const result = await run(paths, secs, conns);
        if (result.non2xx > 0 || result.errors > 0) {
          throw new Error(
            `${name}: ${result.non2xx} non-2xx, ${result.errors} errors (${JSON.stringify(result.statuses)})`,
          );
        }
        into[name].push(result);
      }
      const [l, a] = [loaded[name].at(-1)!, alone[name].at(-1)!];
      log(
        `formats: round ${r + 1} ${name}: ${l.rps.toFixed(0)} req/s, p50 ${ms(l.p50)}, p95 ${ms(l.p95)} ms; ` +
          `alone p50 ${ms(a.p50)}, p95 ${ms(a.p95)} ms`,
      );
    }
    loads.push(Number(execSync('cut -d" " -f1 /proc/loadavg').toString()));
  }
} finally {
  await api.stop();
  await bench.retire();
  await owner.end();
}

const summary = (rs: DriveResult[]) => ({
  rps: median(rs.map((r) => r.rps)),
  p50: median(rs.map((r) => r.p50)),
  p95: median(rs.map((r) => r.p95)),
  p99: median(rs.map((r) => r.p99)),
  p95s: rs.map((r) => ms(r.p95)).join(', '),
});
const [tiles, json, csv] = WORKLOADS.map(([name]) => summary(loaded[name]));
const [tilesAlone, jsonAlone, csvAlone] = WORKLOADS.map(([name]) => summary(alone[name]));
const ratio50 = csv!.p50 / json!.p50;
const ratio95 = csv!.p95 / json!.p95;
const ratioAlone = csvAlone!.p50 / jsonAlone!.p50;
const commit = execSync('git rev-parse --short HEAD').toString().trim();
const database = new URL(ownerDatabaseUrl()).pathname.slice(1);
const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
const row = (
  what: string,
  cycled: string,
  l: ReturnType<typeof summary>,
  a: ReturnType<typeof summary>,
  target: string,
) =>
  `| ${what} | ${cycled} | ${l.rps.toFixed(0)} | ${ms(l.p50)} | ${ms(l.p95)} | ${ms(l.p99)} | ${l.p95s} | ` +
  `${ms(a.p50)} / ${ms(a.p95)} / ${ms(a.p99)} | ${target} |`;

const report = `# Formats: vector tiles and CSV under load

- When: ${new Date().toISOString()}, commit ${commit}
- Machine: ${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, shared with Postgres, Redis,
  the load generator and other work (1-minute load average after each round: ${loads.map((l) => l.toFixed(1)).join(', ')})
- Data: \`${database}\`, ${box.total.toLocaleString('en-US')} parcels (${box.parcels.toLocaleString('en-US')} in Miami-Dade)
- Command: \`DATABASE_URL=$(node --import tsx bench/state.ts --parcels ${box.total}) node --import tsx bench/formats.ts --seconds ${seconds} --concurrency ${concurrency} --rounds ${rounds} --alone-seconds ${aloneSeconds}\`
- One API process (\`bench/server.ts\`: \`src/main.ts\` with auth and metering, an Enterprise key), ${concurrency} keep-alive
  connections (\`bench/driver.ts\`, exact percentiles), ${seconds} s per workload and round after a warm-up; tiles, JSON
  and CSV alternate over ${rounds} rounds; medians over rounds. "Alone" is the same workload at 1 connection for
  ${aloneSeconds} s in each round: its own service time, with nothing queued in front of it.

| workload | requests cycled | req/s | p50 ms | p95 ms | p99 ms | p95 of each round | alone p50 / p95 / p99 ms | target |
| --- | --- | ---: | ---: | ---: | ---: | --- | --- | --- |
${row('tile z16, Miami-Dade', `${tilePaths.length} tiles with parcels`, tiles!, tilesAlone!, `p95 ≤ 30 ms: ${verdict(tiles!.p95 <= 30)}`)}
${row(`parcel page of ${PAGE}, JSON`, `${jsonPaths.length} pages of \`county=${COUNTY}&limit=${PAGE}\``, json!, jsonAlone!, '')}
${row('the same pages, CSV', 'the same, `&format=csv`', csv!, csvAlone!, `≤ 1.5× JSON: ${verdict(ratio95 <= 1.5 && ratio50 <= 1.5)} (p50 ${ratio50.toFixed(2)}×, p95 ${ratio95.toFixed(2)}×; alone p50 ${ratioAlone.toFixed(2)}×)`)}

Tile sizes over Miami-Dade's parcels (the tiles holding at least one parcel; the synthetic state packs ~30 m lots at
the same density at every scale, so a tile inside the county's block holds as many parcels as at full state):

| zoom | what | tiles | mean KB | largest KB | most parcels in a tile |
| ---: | --- | ---: | ---: | ---: | ---: |
${[14, 15, 16]
  .map((z) => {
    const s = sizes.get(z)!;
    return `| ${z} | ${z >= 15 ? 'polygons, 6 properties' : 'points, id and use code'} | ${s.tiles} | ${s.meanKb.toFixed(1)} | ${s.maxKb.toFixed(1)} | ${s.parcels} |`;
  })
  .join('\n')}
`;

console.log(report);
if (!values['no-write']) writeReport('bench/results/formats.md', report);
