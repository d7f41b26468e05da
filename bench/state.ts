// The data a `make bench` run measures: a synthetic statewide state of SCALE parcels, generated once into
// .local/state-<SCALE> (the generator of `make data`) and loaded once through the importers into its own database
// florida_bench_<SCALE> (no fixtures), so runs at one scale reuse both and runs at another scale do not disturb them.
// Prints the owner URL of that database on stdout (everything else goes to stderr).
//   node --import tsx bench/state.ts --parcels 1000000 [--seed 1]
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { ownerDatabaseUrl, withDatabase } from '../src/db-url.ts';
import { setupDatabase } from '../scripts/db-setup.ts';
import { generateState } from '../scripts/generate/profiles/state.ts';
import { loadState } from '../scripts/load-state.ts';

const { values } = parseArgs({
  options: { parcels: { type: 'string', default: '1000000' }, seed: { type: 'string', default: '1' } },
});
const parcels = Number(values.parcels);
if (!Number.isInteger(parcels) || parcels < 1000) {
  console.error('bench: SCALE must be a whole number of parcels, at least 1000 (10800000 is the full state)');
  process.exit(2);
}
const log = (line: string) => console.error(line);
const out = join('.local', `state-${parcels}-seed${values.seed}`);
const url = withDatabase(ownerDatabaseUrl(), `florida_bench_${parcels}_seed${values.seed}`);

if (!existsSync(join(out, 'manifest.json'))) {
  log(`bench: generating ${parcels.toLocaleString('en-US')} parcels into ${out}`);
  await generateState({ parcels, seed: values.seed, out, log, jobs: 2 });
}
await setupDatabase({ url, log: (m) => log(`bench: ${m}`) });
const sql = postgres(url, { max: 1, onnotice: () => {} });
const [row] = await sql<{ loaded: number; parcels: number }[]>`
  SELECT (SELECT count(*) FROM core.load_history WHERE status = 'succeeded')::int AS loaded,
         (SELECT count(*) FROM core.parcels)::int AS parcels`;
if ((row?.loaded ?? 0) === 0 || row?.parcels !== parcels) {
  log(`bench: loading ${out} into ${new URL(url).pathname.slice(1)} through the importers`);
  const totals = await loadState(out, { databaseUrl: url, log });
  await sql`INSERT INTO core.load_history (kind, file_name, status, rows_read, rows_loaded, message, finished_at)
            VALUES ('bench-state', ${out}, 'succeeded', ${totals.parcels}, ${totals.parcels},
                    ${`whole state loaded in ${totals.seconds.toFixed(0)} s`}, now())`;
  log('bench: VACUUM ANALYZE');
  await sql.unsafe('VACUUM (ANALYZE)');
} else {
  log(`bench: reusing ${new URL(url).pathname.slice(1)} (${row.parcels.toLocaleString('en-US')} parcels)`);
}
await sql.end();
process.stdout.write(`${url}\n`);
