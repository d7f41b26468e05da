// FDOR parcel polygons -> core.parcels.geom / centroid. ogr2ogr reads the file (zipped shapefile through /vsizip/,
// GeoJSON, GeoJSONSeq), reprojects from the file's own CRS (.prj) to EPSG:4326 and streams CSV with WKT, which
// runs through the same pipeline as the roll files. Polygons join on PARCELNO = PARCEL_ID within the county.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { ImportError } from './errors.ts';
import { checkFile, isZip, type OpenedInput } from './input.ts';
import {
  runImport,
  type Getter,
  type ImportOptions,
  type ImportSummary,
  type Kind,
  type RowContext,
} from './pipeline.ts';
import { int, RowError } from './values.ts';
import { listZip } from './zip.ts';

const ALIASES: Record<string, string[]> = {
  PARCELNO: ['PARCEL_ID', 'PARCELID', 'PARCEL_NO', 'PIN', 'FOLIO'],
  CO_NO: ['CONO', 'COUNTY_NO', 'CNTY_NO'],
};

/** What ogr2ogr reads: the .shp inside a zip, or the file itself. */
async function datasource(path: string): Promise<string> {
  const abs = resolve(path);
  if (isZip(path)) {
    const shp = (await listZip(path)).find((name) => /\.shp$/i.test(name) && !name.startsWith('__MACOSX/'));
    if (!shp) throw new ImportError(`${path}: the zip holds no .shp file`);
    return `/vsizip/${abs}/${shp}`;
  }
  if (/\.(geojsonl|geojsons|jsonl|ndjson)$/i.test(path)) return `GeoJSONSeq:${abs}`;
  return abs;
}

/**
 * How far a process has read into a file: the offset of its descriptor on it (/proc/<pid>/fdinfo), looked up at most
 * every 200 ms; the whole size once the process has exited.
 */
function readPosition(pid: number, path: string, size: number, exited: () => boolean): () => number {
  let fd: string | null = null;
  let pos = 0;
  let at = 0;
  return () => {
    if (exited()) return size;
    const now = Date.now();
    if (now - at < 200) return pos;
    at = now;
    try {
      fd ??= readdirSync(`/proc/${pid}/fd`).find((f) => readlinkSync(`/proc/${pid}/fd/${f}`) === path) ?? null;
      if (fd)
        pos = Math.min(size, Number(/^pos:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'))?.[1]));
    } catch {
      fd = null; // closed or not yet open: look again next time
    }
    return pos;
  };
}

async function openGeometry(options: ImportOptions): Promise<OpenedInput> {
  const size = await checkFile(options.file);
  const src = await datasource(options.file);
  const args = ['-f', 'CSV', '/vsistdout/', src, '-t_srs', 'EPSG:4326', '-lco', 'GEOMETRY=AS_WKT'];
  if (options.sourceSrs) args.push('-s_srs', options.sourceSrs);
  let child;
  try {
    child = spawn('ogr2ogr', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    throw new ImportError(`ogr2ogr: ${(err as Error).message}`);
  }
  let stderr = '';
  let ended = false;
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  child.on('close', () => (ended = true));
  const exited = new Promise<void>((ok, fail) => {
    child.on('error', (err: NodeJS.ErrnoException) =>
      fail(
        new ImportError(
          err.code === 'ENOENT' ? 'ogr2ogr not found: install gdal-bin (make install)' : `ogr2ogr: ${err.message}`,
        ),
      ),
    );
    child.on('close', (code) => {
      const msg = stderr.split('\n').find((l) => l.startsWith('ERROR')) ?? stderr.trim().split('\n')[0];
      if (code === 0) ok();
      else fail(new ImportError(`ogr2ogr could not read ${options.file}: ${msg || `exit ${code}`}`));
    });
  });
  exited.catch(() => {});
  const out = new PassThrough({ highWaterMark: 1 << 20 });
  child.stdout.pipe(out);
  // Progress is how far ogr2ogr has read into the file (its output's size is unknown up front).
  return {
    stream: out,
    totalBytes: size,
    bytesRead: readPosition(child.pid!, realpathSync(options.file), size, () => ended),
    label: src,
    done: () => exited,
    close: () => child.kill(),
  };
}

function mapRow(get: Getter, ctx: RowContext) {
  let countyId: number;
  const raw = get('CO_NO');
  const coNo = raw === undefined ? null : int('CO_NO', raw, 0, 99);
  if (coNo === 0) throw new RowError('CO_NO 0: FDOR matched this polygon to no roll record');
  if (coNo !== null) {
    const c = ctx.counties.byCoNo(coNo);
    if (!c) throw new RowError(`CO_NO: '${raw}' is not a Florida county number (11-77)`);
    if (ctx.county && c.id !== ctx.county.id) throw new RowError(`CO_NO ${coNo} is not --county ${ctx.county.slug}`);
    countyId = c.id;
  } else if (ctx.county) countyId = ctx.county.id;
  else throw new RowError('CO_NO: missing (pass --county)');
  const parcelId = get('PARCELNO')?.trim();
  if (!parcelId) throw new RowError('PARCELNO: missing');
  const wkt = get('WKT')?.trim();
  if (!wkt) throw new RowError('no geometry');
  return [countyId, parcelId, wkt];
}

export const geometryKind: Kind = {
  kind: 'parcel-geometry',
  label: 'a parcel geometry file',
  stage: 'ingest.geometry_stage',
  stageColumns: ['county_id', 'parcel_id', 'wkt'],
  layout: { columns: ['WKT', 'PARCELNO', 'CO_NO'], aliases: ALIASES, required: ['WKT', 'PARCELNO'] },
  countyColumn: 'CO_NO',
  replaces: { count: 'cleared', verb: 'clear the polygons of', noun: 'parcels' },
  open: openGeometry,
  check: (ctx) => {
    if (ctx.header.index.CO_NO! < 0 && !ctx.county) {
      throw new ImportError(`${ctx.options.file}: no CO_NO attribute; pass --county`);
    }
  },
  row: mapRow,
  prestage: async (sql, loadId) =>
    sql<{ line_no: number; reason: string }[]>`SELECT line_no::int, reason FROM ingest.prepare_geometry(${loadId})`,
  merge: async (tx, loadId, countyId) => {
    const [r] = await tx<{ updated: number; cleared: number }[]>`
      SELECT updated::int, cleared::int FROM ingest.merge_geometry(${loadId}, ${countyId}::smallint)`;
    return { ...r! };
  },
};

export const importParcelGeometry = (options: ImportOptions): Promise<ImportSummary> =>
  runImport(geometryKind, options);
