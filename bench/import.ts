// Import throughput: the floor (plain COPY of a NAL file into an UNLOGGED all-text table, server-side CSV parsing)
// against the full NAL import (decode, validate, map, COPY to staging, merge into core.parcels with its trigram,
// GiST and btree indexes), from the CSV and from the same CSV zipped, rows/s for each, their ratio, and the
// importer's peak RSS. Writes bench/results/import.md.
//   node --import tsx bench/import.ts [--rows 200000] [--database florida_bench_import]
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, mkdirSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { ownerDatabaseUrl, withDatabase } from '../src/db-url.ts';
import { NAL_COLUMNS, importNal } from '../src/importers/nal.ts';
import { csvLine } from '../src/importers/csv.ts';
import type { ImportSummary } from '../src/importers/pipeline.ts';
import { writeReport } from './report.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '200000' },
    database: { type: 'string', default: 'florida_bench_import' },
    template: { type: 'string', default: process.env.TEST_TEMPLATE_DB || 'florida_test_template' },
  },
});
const ROWS = Number(values.rows);
const ROOT = new URL('..', import.meta.url).pathname;
const DATA = `${ROOT}bench/data`;
const FILE = `${DATA}/NAL11-bench-${ROWS}.csv`;
const ZIP = `${DATA}/NAL11-bench-${ROWS}.zip`;

