// The import command line, read into a kind and its options, and the summary a run prints: the CLI's parts that
// do not exit the process, so tests run the documented commands in-process.
import { parseArgs } from 'node:util';
import { ImportError } from './errors.ts';
import { DEFAULT_MAX_DELETE_RATE } from './guard.ts';
import { KINDS } from './kinds.ts';
import { DEFAULT_MAX_REJECT_RATE, type ImportOptions, type ImportSummary, type Kind } from './pipeline.ts';

export const USAGE = `usage: npm run --silent import -- <kind> <file> [options]
kinds:
  nal               FDOR NAL roll CSV (or its zip); rows routed by CO_NO; each county in the file is replaced
  sdf               FDOR SDF sale CSV (or its zip); sales upserted on their natural key
  parcel-geometry   parcel polygons: zipped shapefile, GeoJSON or GeoJSONSeq (.geojsonl), joined on PARCELNO
  delinquencies     standard delinquency CSV or a tax-collector export
options:
  --dry-run                stage, merge and check, print what the load would do, change nothing
  --max-delete-rate R      refuse a load that deletes (or empties a key column of) more than this share of a county
                           it replaces: nal, parcel-geometry, delinquencies (default ${DEFAULT_MAX_DELETE_RATE}; a first load is not limited)
  --max-reject-rate R      refuse the load when more than this share of rows is rejected (default ${DEFAULT_MAX_REJECT_RATE})
  --rejects-dir DIR        where the rejects file goes (default .local/imports/)
  --rejects PATH           the rejects file itself (default <rejects-dir>/<file name>.rejects.csv)
  --county SLUG            parcel-geometry, delinquencies: county of rows that do not name one
  --tax-year YYYY          delinquencies: tax year of rows without one, and of the source row
  --vendor NAME            delinquencies: vendor of rows without one, and of a new source row
  --s-srs SRS              parcel-geometry: CRS of a file without one (e.g. EPSG:2236)
  --quiet                  no progress output
  --json                   print the summary as JSON`;

/** A command line the CLI cannot run: printed with exit status 2. */
export class UsageError extends ImportError {
  override name = 'UsageError';
}

export type Command = { help: true } | { help: false; kind: Kind; options: ImportOptions; json: boolean };

/** `<kind> <file> [options]` as a kind and its options; a UsageError names what is wrong. */
export function parseCommand(args: string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        rejects: { type: 'string' },
        'rejects-dir': { type: 'string' },
        'max-reject-rate': { type: 'string' },
        'max-delete-rate': { type: 'string' },
        'dry-run': { type: 'boolean', default: false },
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
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  const [kind, file, ...extra] = positionals;
  if (!kind || !file) throw new UsageError(`missing ${kind ? 'file' : 'kind and file'}\n${USAGE}`);
  if (extra.length) throw new UsageError(`unexpected argument '${extra[0]}'`);
  const run = KINDS.find((k) => k.kind === kind);
  if (!run) throw new UsageError(`unknown kind '${kind}' (${KINDS.map((k) => k.kind).join(', ')})`);
  const options: ImportOptions = { file, quiet: values.quiet, dryRun: values['dry-run'] };
  if (values.rejects) options.rejects = values.rejects;
  if (values['rejects-dir']) options.rejectsDir = values['rejects-dir'];
  options.maxRejectRate = share('--max-reject-rate', values['max-reject-rate']);
  options.maxDeleteRate = share('--max-delete-rate', values['max-delete-rate']);
  if (values['tax-year'] !== undefined) {
    if (!/^\d{4}$/.test(values['tax-year'])) throw new UsageError('--tax-year must be a 4-digit year');
    options.taxYear = Number(values['tax-year']);
  }
  if (values.county !== undefined) options.county = values.county;
  if (values.vendor !== undefined) options.vendor = values.vendor;
  if (values['s-srs'] !== undefined) options.sourceSrs = values['s-srs'];
  return { help: false, kind: run, options, json: values.json };
}

/** A share option (0-1), or undefined when absent. */
function share(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const r = Number(raw);
  if (!Number.isFinite(r) || r < 0 || r > 1) throw new UsageError(`${name} must be a number between 0 and 1`);
  return r;
}

const n = (x: number) => x.toLocaleString('en-US');
const plural = (x: number, one: string, many = `${one}s`) => `${n(x)} ${x === 1 ? one : many}`;

export function report(s: ImportSummary): string {
  const lines = [
    `${s.kind} ${s.file}: ${s.status === 'dry_run' ? 'dry run, nothing changed,' : s.status} in ${s.seconds.toFixed(1)} s (load ${s.loadId})`,
    `  rows read ${n(s.rowsRead)}, ${s.status === 'dry_run' ? 'would load' : 'loaded'} ${n(s.rowsLoaded)}, rejected ${n(s.rowsRejected)}` +
      ` (invalid ${n(s.invalid)}, duplicates ${n(s.duplicates)}, unmatched ${n(s.unmatched)});` +
      ` read at ${n(s.rowsPerSecond)} rows/s`,
  ];
  for (const { county, guard, ...r } of s.counties) {
    const counts = Object.entries(r).map(([k, v]) => `${k} ${typeof v === 'number' ? n(v) : v}`);
    lines.push(`  ${county}: ${counts.join(', ')}${guard ? `; guard: ${guard}` : ''}`);
  }
  if (s.fallbackDecodedLines)
    lines.push(`  ${plural(s.fallbackDecodedLines, 'line was', 'lines were')} not UTF-8 and read as Windows-1252`);
  if (s.missingColumns.length) lines.push(`  columns not in the file (loaded as NULL): ${s.missingColumns.join(', ')}`);
  if (s.rowsRejected) lines.push(`  rejects: ${s.rejectsFile}`);
  return lines.join('\n') + '\n';
}
