// Roll history (bench/results/history.md), in one of two ways.
// Built here: a state of --parcels parcels with three roll years (make data YEARS=3), loaded year by year through
// the NAL importer into a database of its own. Measures each year's load (time, database growth), and, at 4
// connections in one run, GET /v1/parcels/{id} (an existing endpoint) with one roll year on file and again with
// three, and GET /v1/parcels/{id}/history with one and with three years.
// Given (--database-url, any scale, for example the full state): the same two reads at 4 connections on the
// database as it is and, with --roll-dir (the output of make data YEARS=n for that state) and --year, the load of
// that roll year of every county through the importer (time, database growth) and the reads again after it.
//   node --import tsx bench/history.ts [--parcels 100000] [--seconds 10]
//   node --import tsx bench/history.ts --database-url postgres://…/<db> [--roll-dir .local/<data> --year 2025] [--seconds 10]
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { ownerDatabaseUrl, withDatabase, withRole } from '../src/db-url.ts';
import { setupDatabase } from '../scripts/db-setup.ts';
import { generateState, type GenerateSummary } from '../scripts/generate/profiles/state.ts';
import { importNal } from '../src/importers/nal.ts';
import { importSdf } from '../src/importers/sdf.ts';
import { benchClient, startApi } from './api.ts';
import { drive, type DriveResult } from './driver.ts';
import { freePort } from './load.ts';
import { writeReport } from './report.ts';

const { values } = parseArgs({
  options: {
    parcels: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '10' },
    // keep the database of an earlier run that loaded the first roll and the sales, and go on from there
    resume: { type: 'boolean', default: false },
    'database-url': { type: 'string' },
    'roll-dir': { type: 'string' },
    year: { type: 'string' },
  },
});
if (values['database-url']) {
  await (
    await import('./history-given.ts')
  ).benchGiven({
    url: values['database-url'],
    rollDir: values['roll-dir'],
    year: values.year === undefined ? undefined : Number(values.year),
    seconds: Number(values.seconds),
  });
  process.exit(0);
}
const parcels = Number(values.parcels);
const seconds = Number(values.seconds);
const STATE = 10_800_000;
const log = (line: string) => console.error(line);
const out = join('.local', `state-${parcels}-history`);
const database = `florida_bench_history_${parcels}`;
const url = withDatabase(ownerDatabaseUrl(), database);

if (!existsSync(join(out, 'manifest.json'))) {
  log(`history: generating ${parcels} parcels, 3 roll years, into ${out}`);
  await generateState({ parcels, seed: 'history', out, jobs: 2, years: 3, log: () => {} });
}
const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as Omit<GenerateSummary, 'seconds'>;

