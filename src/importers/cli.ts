// The import CLI: `npm run --silent import -- <kind> <file> [options]`. Bad input is one line on stderr and a
// non-zero exit, never a stack trace; the summary goes to stdout (JSON with --json).
import { parseArgs } from 'node:util';
import { importDelinquencies } from './delinquencies.ts';
import { ImportError } from './errors.ts';
import { importNal } from './nal.ts';
import { importParcelGeometry } from './parcel-geometry.ts';
import { DEFAULT_MAX_REJECT_RATE, type ImportOptions, type ImportSummary } from './pipeline.ts';
import { importSdf } from './sdf.ts';

const KINDS: Record<string, (o: ImportOptions) => Promise<ImportSummary>> = {
  nal: importNal,
  sdf: importSdf,
  'parcel-geometry': importParcelGeometry,
  delinquencies: importDelinquencies,
};

const USAGE = `usage: npm run --silent import -- <kind> <file> [options]
kinds:
  nal               FDOR NAL roll CSV (or its zip); rows routed by CO_NO; each county in the file is replaced
  sdf               FDOR SDF sale CSV (or its zip); sales upserted on their natural key
  parcel-geometry   parcel polygons: zipped shapefile, GeoJSON or GeoJSONSeq (.geojsonl), joined on PARCELNO
  delinquencies     standard delinquency CSV or a tax-collector export
options:
  --rejects PATH           rejects file (default <file>.rejects.csv)
  --max-reject-rate R      fail the load when more than this share of rows is rejected (default ${DEFAULT_MAX_REJECT_RATE})
  --county SLUG            parcel-geometry, delinquencies: county of rows that do not name one
  --tax-year YYYY          delinquencies: tax year of rows without one, and of the source row
  --vendor NAME            delinquencies: vendor of rows without one, and of a new source row
  --s-srs SRS              parcel-geometry: CRS of a file without one (e.g. EPSG:2236)
  --quiet                  no progress output
  --json                   print the summary as JSON`;

function fail(message: string, code = 1): never {
  process.stderr.write(`import: ${message}\n`);
  process.exit(code);
}

async function main() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        rejects: { type: 'string' },
        'max-reject-rate': { type: 'string' },
        county: { type: 'string' },
        'tax-year': { type: 'string' },
        vendor: { type: 'string' },
        's-srs': { type: 'string' },
        quiet: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    fail(`${(err as Error).message}\n${USAGE}`, 2);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  const [kind, file, ...extra] = positionals;
  if (!kind || !file) fail(`missing ${kind ? 'file' : 'kind and file'}\n${USAGE}`, 2);
  if (extra.length) fail(`unexpected argument '${extra[0]}'`, 2);
  const run = KINDS[kind];
  if (!run) fail(`unknown kind '${kind}' (${Object.keys(KINDS).join(', ')})`, 2);
  const options: ImportOptions = { file, quiet: values.quiet };
  if (values.rejects) options.rejects = values.rejects;
  if (values['max-reject-rate'] !== undefined) {
    const r = Number(values['max-reject-rate']);
    if (!Number.isFinite(r) || r < 0 || r > 1) fail('--max-reject-rate must be a number between 0 and 1', 2);
    options.maxRejectRate = r;
  }
  if (values['tax-year'] !== undefined) {
    if (!/^\d{4}$/.test(values['tax-year'])) fail('--tax-year must be a 4-digit year', 2);
    options.taxYear = Number(values['tax-year']);
  }
  if (values.county !== undefined) options.county = values.county;
  if (values.vendor !== undefined) options.vendor = values.vendor;
  if (values['s-srs'] !== undefined) options.sourceSrs = values['s-srs'];

  const summary = await run(options);
  if (values.json) {
    process.stdout.write(JSON.stringify(summary) + '\n');
    return;
  }
  const n = (x: number) => x.toLocaleString('en-US');
  const lines = [
    `${summary.kind} ${summary.file}: ${summary.status} in ${summary.seconds.toFixed(1)} s (load ${summary.loadId})`,
    `  rows read ${n(summary.rowsRead)}, loaded ${n(summary.rowsLoaded)}, rejected ${n(summary.rowsRejected)}` +
      ` (invalid ${n(summary.invalid)}, duplicates ${n(summary.duplicates)}, unmatched ${n(summary.unmatched)})` +
      ` at ${n(Math.round(summary.rowsRead / Math.max(summary.seconds, 0.001)))} rows/s`,
    ...summary.counties.map(
      ({ county, ...r }) =>
        `  ${county}: ${Object.entries(r)
          .map(([k, v]) => `${k} ${typeof v === 'number' ? n(v) : v}`)
          .join(', ')}`,
    ),
  ];
  if (summary.fallbackDecodedLines)
    lines.push(`  ${n(summary.fallbackDecodedLines)} lines were not UTF-8 and were read as Windows-1252`);
  if (summary.missingColumns.length)
    lines.push(`  columns not in the file (loaded as NULL): ${summary.missingColumns.join(', ')}`);
  if (summary.rowsRejected) lines.push(`  rejects: ${summary.rejectsFile}`);
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((err: unknown) => {
  if (err instanceof ImportError) fail(err.message);
  const e = err as Error & { code?: string };
  // Database and system errors: still one line; DEBUG=import shows the stack.
  if (process.env.DEBUG?.includes('import')) console.error(e);
  fail(`${e.code ? `${e.code} ` : ''}${e.message ?? String(err)}`);
});
