// `make load-data`: loads what `make data` wrote (OUT/manifest.json) through the importers (the same functions the
// import CLI runs, in this one process), county by county in CO_NO order: NAL, then SDF, then polygons (they attach
// to the NAL's parcels), then delinquencies. Stops at the first failing import and prints a total at the end.
//   node --import tsx scripts/load-state.ts --out .local/state [--counties miami-dade,broward]
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { GenerateSummary } from './generate-state.ts';
import { importDelinquencies } from '../src/importers/delinquencies.ts';
import { importNal } from '../src/importers/nal.ts';
import { importParcelGeometry } from '../src/importers/parcel-geometry.ts';
import type { ImportOptions, ImportSummary } from '../src/importers/pipeline.ts';
import { importSdf } from '../src/importers/sdf.ts';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: '.local/state' },
    counties: { type: 'string' },
  },
});
const out = values.out;
const manifestPath = join(out, 'manifest.json');
if (!existsSync(manifestPath)) {
  console.error(`${manifestPath} not found: run \`make data OUT=${out}\` first`);
  process.exit(1);
}
const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Omit<GenerateSummary, 'seconds'>;
const only = values.counties ? new Set(values.counties.split(',').map((s) => s.trim())) : null;
const counties = manifest.counties.filter((c) => !only || only.has(c.slug)).sort((a, b) => a.coNo - b.coNo);
if (only && counties.length !== only.size) {
  console.error(`unknown county slug in --counties ${values.counties}`);
  process.exit(1);
}

/** One importer run (it prints its own progress); a failure stops the load with the importer's one-line message. */
async function importer(run: (o: ImportOptions) => Promise<ImportSummary>, options: ImportOptions): Promise<number> {
  try {
    return (await run({ quiet: !process.stderr.isTTY, ...options })).seconds;
  } catch (err) {
    console.error(`import failed: ${options.file}: ${(err as Error).message}`);
    process.exit(1);
  }
}

const started = performance.now();
const totals = { files: 0, parcels: 0, sales: 0, polygons: 0, delinquencies: 0 };
for (const c of counties) {
  const file = (f: string) => join(out, f);
  const seconds =
    (await importer(importNal, { file: file(c.files.nal) })) +
    (await importer(importSdf, { file: file(c.files.sdf) })) +
    (await importer(importParcelGeometry, { file: file(c.files.gis), county: c.slug })) +
    (await importer(importDelinquencies, { file: file(c.files.delinquencies), county: c.slug, vendor: c.vendor }));
  totals.files += 4;
  totals.parcels += c.parcels;
  totals.sales += c.sales;
  totals.polygons += c.polygons;
  totals.delinquencies += c.delinquencies;
  console.log(
    `[${c.coNo} ${c.slug}] loaded ${c.parcels} parcels, ${c.sales} sales, ${c.polygons} polygons, ` +
      `${c.delinquencies} delinquencies in ${seconds.toFixed(1)} s`,
  );
}
const seconds = (performance.now() - started) / 1000;
console.log(
  `loaded ${counties.length} counties, ${totals.files} files from ${out}: ${totals.parcels} parcels, ${totals.sales} sales, ` +
    `${totals.polygons} polygons, ${totals.delinquencies} delinquency records in ${seconds.toFixed(1)} s`,
);
