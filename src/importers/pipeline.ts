// The one pipeline every kind runs: open the input, resolve the header (refusing a file of another kind), map each
// record to a staging row (or a reject), COPY into the kind's UNLOGGED staging table, check the reject threshold, drop
// in-file duplicates, then merge every county in ONE transaction together with the county counters and the
// load_history row, under the shrink guard (guard.ts). A dry run does all of it and rolls the transaction back.
// Kinds only describe their columns, their row mapping and their merge function.
import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import postgres from 'postgres';
import { ownerDatabaseUrl } from '../db-url.ts';
import { Counties, type County } from './counties.ts';
import { CopyWriter, type CopyValue } from './copy.ts';
import { ImportError, RefusedError } from './errors.ts';
import { countyScope, DEFAULT_MAX_DELETE_RATE, refusal, type Replaces } from './guard.ts';
import { MissingColumnsError, resolveHeader, type Layout, type ResolvedHeader } from './header.ts';
import { openInput, sha256File, type OpenedInput } from './input.ts';
import { Heartbeat, HEARTBEAT_MS } from './heartbeat.ts';
import { Progress } from './progress.ts';
import { readRecords, type DecodeStats } from './records.ts';
import { RejectsFile } from './rejects.ts';
import { RowError } from './values.ts';

export interface ImportOptions {
  file: string;
  /** Owner connection; DATABASE_URL (or the local default) when absent. */
  databaseUrl?: string;
  /** Rejects file; `<rejectsDir>/<file name>.rejects.csv` by default. */
  rejects?: string;
  /** Where rejects files go; `.local/imports/` of the repository by default, never beside the input. */
  rejectsDir?: string;
  /** Share of rows that may be rejected before the load fails as a whole (default 0.01). */
  maxRejectRate?: number;
  /** Share of a county's rows (or of a key column's values) a replace-style load may take away (default 0.05). */
  maxDeleteRate?: number;
  /** Stage, merge and check, print what the load would do, then roll it back. */
  dryRun?: boolean;
  county?: string;
  taxYear?: number;
  vendor?: string;
  /** Source CRS for geometry files without one (passed to ogr2ogr -s_srs). */
  sourceSrs?: string;
  quiet?: boolean;
  /** Test hook: runs inside the merge transaction just before COMMIT. */
  beforeCommit?: (tx: postgres.TransactionSql) => Promise<void>;
  /** How often the run reports its progress in core.load_history (default HEARTBEAT_MS; heartbeat.ts). */
  progressEveryMs?: number;
}

export const DEFAULT_MAX_REJECT_RATE = 0.01;
export const DEFAULT_REJECTS_DIR = new URL('../../.local/imports/', import.meta.url).pathname;

/** Everything a kind's row mapper may consult. */
export interface RowContext {
  counties: Counties;
  /** --county, resolved. */
  county: County | null;
  options: ImportOptions;
  header: ResolvedHeader;
  /** Kind-specific state (e.g. the (county, tax year) pairs a delinquency file touched). */
  seen: Set<string>;
}

export type Getter = (column: string) => string | undefined;

export interface Kind {
  kind: string;
  /** What a file of this kind is, for messages: "an SDF sales file". */
  label: string;
  stage: string;
  /** Staging columns after load_id and line_no; the first must be county_id. */
  stageColumns: readonly string[];
  layout: Layout;
  /** The column --county stands in for: not reported missing when --county is given. */
  countyColumn?: string;
  /** Replace-style kinds: what the merge takes away from a county, which the shrink guard limits. */
  replaces?: Replaces;
  open?: (options: ImportOptions) => Promise<OpenedInput>;
  /** Checks that need options and header together (one-line ImportError when impossible). */
  check?: (ctx: RowContext) => void;
  /** Staging values for one record, county id first; throws RowError to reject it. */
  row: (get: Getter, ctx: RowContext) => CopyValue[];
  /** The natural key of a row (SQL over the staging row `x`): in-file duplicates of it are dropped, last line wins. */
  dedupeKey?: string;
  /** Runs after COPY, before the threshold check: more rejects found in SQL (line_no, reason). */
  prestage?: (
    sql: postgres.Sql,
    loadId: number,
    options: ImportOptions,
  ) => Promise<{ line_no: number; reason: string }[]>;
  merge: (tx: postgres.TransactionSql, loadId: number, countyId: number) => Promise<Record<string, number>>;
  onSuccess?: (tx: postgres.TransactionSql, ctx: RowContext) => Promise<void>;
  /** Runs after a failure in its own statement, so it survives the rollback. */
  onFailure?: (sql: postgres.Sql, ctx: RowContext | null, options: ImportOptions, message: string) => Promise<void>;
}