if (!values.resume) {
  const admin = postgres(withDatabase(ownerDatabaseUrl(), 'postgres'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  await admin.end();
}
await setupDatabase({ url });
const sql = postgres(url, { max: 1, onnotice: () => {} });
const size = async () => {
  await sql`CHECKPOINT`;
  const [r] = await sql<{ db: number; parcels: number; rolls: number }[]>`
    SELECT pg_database_size(current_database())::float8 AS db,
           pg_total_relation_size('core.parcels')::float8 AS parcels,
           (SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
             WHERE c.relname LIKE 'parcel\\_rolls\\_%' AND c.relkind = 'r')::float8 AS rolls`;
  return r!;
};

/** Every county's roll of one year through the importer, one county after the other. */
async function loadYear(year: number): Promise<number> {
  const t0 = performance.now();
  for (const c of manifest.counties) {
    const file = year === manifest.rollYear ? c.files.nal : c.olderNal!.find((r) => r.year === year)!.file;
    await importNal({ file: join(out, file), databaseUrl: url, quiet: true, rejects: join(out, 'rejects.csv') });
  }
  return (performance.now() - t0) / 1000;
}

const years = [manifest.rollYear - 2, manifest.rollYear - 1, manifest.rollYear];
const loads: {
  year: number;
  seconds: number;
  before: Awaited<ReturnType<typeof size>>;
  after: Awaited<ReturnType<typeof size>>;
}[] = [];
const load = async (year: number) => {
  const before = await size();
  log(`history: loading roll ${year}`);
  const s = await loadYear(year);
  await sql`ANALYZE`;
  loads.push({ year, seconds: s, before, after: await size() });
};

const [held] = await sql<
  { years: number[] }[]
>`SELECT array_agg(DISTINCT roll_year) AS years FROM core.parcel_roll_years`;
if (values.resume && held!.years?.length === 1 && held!.years[0] === years[0]) {
  // the first roll's load time from the history of loads (its size growth was not kept)
  const [r] = await sql<{ seconds: number }[]>`
    SELECT extract(epoch FROM max(finished_at) - min(started_at))::float8 AS seconds
      FROM core.load_history WHERE kind = 'nal' AND status = 'succeeded'`;
  const now = await size();
  loads.push({
    year: years[0]!,
    seconds: r!.seconds,
    before: { ...now, db: NaN, rolls: NaN, parcels: NaN },
    after: now,
  });
} else {
  await load(years[0]!);
  for (const c of manifest.counties) {
    await importSdf({ file: join(out, c.files.sdf), databaseUrl: url, quiet: true, rejects: join(out, 'rejects.csv') });
  }
}
const bench = await benchClient(sql);
const api = await startApi(
  await freePort(),
  {
    DATABASE_URL: url,
    API_DATABASE_URL: withRole(url, 'api_reader'),
    REDIS_KEY_PREFIX: `bench:${database}:`,
  },
  [],
  300,
);
const headers = { authorization: `Bearer ${bench.key}` };
const ids = (await sql<{ id: number }[]>`SELECT id::int FROM core.parcels ORDER BY random() LIMIT 3000`).map(
  (r) => r.id,
);
const run = async (suffix: string): Promise<DriveResult> => {
  const paths = ids.map((id) => `/v1/parcels/${id}${suffix}`);
  await drive({ base: api.base, paths, headers, concurrency: 4, seconds: 2 }); // warm-up
  return drive({ base: api.base, paths, headers, concurrency: 4, seconds });
};
const measured: Record<string, DriveResult> = {};
try {
  measured['parcel, 1 year'] = await run('');
  measured['history, 1 year'] = await run('/history');
  await load(years[1]!);
  await load(years[2]!);
  measured['parcel, 3 years'] = await run('');
  measured['history, 3 years'] = await run('/history');
} finally {
  await api.stop();
  await bench.retire();
}
const [counts] = await sql<{ parcels: number; rolls: number; changed: number }[]>`
  SELECT (SELECT count(*) FROM core.parcels)::int AS parcels, (SELECT count(*) FROM core.parcel_rolls)::int AS rolls,
         (SELECT count(*) FROM core.parcels WHERE owner_changed_year IS NOT NULL)::int AS changed`;
await sql.end();

const MB = 1024 * 1024;
const mb = (b: number) => (Number.isNaN(b) ? 'not measured (--resume)' : (b / MB).toFixed(1));
const scale = STATE / parcels;
const newest = loads[2]!;
const growth = newest.after.db - newest.before.db;
const rollGrowth = newest.after.rolls - newest.before.rolls;
const lines = [
  '# Roll history benchmark',
  '',
  `\`node --import tsx bench/history.ts --parcels ${parcels} --seconds ${seconds}\` on ${new Date().toISOString().slice(0, 10)}; ` +
    `${parcels.toLocaleString('en-US')} parcels in 67 counties (make data YEARS=3), rolls ${years.join(', ')} loaded ` +
    `in that order through the NAL importer, one county after the other; 2 shared cores. After the run: ` +
    `${counts!.parcels.toLocaleString('en-US')} current parcels, ${counts!.rolls.toLocaleString('en-US')} roll rows, ` +
    `${counts!.changed.toLocaleString('en-US')} parcels with an owner change on file.`,
  '',
  '## Loading a roll year',
  '',
  '| roll | seconds | parcels/s | database growth MB | of which history MB | parcels table growth MB |',
  '| --- | ---: | ---: | ---: | ---: | ---: |',
  ...loads.map(
    (l) =>
      `| ${l.year}${l.year === years[0] ? ' (first load)' : ''} | ${l.seconds.toFixed(1)} | ${Math.round(parcels / l.seconds).toLocaleString('en-US')} | ` +
      `${mb(l.after.db - l.before.db)} | ${mb(l.after.rolls - l.before.rolls)} | ${mb(l.after.parcels - l.before.parcels)} |`,
  ),
  '',
  `Statewide (10.8 M parcels), by linear extrapolation from the ${years[2]} load (a new current year over two on file), ` +
    `factor 10,800,000 / ${parcels.toLocaleString('en-US')} = ${scale.toFixed(1)}: ` +
    `${newest.seconds.toFixed(1)} s × ${scale.toFixed(1)} = **${((newest.seconds * scale) / 60).toFixed(0)} min** ` +
    `one county after the other (the importer loads counties in parallel lanes, JOBS=2: about half of that on 2 cores), ` +
    `and ${mb(growth)} MB × ${scale.toFixed(1)} = **${((growth * scale) / 1024 / MB).toFixed(1)} GB** of database ` +
    `growth per roll year, ${mb(rollGrowth)} MB × ${scale.toFixed(1)} = ${((rollGrowth * scale) / 1024 / MB).toFixed(1)} GB ` +
    `of it the year's history partitions (the rest: dead row versions in core.parcels and its indexes until VACUUM).`,
  '',
  '## Reads at 4 connections (same run, same API process)',
  '',
  '| request | roll years on file | requests | rps | p50 ms | p95 ms | p99 ms | non-2xx |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...Object.entries(measured).map(([name, r]) => {
    const [what, yearsOnFile] = name.split(', ');
    const path = what === 'parcel' ? '`GET /v1/parcels/{id}`' : '`GET /v1/parcels/{id}/history`';
    return `| ${path} | ${yearsOnFile!.split(' ')[0]} | ${r.requests} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p95.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.non2xx} |`;
  }),
  '',
  `The existing endpoint before/after: p99 ${measured['parcel, 1 year']!.p99.toFixed(2)} ms with one roll year on file, ` +
    `${measured['parcel, 3 years']!.p99.toFixed(2)} ms with three ` +
    `(ratio ${(measured['parcel, 3 years']!.p99 / measured['parcel, 1 year']!.p99).toFixed(2)}).`,
  '',
];
writeReport('bench/results/history.md', lines.join('\n'));
log(lines.join('\n'));
