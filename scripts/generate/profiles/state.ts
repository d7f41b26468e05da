// Profile `state` (`make data`): synthetic statewide Florida data in the real FDOR formats (NAL, SDF), plus per-county
// parcel polygons (GeoJSONSeq) and delinquency CSVs, for all 67 counties, deterministic from the seed and the parcel
// count. docs/generator.md describes it.
import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COUNTIES, generatorCounts } from '../counties.ts';
import { assertBlocks, planBlock } from '../geometry.ts';
import { generateCounty, ROLL_YEAR, TAX_YEARS, type CountyResult } from './state-county.ts';
import { writeOlderRolls } from '../years.ts';

/** What the parent sends a worker (one county to generate) and what it answers. */
export interface WorkerJob {
  coNo: number;
  parcels: number;
  seed: string;
  out: string;
}
export type WorkerReply = { result: CountyResult; error?: undefined } | { result?: undefined; error: string };

export interface GenerateOptions {
  parcels: number;
  seed?: string | number;
  out: string;
  /** Worker processes (counties are independent, so output does not depend on it). Default: 1. */
  jobs?: number;
  /** Roll years per county, the newest (ROLL_YEAR) included: older ones are derived from it. Default: 1. */
  years?: number;
  /** Progress sink; default: stderr-free console.log. Pass () => {} to silence. */
  log?: (line: string) => void;
}

export interface GenerateSummary {
  parcels: number;
  seed: string;
  rollYear: number;
  taxYears: readonly number[];
  counties: CountyResult[];
  totals: { files: number; parcels: number; sales: number; polygons: number; delinquencies: number; bytes: number };
  seconds: number;
}

const MB = 1024 * 1024;
const fmt = (n: number) => n.toLocaleString('en-US');
const bytesOf = (r: CountyResult) => r.bytes.nal + r.bytes.sdf + r.bytes.gis + r.bytes.delinquencies;

/** Generates every county into `out` (NAL/, SDF/, GIS/, DELINQUENCIES/ and manifest.json) and returns the summary. */
export async function generateState(opts: GenerateOptions): Promise<GenerateSummary> {
  const seed = String(opts.seed ?? 1);
  const log = opts.log ?? ((line: string) => console.log(line));
  if (!Number.isInteger(opts.parcels) || opts.parcels < 1) throw new Error(`PARCELS must be a positive integer`);
  const years = opts.years ?? 1;
  if (!Number.isInteger(years) || years < 1 || years > 20) throw new Error('YEARS must be an integer from 1 to 20');
  const counts = generatorCounts(opts.parcels);
  assertBlocks(COUNTIES.map((c) => planBlock(c, counts.get(c.coNo)!)));
  for (const dir of ['NAL', 'SDF', 'GIS', 'DELINQUENCIES']) mkdirSync(join(opts.out, dir), { recursive: true });

  const started = performance.now();
  const results: CountyResult[] = [];
  const report = (res: CountyResult, seconds: number) => {
    results.push(res);
    log(
      `[${res.coNo} ${res.slug.padEnd(12)}] ${fmt(res.parcels).padStart(9)} parcels ${fmt(res.sales).padStart(9)} sales ` +
        `${fmt(res.polygons).padStart(9)} polygons ${fmt(res.delinquencies).padStart(8)} delinquencies ` +
        `${(bytesOf(res) / MB).toFixed(1).padStart(7)} MB ${seconds.toFixed(1).padStart(6)} s`,
    );
  };
  // Largest counties first, so parallel workers finish together.
  const queue = [...COUNTIES].sort((a, b) => counts.get(b.coNo)! - counts.get(a.coNo)!);
  const jobs = Math.max(1, Math.min(opts.jobs ?? 1, queue.length));
  if (jobs === 1) {
    for (const c of queue) {
      const t0 = performance.now();
      report(await generateCounty(c, counts.get(c.coNo)!, seed, opts.out), (performance.now() - t0) / 1000);
    }
  } else {
    await Promise.all(
      Array.from({ length: jobs }, async () => {
        // Each worker generates the counties it is sent, one at a time.
        const child = fork(fileURLToPath(new URL('./state-worker.ts', import.meta.url)), [], {
          execArgv: ['--import', 'tsx'],
        });
        try {
          for (let c = queue.shift(); c; c = queue.shift()) {
            const t0 = performance.now();
            const done = new Promise<CountyResult>((ok, fail) => {
              child.once('message', (m: WorkerReply) => (m.result ? ok(m.result) : fail(new Error(m.error))));
              child.once('exit', (code) => fail(new Error(`generator worker exited with ${code}`)));
            });
            child.send({ coNo: c.coNo, parcels: counts.get(c.coNo)!, seed, out: opts.out } satisfies WorkerJob);
            report(await done, (performance.now() - t0) / 1000);
            child.removeAllListeners('exit');
          }
        } finally {
          child.kill();
        }
      }),
    );
  }
  results.sort((a, b) => a.coNo - b.coNo);
  if (years > 1) {
    for (const r of results) {
      r.olderNal = writeOlderRolls(
        COUNTIES.find((c) => c.coNo === r.coNo)!,
        r.files.nal,
        ROLL_YEAR,
        years,
        seed,
        opts.out,
      );
    }
    log(`older rolls: ${years - 1} more year(s) per county, ${ROLL_YEAR - years + 1}-${ROLL_YEAR - 1}`);
  }
  const seconds = (performance.now() - started) / 1000;
  const totals = {
    files: results.length * 4,
    parcels: results.reduce((n, r) => n + r.parcels, 0),
    sales: results.reduce((n, r) => n + r.sales, 0),
    polygons: results.reduce((n, r) => n + r.polygons, 0),
    delinquencies: results.reduce((n, r) => n + r.delinquencies, 0),
    bytes: results.reduce((n, r) => n + bytesOf(r), 0),
  };
  const summary: GenerateSummary = {
    parcels: opts.parcels,
    seed,
    rollYear: ROLL_YEAR,
    taxYears: TAX_YEARS,
    counties: results,
    totals,
    seconds,
  };
  // The manifest is what scripts/load-state.ts reads (slug, vendor and file names per county); no timings in it,
  // so it is as deterministic as the data files.
  const { seconds: _seconds, ...manifest } = summary;
  writeFileSync(join(opts.out, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  const rows = totals.parcels + totals.sales + totals.polygons + totals.delinquencies;
  log(
    `done: ${fmt(totals.files + 1)} files in ${opts.out}: ${fmt(totals.parcels)} NAL rows, ${fmt(totals.sales)} SDF rows, ` +
      `${fmt(totals.polygons)} polygons, ${fmt(totals.delinquencies)} delinquency rows; ` +
      `${(totals.bytes / MB).toFixed(1)} MB in ${seconds.toFixed(1)} s ` +
      `(${fmt(Math.round(rows / seconds))} rows/s, ${(totals.bytes / MB / seconds).toFixed(1)} MB/s, ` +
      `${fmt(Math.round(totals.parcels / seconds))} parcels/s)`,
  );
  return summary;
}