export interface CountyResult {
  county: string;
  rows: number;
  /** Replace-style kinds: the shrink guard's verdict, 'first load', 'ok' or (in a dry run) the refusal. */
  guard?: string;
  [count: string]: number | string | undefined;
}

export interface ImportSummary {
  kind: string;
  file: string;
  loadId: number;
  status: 'succeeded' | 'dry_run';
  rowsRead: number;
  rowsLoaded: number;
  rowsRejected: number;
  invalid: number;
  duplicates: number;
  unmatched: number;
  /** Rows read per second, as the progress line's last report gives it. */
  rowsPerSecond: number;
  fallbackDecodedLines: number;
  missingColumns: string[];
  counties: CountyResult[];
  /** Dry run: the refusals the real load would meet (it stops at the first). */
  refusals: string[];
  rejectsFile: string;
  seconds: number;
  /** Seconds per phase: read+COPY, checks (analyze, duplicates, geometry prepare), merge transaction, the rest. */
  phases: { copy: number; checks: number; merge: number; finish: number };
}

export async function runImport(kind: Kind, options: ImportOptions): Promise<ImportSummary> {
  const started = Date.now();
  const maxRate = options.maxRejectRate ?? DEFAULT_MAX_REJECT_RATE;
  if (!(maxRate >= 0 && maxRate <= 1)) throw new ImportError('--max-reject-rate must be between 0 and 1');
  const maxDeleteRate = options.maxDeleteRate ?? DEFAULT_MAX_DELETE_RATE;
  if (!(maxDeleteRate >= 0 && maxDeleteRate <= 1)) throw new ImportError('--max-delete-rate must be between 0 and 1');
  const opener = kind.open ?? ((o: ImportOptions) => openInput(o.file));
  const databaseUrl = options.databaseUrl ?? ownerDatabaseUrl(process.env);
  const sql = postgres(databaseUrl, {
    max: 1,
    onnotice: () => {},
    connection: { application_name: `import ${kind.kind}` },
  });
  let loadId = 0;
  let ctx: RowContext | null = null;
  let rejects: RejectsFile | null = null;
  let copy: CopyWriter | null = null;
  let input: OpenedInput | null = null;
  let progress: Progress | null = null;
  let heartbeat: Heartbeat | null = null;
  const counts = { read: 0, staged: 0, invalid: 0, duplicates: 0, unmatched: 0 };
  let countyIds: number[] | null = null;
  try {
    const counties = await Counties.load(sql).catch((err: Error) => {
      throw new ImportError(`database: ${err.message}`);
    });
    const county = options.county !== undefined ? counties.option(options.county) : null;
    input = await opener(options); // a missing file fails here, before anything is written
    progress = new Progress(kind.kind, input.totalBytes || null, Progress.mode(options.quiet ?? false));
    const hash = sha256File(options.file);
    hash.catch(() => {});
    const [row] = await sql<{ id: number }[]>`
      INSERT INTO core.load_history (county_id, kind, file_name, status)
      VALUES (${county?.id ?? null}, ${kind.kind}, ${basename(options.file)}, 'running') RETURNING id::int`;
    loadId = row!.id;
    const opened = input;
    heartbeat = Heartbeat.start(
      databaseUrl,
      kind.kind,
      loadId,
      opened.totalBytes || null,
      () => ({ rows: counts.read, bytes: opened.bytesRead() }),
      options.progressEveryMs ?? HEARTBEAT_MS,
    );
    rejects = await RejectsFile.open(rejectsPath(options));

    // Pass 1: records -> staging rows or rejects.
    const stats: DecodeStats = { fallbackLines: 0 };
    let delimiter = ',';
    const records = readRecords(input.stream, stats, () => delimiter);
    copy = await CopyWriter.open(sql, kind.stage, ['load_id', 'line_no', ...kind.stageColumns]);
    const countyRows = new Map<number, number>();
    let fields: string[] = [];
    const get: Getter = (c) => {
      const i = ctx!.header.index[c];
      return i === undefined || i < 0 ? undefined : fields[i];
    };
    for await (const batch of records) {
      for (const rec of batch) {
        if (!ctx) {
          // The header record. A tab or pipe in it and no comma: the file uses that delimiter instead.
          if (rec.fields && rec.fields.length === 1 && !rec.text.includes(',')) {
            const d = rec.text.includes('\t') ? '\t' : rec.text.includes('|') ? '|' : null;
            if (d) {
              delimiter = d;
              rec.fields = rec.text.split(d);
            }
          }
          const header = await headerOf(
            kind,
            (rec.fields ?? []).map((f) => f.replace(/^\uFEFF/, '')),
            options,
          );
          ctx = { counties, county, options, header, seen: new Set() };
          kind.check?.(ctx);
          if (!header.headerless) continue;
        }
        counts.read++;
        let reason: string;
        if (!rec.fields) reason = 'unterminated quoted field';
        else if (
          rec.fields.length !== ctx.header.width &&
          !(rec.fields.length === ctx.header.width + 1 && rec.fields[ctx.header.width] === '')
        ) {
          reason = `expected ${ctx.header.width} fields, found ${rec.fields.length}`;
        } else {
          fields = rec.fields;
          try {
            const values = kind.row(get, ctx);
            await copy!.push([loadId, rec.line, ...values]);
            counts.staged++;
            const cid = values[0] as number;
            countyRows.set(cid, (countyRows.get(cid) ?? 0) + 1);
            continue;
          } catch (err) {
            if (!(err instanceof RowError)) throw err;
            reason = err.message;
          }
        }
        counts.invalid++;
        await rejects.add(rec.line, reason, rec.text);
      }
      progress.tick(counts.read, input.bytesRead());
    }
    await copy.end();
    copy = null;
    await heartbeat.report(); // the whole file read: seen before the merge, whose lock on the row holds reports back
    await input.done?.();
    const rowsPerSecond = progress.finish(counts.read, input.bytesRead());
    const copied = Date.now();
    if (!ctx) throw new ImportError(`${options.file}: empty file (no header row)`);
    const rowCtx: RowContext = ctx;
    checkThreshold(counts.invalid, counts.read, maxRate, 'invalid');

    await sql.unsafe(`ANALYZE ${kind.stage}`);
    const deferred = new Map<number, string>();
    if (kind.prestage) {
      for (const r of await kind.prestage(sql, loadId, options)) {
        deferred.set(Number(r.line_no), r.reason);
        counts.unmatched++;
      }
      checkThreshold(counts.invalid + counts.unmatched, counts.read, maxRate, 'rejected');
    }
    if (kind.dedupeKey) {
      const dups = await sql.unsafe<{ line_no: string; kept_line_no: string }[]>(
        'SELECT line_no::text, kept_line_no::text FROM ingest.drop_duplicates($1::regclass, $2, $3)',
        [kind.stage, kind.dedupeKey, loadId],
      );
      for (const d of dups)
        deferred.set(Number(d.line_no), `duplicate: superseded by line ${d.kept_line_no} (last line wins)`);
      counts.duplicates = dups.length;
    }

    // The merge: every county of the file, the counters and the history row, one transaction.
    progress.note(
      `${options.dryRun ? 'dry run: ' : ''}merging ${counts.staged - counts.duplicates - counts.unmatched} rows…`,
    );
    const ids = [...countyRows.keys()].sort((a, b) => a - b);
    countyIds = ids;
    const results: CountyResult[] = [];
    const refusals: string[] = [];
    const rowsLoaded = counts.staged - counts.duplicates - counts.unmatched;
    const rowsRejected = counts.invalid + counts.duplicates + counts.unmatched;
    const sha = await hash;
    const checked = Date.now();
    const record = (db: postgres.Sql | postgres.TransactionSql, status: 'succeeded' | 'dry_run', message: string) => db`
        UPDATE core.load_history
           SET status = ${status}, county_id = ${ids.length === 1 ? ids[0]! : (county?.id ?? null)},
               county_ids = ${ids}::smallint[], file_sha256 = ${sha}, rows_read = ${counts.read},
               rows_loaded = ${status === 'succeeded' ? rowsLoaded : 0}, rows_rejected = ${rowsRejected},
               message = ${message}, finished_at = now()
         WHERE id = ${loadId}`;
    await sql
      .begin(async (tx) => {
        if (options.dryRun) await tx`SELECT set_config('ingest.dry_run', 'on', true)`; // ingest.in_dry_run()
        for (const id of ids) {
          const { result, refused } = await mergeCounty(kind, tx, loadId, id, counties.get(id).slug, maxDeleteRate);
          results.push({ ...result, rows: countyRows.get(id) ?? 0 });
          if (refused && !options.dryRun) throw new RefusedError(refused);
          if (refused) refusals.push(refused);
        }
        await kind.onSuccess?.(tx, rowCtx);
        if (options.dryRun) throw new DryRun();
        await tx`SELECT saved.queue_load(${loadId})`; // matched against the saved searches after the commit (sql/saved/)
        await record(tx, 'succeeded', describe(results));
        await options.beforeCommit?.(tx);
      })
      .catch((err: unknown) => {
        if (!(err instanceof DryRun)) throw err;
      });
    if (options.dryRun) await record(sql, 'dry_run', [describe(results), ...refusals].join('; refused: '));
    const merged = Date.now();
    await sql`SELECT ingest.clear_stage(${loadId})`;

    // Pass 2, only when SQL found rejects: fetch their raw records for the rejects file.
    if (deferred.size) {
      const again = await opener(options);
      for await (const batch of readRecords(again.stream, { fallbackLines: 0 }, () => delimiter)) {
        for (const rec of batch) {
          const reason = deferred.get(rec.line);
          if (reason !== undefined) await rejects.add(rec.line, reason, rec.text);
        }
      }
      await again.done?.();
    }
    await rejects.close();
    return {
      kind: kind.kind,
      file: options.file,
      loadId,
      status: options.dryRun ? 'dry_run' : 'succeeded',
      rowsRead: counts.read,
      rowsLoaded,
      rowsRejected,
      invalid: counts.invalid,
      duplicates: counts.duplicates,
      unmatched: counts.unmatched,
      rowsPerSecond,
      fallbackDecodedLines: stats.fallbackLines,
      missingColumns: rowCtx.header.missing,
      counties: results,
      refusals,
      rejectsFile: rejects.path,
      seconds: (Date.now() - started) / 1000,
      phases: {
        copy: (copied - started) / 1000,
        checks: (checked - copied) / 1000,
        merge: (merged - checked) / 1000,
        finish: (Date.now() - merged) / 1000,
      },
    };
  } catch (err) {
    progress?.end();
    input?.stream.destroy();
    input?.close?.();
    await copy?.abort().catch(() => {});
    const message = err instanceof Error ? err.message : String(err);
    try {
      if (loadId) {
        await sql`
          UPDATE core.load_history
             SET status = ${err instanceof RefusedError ? 'refused' : 'failed'}, county_ids = ${countyIds},
                 rows_read = ${counts.read}, rows_loaded = 0,
                 rows_rejected = ${counts.invalid + counts.unmatched + counts.duplicates}, message = ${message},
                 finished_at = now()
           WHERE id = ${loadId}`;
        await sql`SELECT ingest.clear_stage(${loadId})`;
      }
      await kind.onFailure?.(sql, ctx, options, message);
    } catch {
      // The database may be the failure; the original error is the one to report.
    }
    await rejects?.close().catch(() => {});
    throw err;
  } finally {
    await heartbeat?.stop();
    await sql.end();
  }
}

