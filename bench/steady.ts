// Does the API keep its speed under sustained load? One API process serves one endpoint at saturation for
// `--blocks` consecutive blocks of `--seconds`; each block reports req/s and the CPU per request of the API process,
// Redis and the database's backends. A process that slows down as it serves (a structure that grows with every
// request: the postgres.js connection queue did, see scripts/patch-postgres.ts) shows as a rising CPU per request.
// With --sample-queries, the database's active queries are sampled every 2 ms during the blocks and the most
// frequent listed: where the backends' time goes (a usage flush that outweighed the request's own query showed up
// this way). Prints the blocks and the last-to-first ratio; writes bench/results/steady.md unless --no-write.
//   node --import tsx bench/steady.ts [--blocks 12] [--seconds 3] [--connections 32] [--path /v1/parcels/1]
//       [--sample-queries]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { ownerDatabaseUrl } from '../src/db-url.ts';
import { writeReport } from './report.ts';
import { benchClient, startApi } from './api.ts';
import { componentPids, withCpu, freePort, generateLoad, pickTool, toolName, type Component } from './load.ts';

const { values } = parseArgs({
  options: {
    blocks: { type: 'string', default: '12' },
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    path: { type: 'string', default: '/v1/parcels/1' },
    tool: { type: 'string', default: 'wrk' },
    'sample-queries': { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
  },
});
const blocks = Number(values.blocks);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const tool = pickTool(values.tool!);

const owner = postgres(ownerDatabaseUrl(), { max: 2, onnotice: () => {} });
const bench = await benchClient(owner);
const api = await startApi(await freePort(), {});
const url = `${api.base}${values.path}`;
const authorization = `Bearer ${bench.key}`;
const pid = api.process.pid!;
const processes = await componentPids(pid, owner);

const rows: { rps: number; cpuUs: Record<Component, number>; rssMb: number }[] = [];
/** Active queries seen per sample, by text. */
const seen = new Map<string, number>();
let samples = 0;
async function sampleQueries(until: Promise<unknown>) {
  let done = false;
  void until.finally(() => (done = true));
  while (!done) {
    const active = await owner<{ query: string }[]>`
      SELECT regexp_replace(query, '\\s+', ' ', 'g') AS query FROM pg_stat_activity
       WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid()`;
    samples++;
    for (const { query } of active) seen.set(query, (seen.get(query) ?? 0) + 1);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
try {
  await generateLoad(tool, url, connections, 2, authorization); // warm-up: JIT, pools, key cache, balance
  for (let i = 0; i < blocks; i++) {
    const run = await withCpu(processes, async () => {
      const load = generateLoad(tool, url, connections, seconds, authorization);
      if (values['sample-queries']) await sampleQueries(load);
      return load;
    });
    const cpuUs = run.cpu;
    const rssMb = rssOf(pid);
    rows.push({ rps: run.rps, cpuUs, rssMb });
    console.error(
      `block ${i + 1}: ${run.rps.toFixed(0)} req/s, µs a request: API ${cpuUs.api.toFixed(0)}, Redis ${cpuUs.redis.toFixed(0)}, Postgres ${cpuUs.pg.toFixed(0)}; ${rssMb} MB`,
    );
  }
} finally {
  await api.stop();
  await bench.retire();
  await owner.end();
}

/** Resident memory of a local process in MB, NaN where /proc does not show it. */
function rssOf(p: number) {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1];
    return kb ? Math.round(Number(kb) / 1024) : NaN;
  } catch {
    return NaN;
  }
}

const first = rows[0]!;
const last = rows.at(-1)!;
const report = `# Sustained load: does the API keep its speed?

- When: ${new Date().toISOString()}
- Command: \`node --import tsx bench/steady.ts --blocks ${blocks} --seconds ${seconds} --connections ${connections} --path ${values.path}${values['sample-queries'] ? ' --sample-queries' : ''}\`
- One API process, ${connections} connections from ${toolName(tool)}, ${blocks} consecutive blocks of ${seconds} s after a 2 s warm-up.

| block | req/s | API CPU µs a request | Redis | Postgres | API RSS MB |
| ---: | ---: | ---: | ---: | ---: | ---: |
${rows.map((r, i) => `| ${i + 1} | ${r.rps.toFixed(0)} | ${r.cpuUs.api.toFixed(0)} | ${r.cpuUs.redis.toFixed(0)} | ${r.cpuUs.pg.toFixed(0)} | ${r.rssMb} |`).join('\n')}

Last block against the first: ${(last.rps / first.rps).toFixed(2)}× the throughput, ${(last.cpuUs.api / first.cpuUs.api).toFixed(2)}× the API's CPU a request.
${
  samples === 0
    ? ''
    : `
The database's active queries, sampled ${samples} times during the blocks (share of samples in which each ran):

| query | share |
| --- | ---: |
${[...seen]
  .sort((a, b) => b[1] - a[1])
  .slice(0, 8)
  .map(([q, n]) => `| \`${q.slice(0, 100)}\` | ${((100 * n) / samples).toFixed(0)}% |`)
  .join('\n')}
`
}`;
if (!values['no-write']) writeReport('bench/results/steady.md', report);
console.log(report);
process.exit(0);
