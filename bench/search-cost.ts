// The database's CPU per search: the workload's searches (bench/workload.ts), run one after another on one
// connection as the API sends them (api.parcel_search_hits, the query read inside), with the serving backend's own
// CPU time read from /proc/<pid>/stat before and after (user + system, clock ticks), so nothing else on the machine
// is counted. Reported per search, statewide and in a county, with the reading of the query (api.parcel_query_words)
// measured alone beside it.
//   DATABASE_URL=<the bench database> node --import tsx bench/search-cost.ts [--rounds 3]
// The server must be on this machine (it reads /proc); the bench database of `bench/state.ts` is.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { buildWorkloads } from './workload.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
const rounds = Number(values.rounds);
const url = process.env.DATABASE_URL;
if (!url) {
  console.error('search-cost: set DATABASE_URL to the bench database (bench/state.ts prints it)');
  process.exit(2);
}
const sql = postgres(url, {
  max: 1,
  onnotice: () => {},
  connection: { application_name: 'florida-bench', max_parallel_workers_per_gather: '0' },
});
const TICKS_PER_MS = 100 / 1000; // USER_HZ is 100 on Linux

/** The backend's user + system CPU in clock ticks. */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

const [backend] = await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
const pid = backend!.pid;
const workloads = await buildWorkloads(sql);
const params = (path: string) => new URL(path, 'http://x').searchParams;
const searches = (name: string) =>
  workloads[name]!.map((p) => ({ query: params(p).get('query')!, county: params(p).get('county') }));

async function measure(label: string, run: () => Promise<unknown>, n: number) {
  await run(); // warm: plans and cache
  const best = { ms: Infinity, wall: Infinity };
  for (let r = 0; r < rounds; r++) {
    const t0 = cpuTicks(pid);
    const w0 = performance.now();
    await run();
    const cpu = (cpuTicks(pid) - t0) / TICKS_PER_MS / n;
    const wall = (performance.now() - w0) / n;
    if (cpu < best.ms) Object.assign(best, { ms: cpu, wall });
  }
  console.log(`| ${label} | ${n} | ${best.ms.toFixed(2)} | ${best.wall.toFixed(2)} |`);
}

console.log(`| what (best of ${rounds} rounds) | queries | DB CPU ms per query | wall ms per query |`);
console.log('| --- | --- | --- | --- |');
for (const name of ['search statewide', 'search in county']) {
  const list = searches(name);
  await measure(
    `${name}: page and total (api.parcel_search_hits)`,
    async () => {
      for (const s of list)
        await sql`SELECT total, hits FROM api.parcel_search_hits(p_query => ${s.query},
                    p_county => ${s.county ? [s.county] : null}::text[], p_limit => 25)`;
    },
    list.length,
  );
}
const statewide = searches('search statewide');
await measure(
  'reading the query alone (api.parcel_query_words)',
  async () => {
    for (const s of statewide) await sql`SELECT api.parcel_query_words(${s.query})`;
  },
  statewide.length,
);
await sql.end();