/** Thrown at the end of a dry run's transaction to roll it back. */
class DryRun extends Error {}

/** One county's merge under the shrink guard: its counts and verdict, and why it must be refused (or null). */
async function mergeCounty(
  kind: Kind,
  tx: postgres.TransactionSql,
  loadId: number,
  countyId: number,
  slug: string,
  maxDeleteRate: number,
): Promise<{ result: CountyResult; refused: string | null }> {
  await tx`SELECT ingest.lock_county(${countyId}::smallint)`; // the scope read before the merge is the one it replaces
  const before = kind.replaces && (await countyScope(tx, kind.kind, loadId, countyId));
  const counts = await kind.merge(tx, loadId, countyId);
  const result: CountyResult = { county: slug, rows: 0, ...counts };
  if (!kind.replaces || !before) return { result, refused: null };
  const after = await countyScope(tx, kind.kind, loadId, countyId);
  const refused = refusal(kind.replaces, slug, before, after, counts[kind.replaces.count] ?? 0, maxDeleteRate);
  result.guard = refused ?? (before.loaded_before ? 'ok' : 'first load');
  return { result, refused };
}

/** load_history's message: "liberty: 260 inserted, 50 updated, …; alachua: …". */
const describe = (results: CountyResult[]) =>
  results
    .map(
      ({ county, guard: _, ...r }) =>
        `${county}: ${Object.entries(r)
          .map(([k, v]) => `${v} ${k}`)
          .join(', ')}`,
    )
    .join('; ') || 'no rows';

