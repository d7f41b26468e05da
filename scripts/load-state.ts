// `make load-data`: loads what `make data` wrote (OUT/manifest.json) through the importers (the same functions the
// import CLI runs, in this one process), county by county in CO_NO order: NAL, then SDF, then polygons (they attach
// to the NAL's parcels), then delinquencies. `jobs` lanes (default 2) load counties side by side, so one county's
// parsing overlaps another's merge; each county is still one lane's four imports in order. An import that loses a
// deadlock (two merges touching the same vocabulary words) is retried once. Stops at the first failing import (the
// other lane finishes its current county) and prints a total at the end.
// Into an empty database it is a bulk first load: the big tables' secondary indexes are dropped first and built once
// at the end (also when an import fails), see src/importers/deferred-indexes.ts, and so is the precomputed
// autocomplete.
//   node --import tsx scripts/load-state.ts --out .local/state [--counties miami-dade,broward] [--jobs 2]
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { ownerDatabaseUrl } from '../src/db-url.ts';
import type { GenerateSummary } from './generate/profiles/state.ts';
import { deferIndexes, restoreIndexes } from '../src/importers/deferred-indexes.ts';
import { importDelinquencies } from '../src/importers/delinquencies.ts';
import { importNal } from '../src/importers/nal.ts';
import { importParcelGeometry } from '../src/importers/parcel-geometry.ts';
import type { ImportOptions, ImportSummary } from '../src/importers/pipeline.ts';
import { importSdf } from '../src/importers/sdf.ts';

/** Lanes: two keep both of a 2-core machine's cores busy (one parses while the other merges). */
export const DEFAULT_JOBS = Math.min(2, availableParallelism());

export interface LoadTotals {
  counties: number;
  files: number;
  parcels: number;
  sales: number;
  polygons: number;
  delinquencies: number;
  /** Secondary indexes dropped before the first county and built after the last (0 unless a bulk first load). */
  deferredIndexes: number;
  seconds: number;
}

/** Loads the generated state in `out` into the database at `databaseUrl` (DATABASE_URL when absent). */
export async function loadState(
  out: string,
  opts: { databaseUrl?: string; counties?: string[]; jobs?: number; log?: (line: string) => void } = {},
): Promise<LoadTotals> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const manifestPath = join(out, 'manifest.json');
  if (!existsSync(manifestPath)) throw new Error(`${manifestPath} not found: run \`make data OUT=${out}\` first`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Omit<GenerateSummary, 'seconds'>;
  const only = opts.counties ? new Set(opts.counties) : null;
  const counties = manifest.counties.filter((c) => !only || only.has(c.slug)).sort((a, b) => a.coNo - b.coNo);
  if (only && counties.length !== only.size) throw new Error(`unknown county slug in ${opts.counties!.join(',')}`);

  const databaseUrl = opts.databaseUrl ?? ownerDatabaseUrl(process.env);
  const jobs = Math.max(1, Math.min(opts.jobs ?? DEFAULT_JOBS, counties.length));
  const importer = async (run: (o: ImportOptions) => Promise<ImportSummary>, options: ImportOptions) => {
    const attempt = () => run({ quiet: jobs > 1 || !process.stderr.isTTY, databaseUrl, ...options });
    try {
      return (
        await attempt().catch((err: Error) => {
          if (!/deadlock detected/.test(err.message)) throw err;
          log(`${options.file}: lost a deadlock to the other lane, importing it again`);
          return attempt();
        })
      ).seconds;
    } catch (err) {
      throw new Error(`import failed: ${options.file}: ${(err as Error).message}`);
    }
  };
  const started = performance.now();
  const totals = { counties: counties.length, files: 0, parcels: 0, sales: 0, polygons: 0, delinquencies: 0 };
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  let deferredIndexes = 0;
  try {
    const [empty] = await sql<{ yes: boolean }[]>`SELECT NOT EXISTS (SELECT 1 FROM core.parcels) AS yes`;
    if (empty?.yes) {
      deferredIndexes = await deferIndexes(sql);
      log(`bulk first load: ${deferredIndexes} secondary indexes dropped, built again after the last county`);
    }
    const queue = [...counties];
    const loadCounty = async (c: (typeof counties)[number]) => {
      const file = (f: string) => join(out, f);
      const seconds =
        (await importer(importNal, { file: file(c.files.nal) })) +
        // older roll years (make data YEARS=n): the roll history only; the newest stays the current roll
        (await (c.olderNal ?? []).reduce(
          async (s, roll) => (await s) + (await importer(importNal, { file: file(roll.file) })),
          Promise.resolve(0),
        )) +
        (await importer(importSdf, { file: file(c.files.sdf) })) +
        (await importer(importParcelGeometry, { file: file(c.files.gis), county: c.slug })) +
        (await importer(importDelinquencies, { file: file(c.files.delinquencies), county: c.slug, vendor: c.vendor }));
      totals.files += 4;
      totals.parcels += c.parcels;
      totals.sales += c.sales;
      totals.polygons += c.polygons;
      totals.delinquencies += c.delinquencies;
      log(
        `[${c.coNo} ${c.slug}] loaded ${c.parcels} parcels, ${c.sales} sales, ${c.polygons} polygons, ` +
          `${c.delinquencies} delinquencies in ${seconds.toFixed(1)} s`,
      );
    };
    const lanes = await Promise.allSettled(
      Array.from({ length: jobs }, async () => {
        for (let c = queue.shift(); c; c = queue.shift()) {
          await loadCounty(c).catch((err: Error) => {
            queue.length = 0; // the other lanes stop after their current county
            throw err;
          });
        }
      }),
    );
    const failed = lanes.find((l) => l.status === 'rejected');
    if (failed) throw failed.reason;
    if (empty?.yes) {
      // a first load also chooses the frequent words whose pairs speed up statewide search
      await sql`ANALYZE core.parcels`;
      const [pairs] = await sql<{ terms: number }[]>`SELECT core.choose_parcel_pairs() AS terms`;
      log(`frequent words paired for search: ${pairs?.terms ?? 0} (core.choose_parcel_pairs)`);
    }
  } finally {
    deferredIndexes = Math.max(deferredIndexes, await restoreIndexes(sql, log));
    // the precomputed autocomplete waits for the indexes too (core.parcel_typeahead_maintain), then is built once
    const t0 = performance.now();
    const [typeahead] = await sql<{ built: boolean }[]>`SELECT search.typeahead_build_missing() AS built`;
    if (typeahead?.built)
      log(`built the precomputed autocomplete in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await sql.end();
  }
  const result = { ...totals, deferredIndexes, seconds: (performance.now() - started) / 1000 };
  log(
    `loaded ${result.counties} counties, ${result.files} files from ${out}: ${result.parcels} parcels, ` +
      `${result.sales} sales, ${result.polygons} polygons, ${result.delinquencies} delinquency records in ` +
      `${result.seconds.toFixed(1)} s`,
  );
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: '.local/state' },
      counties: { type: 'string' },
      jobs: { type: 'string', default: String(DEFAULT_JOBS) },
    },
  });
  const jobs = Number(values.jobs);
  if (!Number.isInteger(jobs) || jobs < 1) {
    console.error('--jobs must be a whole number, at least 1');
    process.exit(2);
  }
  loadState(values.out, { counties: values.counties?.split(',').map((s) => s.trim()), jobs }).catch((err: Error) => {
    console.error(err.message);
    process.exit(1);
  });
}
