// Does the API keep its speed under sustained load? One API process serves one endpoint at saturation for
// `--blocks` consecutive blocks of `--seconds`; each block reports req/s and the API process's CPU per request. A
// process that slows down as it serves (a structure that grows with every request: the postgres.js connection queue
// did, see scripts/patch-postgres.ts) shows as a rising CPU per request. Prints the blocks and the last-to-first
// ratio; writes bench/results/steady.md unless --no-write.
//   node --import tsx bench/steady.ts [--blocks 12] [--seconds 3] [--connections 32] [--path /v1/parcels/1]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { ownerDatabaseUrl } from '../src/db-url.ts';
import { benchClient, startApi } from './api.ts';
import { cpuMs, freePort, generateLoad, pickTool, toolName } from './load.ts';

const { values } = parseArgs({
  options: {
    blocks: { type: 'string', default: '12' },
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    path: { type: 'string', default: '/v1/parcels/1' },
    tool: { type: 'string', default: 'auto' },
    'no-write': { type: 'boolean', default: false },
  },
});
const blocks = Number(values.blocks);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const tool = pickTool(values.tool!);

const owner = postgres(ownerDatabaseUrl(), { max: 1, onnotice: () => {} });
const bench = await benchClient(owner);
const api = await startApi(await freePort(), {});
const url = `${api.base}${values.path}`;
const authorization = `Bearer ${bench.key}`;
const pid = api.process.pid!;

const rows: { rps: number; cpuUs: number; rssMb: number }[] = [];
try {
  await generateLoad(tool, url, connections, 2, authorization); // warm-up: JIT, pools, key cache, balance
  for (let i = 0; i < blocks; i++) {
    const before = cpuMs([pid]);
    const run = await generateLoad(tool, url, connections, seconds, authorization);
    const cpuUs = ((cpuMs([pid]) - before) * 1000) / run.requests;
    const rssMb = rssOf(pid);
    rows.push({ rps: run.rps, cpuUs, rssMb });
    console.error(`block ${i + 1}: ${run.rps.toFixed(0)} req/s, API ${cpuUs.toFixed(0)} µs a request, ${rssMb} MB`);
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
- Command: \`node --import tsx bench/steady.ts --blocks ${blocks} --seconds ${seconds} --connections ${connections} --path ${values.path}\`
- One API process, ${connections} connections from ${toolName(tool)}, ${blocks} consecutive blocks of ${seconds} s after a 2 s warm-up.

| block | req/s | API CPU µs a request | API RSS MB |
| ---: | ---: | ---: | ---: |
${rows.map((r, i) => `| ${i + 1} | ${r.rps.toFixed(0)} | ${r.cpuUs.toFixed(0)} | ${r.rssMb} |`).join('\n')}

Last block against the first: ${(last.rps / first.rps).toFixed(2)}× the throughput, ${(last.cpuUs / first.cpuUs).toFixed(2)}× the CPU a request.
`;
if (!values['no-write']) {
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/steady.md', report);
}
console.log(report);
process.exit(0);
