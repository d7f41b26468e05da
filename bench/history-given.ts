// bench/history.ts --database-url: roll history on a database given whole (any scale, for example the full state).
// At 4 connections: GET /v1/parcels/{id} (the control, an existing endpoint) and GET /v1/parcels/{id}/history; with
// a roll directory (make data YEARS=n for the same state) and a year, that roll year of every county loaded through
// the NAL importer, one county after the other (time, database growth, the history partitions' share), then the two
// reads again. It adds a bench API key; it writes nothing else unless told to load a year.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { withRole } from '../src/db-url.ts';
import type { GenerateSummary } from '../scripts/generate/profiles/state.ts';
import { importNal } from '../src/importers/nal.ts';
import { benchClient, startApi } from './api.ts';
import { drive, type DriveResult } from './driver.ts';
import { freePort } from './load.ts';
import { writeReport } from './report.ts';

const log = (line: string) => console.error(line);
const MB = 1024 * 1024;

export async function benchGiven(o: { url: string; rollDir?: string; year?: number; seconds: number }) {
  const database = new URL(o.url).pathname.slice(1);
  const sql = postgres(o.url, { max: 1, onnotice: () => {} });
  const size = async () => {
    const [r] = await sql<{ db: number; rolls: number }[]>`
      SELECT pg_database_size(current_database())::float8 AS db,
             (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
               WHERE c.relname LIKE 'parcel\\_rolls\\_%' AND c.relkind = 'r')::float8 AS rolls`;
    return r!;
  };
  const shape = async () =>
    (
      await sql<{ parcels: number; rolls: number; years: number[] }[]>`
      SELECT (SELECT count(*) FROM core.parcels)::int AS parcels, (SELECT count(*) FROM core.parcel_rolls)::int AS rolls,
             (SELECT coalesce(array_agg(DISTINCT roll_year ORDER BY roll_year), '{}') FROM core.parcel_roll_years)::int[] AS years`
    )[0]!;
  const before = await shape();
  const bench = await benchClient(sql);
  const api = await startApi(
    await freePort(),
    { DATABASE_URL: o.url, API_DATABASE_URL: withRole(o.url, 'api_reader'), REDIS_KEY_PREFIX: `bench:${database}:` },
    [],
    300,
  );
  const headers = { authorization: `Bearer ${bench.key}` };
  // ids sampled from the whole table without sorting it: a few pages at random
  const ids = (await sql<{ id: number }[]>`SELECT id::int FROM core.parcels TABLESAMPLE SYSTEM (1) LIMIT 3000`).map(
    (r) => r.id,
  );
  const run = async (suffix: string): Promise<DriveResult> => {
    const paths = ids.map((id) => `/v1/parcels/${id}${suffix}`);
    await drive({ base: api.base, paths, headers, concurrency: 4, seconds: 2 }); // warm-up
    return drive({ base: api.base, paths, headers, concurrency: 4, seconds: o.seconds });
  };
  const measured: [string, DriveResult][] = [];
  let load: { seconds: number; growth: number; rolls: number } | null = null;
  try {
    measured.push([`${before.years.length} roll year(s): GET /v1/parcels/{id} (control)`, await run('')]);
    measured.push([`${before.years.length} roll year(s): GET /v1/parcels/{id}/history`, await run('/history')]);
    if (o.rollDir && o.year) {
      const manifest = JSON.parse(readFileSync(join(o.rollDir, 'manifest.json'), 'utf8')) as Omit<
        GenerateSummary,
        'seconds'
      >;
      await sql`CHECKPOINT`;
      const was = await size();
      const t0 = performance.now();
      for (const c of manifest.counties) {
        const file = o.year === manifest.rollYear ? c.files.nal : c.olderNal?.find((r) => r.year === o.year)?.file;
        if (!file) throw new Error(`${o.rollDir}: no ${o.year} roll for county ${c.slug}`);
        log(`history: loading ${file}`);
        await importNal({
          file: join(o.rollDir, file),
          databaseUrl: o.url,
          quiet: true,
          rejects: '.local/rejects.csv',
        });
      }
      const seconds = (performance.now() - t0) / 1000;
      await sql`ANALYZE`;
      await sql`CHECKPOINT`;
      const now = await size();
      load = { seconds, growth: now.db - was.db, rolls: now.rolls - was.rolls };
      const after = await shape();
      measured.push([`${after.years.length} roll year(s): GET /v1/parcels/{id} (control)`, await run('')]);
      measured.push([`${after.years.length} roll year(s): GET /v1/parcels/{id}/history`, await run('/history')]);
    }
  } finally {
    await api.stop();
    await bench.retire();
  }
  const after = await shape();
  await sql.end();

  const n = (v: number) => v.toLocaleString('en-US');
  const lines = [
    '# Roll history benchmark',
    '',
    `\`node --import tsx bench/history.ts --database-url …/${database}` +
      `${o.rollDir ? ` --roll-dir ${o.rollDir} --year ${o.year}` : ''} --seconds ${o.seconds}\` on ` +
      `${new Date().toISOString().slice(0, 10)}: ${database} as given, ${n(before.parcels)} current parcels, ` +
      `${n(before.rolls)} roll rows, roll years ${before.years.join(', ')}` +
      (load ? `; after the load ${n(after.rolls)} roll rows, roll years ${after.years.join(', ')}` : '') +
      '. 4 connections, one API process, 3,000 parcel ids sampled at random.',
    '',
    ...(load
      ? [
          '## Loading one more roll year',
          '',
          '| roll | seconds | parcels/s | database growth MB | of which history partitions MB |',
          '| --- | ---: | ---: | ---: | ---: |',
          `| ${o.year} | ${load.seconds.toFixed(1)} | ${n(Math.round(before.parcels / load.seconds))} | ` +
            `${(load.growth / MB).toFixed(1)} | ${(load.rolls / MB).toFixed(1)} |`,
          '',
        ]
      : []),
    '## Reads at 4 connections',
    '',
    '| request | requests | rps | p50 ms | p95 ms | p99 ms | p99 / control | non-2xx |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...measured.map(([name, r], i) => {
      const control = measured[i - (i % 2)]![1];
      return (
        `| ${name} | ${r.requests} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p95.toFixed(2)} | ` +
        `${r.p99.toFixed(2)} | ${(r.p99 / control.p99).toFixed(2)} | ${r.non2xx} |`
      );
    }),
    '',
  ];
  writeReport('bench/results/history.md', lines.join('\n'));
  log(lines.join('\n'));
}