/** The header of a file of this kind, or a refusal naming what it lacks and which kind the file looks like. */
async function headerOf(kind: Kind, fields: string[], options: ImportOptions): Promise<ResolvedHeader> {
  let header: ResolvedHeader;
  try {
    header = resolveHeader(fields, kind.layout);
  } catch (err) {
    if (!(err instanceof MissingColumnsError)) throw err;
    // Imported here: kinds.ts imports every kind, and every kind imports this module.
    const other = (await import('./kinds.ts')).lookalike(kind.kind, fields, options.file);
    const found = `${fields.slice(0, 12).join(', ')}${fields.length > 12 ? ', …' : ''}`;
    throw new RefusedError(
      `${options.file}: not ${kind.label}: the header lacks ${err.missing.join(', ')}; ` +
        (other ? `this looks like ${other.label}: use \`import ${other.kind}\`` : `found: ${found}`) +
        '; nothing was changed',
    );
  }
  if (options.county !== undefined && kind.countyColumn)
    header.missing = header.missing.filter((c) => c !== kind.countyColumn);
  return header;
}

function rejectsPath(options: ImportOptions): string {
  const path =
    options.rejects ?? join(options.rejectsDir ?? DEFAULT_REJECTS_DIR, `${basename(options.file)}.rejects.csv`);
  mkdirSync(dirname(path), { recursive: true });
  return path;
}

function checkThreshold(rejected: number, read: number, maxRate: number, what: string) {
  if (read > 0 && rejected / read > maxRate) {
    throw new RefusedError(
      `${rejected} of ${read} rows ${what} (${((rejected / read) * 100).toFixed(2)}%), over --max-reject-rate ${maxRate}; nothing was loaded (see the rejects file)`,
    );
  }
}