/** A statewide-shaped NAL file for Alachua (CO_NO 11): every column present, realistic widths, no rejects. */
async function generate() {
  if (existsSync(FILE)) return;
  mkdirSync(DATA, { recursive: true });
  const out = createWriteStream(FILE);
  let seed = 42;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const names = ['SMITH', 'JOHNSON', 'WILLIAMS', 'BROWN', 'JONES', 'GARCIA', 'MILLER', 'DAVIS', 'NGUYEN', 'PATEL'];
  const firsts = ['JOHN', 'MARY', 'JAMES', 'LINDA', 'ROBERT', 'MARIA', 'MICHAEL', 'SUSAN', 'DAVID', 'ANA'];
  const streets = ['NW 13TH', 'SW ARCHER', 'NE WALDO', 'UNIVERSITY', 'NEWBERRY', 'TOWER', 'HAWTHORNE', 'MILLHOPPER'];
  out.write(NAL_COLUMNS.join(',') + '\n');
  for (let i = 0; i < ROWS; i++) {
    const jv = 50000 + Math.floor(rnd() * 900000);
    const r: Record<string, string | number> = {
      CO_NO: 11,
      PARCEL_ID: `${String(10000 + Math.floor(i / 1000)).padStart(5, '0')}-${String(i % 1000).padStart(3, '0')}-000`,
      FILE_T: 'R',
      ASMNT_YR: 2025,
      DOR_UC: pick(['001', '004', '000', '002', '011', '017', '051']),
      PA_UC: '0100',
      JV: jv,
      AV_SD: Math.round(jv * 0.8),
      AV_NSD: Math.round(jv * 0.8),
      TV_SD: Math.round(jv * 0.7),
      TV_NSD: Math.round(jv * 0.65),
      LND_VAL: Math.round(jv * 0.3),
      LND_SQFOOT: 5000 + Math.floor(rnd() * 30000),
      EFF_YR_BLT: 1960 + Math.floor(rnd() * 60),
      ACT_YR_BLT: 1950 + Math.floor(rnd() * 70),
      TOT_LVG_AREA: 800 + Math.floor(rnd() * 3000),
      NO_BULDNG: 1,
      NO_RES_UNTS: 1,
      SALE_PRC1: rnd() < 0.3 ? Math.round(jv * 0.9) : '',
      SALE_YR1: 2024,
      SALE_MO1: 1 + Math.floor(rnd() * 12),
      OWN_NAME: `${pick(names)} ${pick(firsts)}${rnd() < 0.3 ? ` & ${pick(firsts)}` : ''}`,
      OWN_ADDR1: `${1 + Math.floor(rnd() * 20000)} ${pick(streets)} ${pick(['ST', 'AVE', 'RD', 'BLVD'])}`,
      OWN_CITY: 'GAINESVILLE',
      OWN_STATE: 'FL',
      OWN_ZIPCD: '32601',
      S_LEGAL: `LOT ${i % 40} BLK ${i % 30} UNIVERSITY PARK PB 12-${i % 99}`,
      PHY_ADDR1: `${1 + Math.floor(rnd() * 20000)} ${pick(streets)} ${pick(['ST', 'AVE', 'RD', 'BLVD'])}`,
      PHY_CITY: 'GAINESVILLE',
      PHY_ZIPCD: '32601',
      ALT_KEY: String(1000000 + i),
      STATE_PAR_ID: `C11-000-000-${i}-0`,
      SEQ_NO: i,
      EXMPT_01: rnd() < 0.4 ? 25000 : '',
      EXMPT_02: rnd() < 0.4 ? 25000 : '',
    };
    if (!r.SALE_PRC1) r.SALE_YR1 = r.SALE_MO1 = '';
    if (!out.write(csvLine(NAL_COLUMNS.map((c) => r[c] ?? '')) + '\n')) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

/** The same file deflated in a zip (Info-ZIP's `zip`), as FDOR ships its rolls; false when `zip` is missing. */
function zipped(): boolean {
  if (existsSync(ZIP)) return true;
  const r = spawnSync('zip', ['-q', '-j', ZIP, FILE], { stdio: 'inherit' });
  if (r.status === 0) return true;
  console.error('bench/import: no `zip` command; the zipped run is skipped');
  return false;
}

/**
 * A lower bound for any import that leaves the county indexed as `core.parcels` is: the county's rows (loaded by the
 * first run) copied into an unlogged table, then the same index definitions built on it in bulk.
 */
async function indexedCopyBound(sql: postgres.Sql) {
  console.error('bench/import: bound (copy + bulk index build)…');
  const defs = await sql<{ def: string }[]>`
    SELECT pg_get_indexdef(indexrelid) AS def FROM pg_index WHERE indrelid = 'core.parcels'::regclass`;
  const t0 = Date.now();
  await sql.unsafe('CREATE UNLOGGED TABLE public.bench_bound AS SELECT * FROM core.parcels WHERE county_id = 1');
  const t1 = Date.now();
  for (const { def } of defs) {
    await sql.unsafe(
      def.replace(/^CREATE (UNIQUE )?INDEX \S+ ON core\.parcels /, 'CREATE $1INDEX ON public.bench_bound '),
    );
  }
  const t2 = Date.now();
  await sql.unsafe('DROP TABLE public.bench_bound');
  return { indexes: defs.length, write: (t1 - t0) / 1000, build: (t2 - t1) / 1000, seconds: (t2 - t0) / 1000 };
}

async function main() {
  console.error(`bench/import: generating ${ROWS} rows…`);
  await generate();
  const withZip = zipped();
  const bytes = statSync(FILE).size;
  const base = ownerDatabaseUrl(process.env);
  const admin = postgres(withDatabase(base, 'postgres'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP DATABASE IF EXISTS "${values.database}" WITH (FORCE)`);
  await admin.unsafe(`CREATE DATABASE "${values.database}" TEMPLATE "${values.template}"`);
  await admin.end();
  const url = withDatabase(base, values.database!);
  const sql = postgres(url, { max: 1, onnotice: () => {} });

  // Floor: the server parses the CSV into 165 text columns; no decoding, validation or merge.
  console.error('bench/import: floor (plain COPY)…');
  await sql.unsafe(`CREATE UNLOGGED TABLE public.bench_floor (${NAL_COLUMNS.map((c) => `"${c}" text`).join(', ')})`);
  const t = Date.now();
  const w = await sql.unsafe(`COPY public.bench_floor FROM STDIN WITH (FORMAT csv, HEADER true)`).writable();
  await pipeline(createReadStream(FILE, { highWaterMark: 1 << 20 }), w);
  const floorSecs = (Date.now() - t) / 1000;
  await sql.unsafe('DROP TABLE public.bench_floor');

  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  const run = async (label: string, file: string, ...setup: string[]): Promise<[string, ImportSummary]> => {
    for (const statement of setup) await sql.unsafe(statement);
    console.error(`bench/import: ${label}…`);
    const s = await importNal({ file, databaseUrl: url, rejects: `${FILE}.rejects.csv`, quiet: true });
    return [label, s];
  };
  const runs: [string, ImportSummary][] = [];
  runs.push(await run('first load (county empty): insert', FILE));
  const bound = await indexedCopyBound(sql);
  runs.push(await run('re-import, unchanged: 0 updates', FILE));
  if (withZip) runs.push(await run('re-import from the zip (deflated), unchanged: 0 updates', ZIP));
  runs.push(
    await run(
      're-import, every row changed',
      FILE,
      `UPDATE core.parcels SET just_value = just_value + 1, owner_name = owner_name || ' X' WHERE county_id = 1`,
    ),
  );
  runs.push(
    await run(
      'first load, gin_pending_list_limit 64MB',
      FILE,
      'DELETE FROM core.parcels WHERE county_id = 1',
      'VACUUM core.parcels',
      `ALTER DATABASE "${values.database}" SET gin_pending_list_limit = '64MB'`,
    ),
  );
  clearInterval(sampler);
  await sql.end();

  const floorRate = ROWS / floorSecs;
  const rss = process.resourceUsage().maxRSS / 1024;
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  const lines = [
    '# NAL import benchmark',
    '',
    `\`node --import tsx bench/import.ts --rows ${ROWS}\` on ${new Date().toISOString().slice(0, 10)}; ${fmt(ROWS)} rows, ${(bytes / 1e6).toFixed(0)} MB${withZip ? ` (${(statSync(ZIP).size / 1e6).toFixed(0)} MB zipped)` : ''}, one county (Alachua), 2 cores.`,
    '',
    '| run | seconds | rows/s | vs floor | read+COPY s | checks s | merge s |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| floor: plain COPY, 165 text columns | ${floorSecs.toFixed(1)} | ${fmt(floorRate)} | 1.00 | | | |`,
    ...runs.map(([label, s]) => {
      const rate = ROWS / s.seconds;
      return `| ${label} | ${s.seconds.toFixed(1)} | ${fmt(rate)} | ${(rate / floorRate).toFixed(2)} | ${s.phases.copy.toFixed(1)} | ${s.phases.checks.toFixed(1)} | ${s.phases.merge.toFixed(1)} |`;
    }),
    `| bound: the loaded rows copied into an unlogged table, then its ${bound.indexes} indexes built in bulk | ${bound.seconds.toFixed(1)} | ${fmt(ROWS / bound.seconds)} | ${(ROWS / bound.seconds / floorRate).toFixed(2)} | | | |`,
    '',
    `The bound is what any import would spend, at the least, to leave the county's rows in a table indexed like`,
    `\`core.parcels\` (the same ${bound.indexes} index definitions, built in bulk, on an unlogged table, without the search`,
    `structures): ${bound.write.toFixed(1)} s to write the rows and ${bound.build.toFixed(1)} s to build the indexes. Half the floor's rate`,
    `allows ${(2 * floorSecs).toFixed(1)} s for the whole import.`,
    '',
    `Peak RSS of the importer process: ${fmt(peak / 1048576)} MB sampled during the imports (maxRSS ${fmt(rss)} MB including generation).`,
  ];
  writeReport(`${ROOT}bench/results/import.md`, lines.join('\n'));
  console.log(lines.join('\n'));
}

main().catch((err) => {
  console.error(`bench/import: ${(err as Error).message}`);
  process.exit(1);
});
