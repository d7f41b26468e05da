// The cost of authentication and metering: the same endpoint served unguarded (/bench/none/v1), with auth only
// (/bench/auth/v1), with auth plus metering's bare Redis round trip (/bench/roundtrip/v1: its floor, see
// bench/round-trip-floor.ts) and with auth and metering (/v1), in one run, by one API process. The load generator is a
// separate process (wrk, or the autocannon CLI when asked for), so it does not share the server's event loop;
// variants are interleaved in a rotating order and repeated, and medians are reported, because the machine is small
// and shared.
//
// Two measurements per variant and round:
//   - saturation: `--connections` keep-alive connections for `--seconds`: throughput, and from it the server time
//     each request costs (1 / req/s); p50 and p99 there are mostly queueing (about connections x service time).
//   - latency: one connection for `--seconds`: p50 and p99 of a lone request, which is what "added at the median"
//     means for a client (no queue in front of it).
// During the saturation runs it also reads the CPU time (from /proc, when the services are local) of the API
// process, Redis and the database's backends, per request: steadier than req/s on a shared machine, and it shows
// where the cost lands.
//
//   make bench-overhead
//   node --import tsx bench/overhead.ts [--seconds 8] [--connections 32] [--rounds 3] [--endpoint /parcels/1]
//       [--tool wrk|autocannon] [--profile DIR (the server writes a V8 CPU profile there)] [--no-write]
import { cpus, loadavg, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { ownerDatabaseUrl } from '../src/db-url.ts';
import { benchClient, startApi } from './api.ts';
import { writeReport } from './report.ts';
import {
  COMPONENTS,
  componentPids,
  describeCommit,
  withCpu,
  freePort,
  generateLoad,
  judge,
  latencyResolutionMs,
  pickTool,
  toolName,
  type Component,
  type Load as Run,
} from './load.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '8' },
    connections: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '3' },
    endpoint: { type: 'string', default: '/parcels/1' },
    tool: { type: 'string', default: 'wrk' },
    profile: { type: 'string' },
    'no-write': { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const rounds = Number(values.rounds);
const ENDPOINT = values.endpoint;

const tool = pickTool(values.tool!);

const owner = postgres(ownerDatabaseUrl(), { max: 1, onnotice: () => {} });
const bench = await benchClient(owner);
const authorization = `Bearer ${bench.key}`;

const port = await freePort();
const api = await startApi(
  port,
  { DATABASE_POOL_SIZE: '10' },
  values.profile ? ['--cpu-prof', `--cpu-prof-dir=${values.profile}`] : [],
);
const base = api.base;

type Variant = 'none' | 'auth' | 'auth+round trip' | 'auth+meter';
const VARIANTS: Variant[] = ['none', 'auth', 'auth+round trip', 'auth+meter'];
const prefixes: Record<Variant, string> = {
  none: '/bench/none/v1',
  auth: '/bench/auth/v1',
  'auth+round trip': '/bench/roundtrip/v1',
  'auth+meter': '/v1',
};
const url = (v: Variant) => `${base}${prefixes[v]}${ENDPOINT}`;

const processes = await componentPids(api.process.pid!, owner);

// Each variant must really be what it claims: 200, and rate-limit headers exactly where metering runs.
for (const v of VARIANTS) {
  const res = await fetch(url(v), { headers: { authorization } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${v}: ${ENDPOINT} answered ${res.status}`);
  if (res.headers.has('ratelimit') !== (v === 'auth+meter')) throw new Error(`${v}: unexpected rate-limit headers`);
  if (res.headers.has('x-bench-round-trip') !== (v === 'auth+round trip'))
    throw new Error(`${v}: unexpected round trip`);
}

interface Load extends Run {
  /** CPU µs per request by component (saturation runs only). */
  cpu?: Record<Component, number>;
}

/** One run of the load generator against variant `v`. */
const load = (v: Variant, conns: number, secs: number): Promise<Load> =>
  generateLoad(tool, url(v), conns, secs, authorization).catch((err: Error) => {
    throw new Error(`${v}: ${err.message}`);
  });

const perVariant = () => Object.fromEntries(VARIANTS.map((v) => [v, []])) as unknown as Record<Variant, Load[]>;
const sat = perVariant();
const lone = perVariant();
const loads: number[] = [];

// Warm-up: JIT, connection pools, the key cache and the Redis balance.
for (const v of VARIANTS) await load(v, connections, 2);
for (let round = 0; round < rounds; round++) {
  // rotate the order so no variant always runs first (or right after the heaviest)
  const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]!);
  for (const v of order) {
    const s = await withCpu(processes, () => load(v, connections, seconds));
    const l = await load(v, 1, seconds);
    sat[v].push(s);
    lone[v].push(l);
    loads.push(loadavg()[0]!);
    console.error(
      `round ${round + 1} ${v.padEnd(15)} ${s.rps.toFixed(0).padStart(6)} req/s  p50 ${s.p50.toFixed(2)} p99 ${s.p99.toFixed(2)} ms` +
        ` cpu µs/req api ${s.cpu.api.toFixed(0)} redis ${s.cpu.redis.toFixed(0)} pg ${s.cpu.pg.toFixed(0)}` +
        ` | 1 conn: ${l.rps.toFixed(0).padStart(5)} req/s  p50 ${l.p50.toFixed(3)} p99 ${l.p99.toFixed(3)} ms`,
    );
  }
}
await api.stop();
await bench.retire();
await owner.end();

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const spread = (xs: number[], digits: number) =>
  `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
/** Per round, paired with the unguarded run of the same round, so slow drift of the machine cancels. */
const paired = (v: Variant, f: (g: Load, n: Load) => number, of: Record<Variant, Load[]>) =>
  of[v].map((g, i) => f(g, of.none[i]!));
const cost = (v: Variant) => paired(v, (g, n) => (1 - g.rps / n.rps) * 100, sat);
const serviceMs = (v: Variant) => paired(v, (g, n) => 1000 / g.rps - 1000 / n.rps, sat);
const addedP50 = (v: Variant) => paired(v, (g, n) => g.p50 - n.p50, lone);

const row = (v: Variant) =>
  `| ${v} | ${median(sat[v].map((r) => r.rps)).toFixed(0)} (${spread(
    sat[v].map((r) => r.rps),
    0,
  )}) | ${median(cost(v)).toFixed(1)}% | ${median(serviceMs(v)).toFixed(3)} | ${median(sat[v].map((r) => r.p50)).toFixed(2)} | ${median(sat[v].map((r) => r.p99)).toFixed(2)} | ${median(lone[v].map((r) => r.p50)).toFixed(3)} (${spread(
    lone[v].map((r) => r.p50),
    3,
  )}) | ${median(addedP50(v)).toFixed(3)} | ${median(lone[v].map((r) => r.p99)).toFixed(3)} |`;

const cpuOf = (v: Variant, c: Component) => median(sat[v].map((r) => r.cpu![c]));
const fmtCpu = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : 'n/a');
/** What the API process alone would lose in throughput with a core to itself: its CPU per request, paired per round. */
const apiCost = (v: Variant) => paired(v, (g, n) => (1 - n.cpu!.api / g.cpu!.api) * 100, sat);
const cpuRow = (v: Variant) =>
  `| ${v} | ${fmtCpu(cpuOf(v, 'api'))} | ${fmtCpu(cpuOf(v, 'redis'))} | ${fmtCpu(cpuOf(v, 'pg'))} | ${fmtCpu(
    COMPONENTS.reduce((sum, c) => sum + cpuOf(v, c), 0),
  )} | ${median(apiCost(v)).toFixed(1)}% |`;
const finalCost = median(cost('auth+meter'));
const finalP50 = median(addedP50('auth+meter'));
const floorCost = median(cost('auth+round trip'));
const floorP50 = median(addedP50('auth+round trip'));
const commit = describeCommit();
const generator = toolName(tool);
const command = `node --import tsx bench/overhead.ts --seconds ${seconds} --connections ${connections} --rounds ${rounds} --endpoint ${ENDPOINT}`;
const report = `# Auth and metering overhead

- When: ${new Date().toISOString()}, commit ${commit}
- Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, shared with Postgres, Redis and
  other work (1-minute load average during the runs: ${spread(loads, 1)})
- Command: \`make bench-overhead\` (\`${command}\`)
- Setup: one API process (\`bench/server.ts\`: the API plus its floor routes) serves GET ${ENDPOINT} four ways: unguarded
  (\`/bench/none/v1\`), auth only (\`/bench/auth/v1\`), auth plus one bare Redis round trip per request
  (\`/bench/roundtrip/v1\`, batched per event-loop turn and overlapped with the handler as metering's is, with a
  script that only answers one value per request), and auth and metering (\`/v1\`, an Enterprise key with a very high
  RPM, so every request is admitted and charged). The load generator is ${generator}, in its own process. After a 2 s
  warm-up per variant, ${rounds} rounds; in each round every variant (order rotating) runs ${seconds} s at ${connections}
  connections (saturation) and ${seconds} s at 1 connection (latency). Medians over rounds, with the range in brackets.

| variant | req/s at ${connections} conns | throughput cost | added service time per request (ms) | p50 ms at ${connections} | p99 ms at ${connections} | p50 ms at 1 conn | added p50 at 1 conn (ms) | p99 ms at 1 conn |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
${VARIANTS.map(row).join('\n')}

CPU time per request during the saturation runs (µs, medians), by process:

| variant | API process | Redis | Postgres backends | total | API-process throughput cost |
| --- | --- | --- | --- | --- | --- |
${VARIANTS.map(cpuRow).join('\n')}

Target (auth and metering together): throughput cost under 10%: **${finalCost < 10 ? 'met' : 'missed'}**
(${finalCost.toFixed(1)}%, per round ${spread(cost('auth+meter'), 1)}%); under 0.3 ms added at the median:
**${judge(finalP50, 0.3, latencyResolutionMs(tool))}** (${finalP50.toFixed(3)} ms, per round ${spread(addedP50('auth+meter'), 3)} ms).

The floor, measured in the same run: auth plus the bare round trip, the least any metering exact across API processes
costs (every admission reaches the one shared Redis before its answer goes out), costs ${floorCost.toFixed(1)}% of
throughput (per round ${spread(cost('auth+round trip'), 1)}%) and ${floorP50.toFixed(3)} ms at the median (per round
${spread(addedP50('auth+round trip'), 3)} ms). Metering's own work (the window, the credit pool, the reservation,
settlement, headers and the usage flush) is the rest: ${(finalCost - floorCost).toFixed(1)} points of throughput and
${(finalP50 - floorP50).toFixed(3)} ms.

"API-process throughput cost" is 1 minus the ratio of the API process's CPU per request (unguarded / guarded): the
throughput an API process loses when it has a core to itself and Redis and Postgres run elsewhere, as in production.
Here all of them and the load generator share ${cpus().length} cores, so every CPU microsecond Redis and Postgres spend
on metering (one Lua script run per event-loop turn, settling and admitting together; usage flushed every second as
counts per closed batch) comes out of the API's throughput too: that is the end-to-end "throughput cost".

How to read it: "throughput cost" and "added service time" (1 / req/s minus the same for the unguarded route) are
paired per round with the unguarded run of that round, then the median is taken. The median at ${connections}
connections is queueing (about ${connections} × the service time) rather than the time a request takes, so "added at the
median" is measured with one connection, where nothing waits in front of a request. The server's CPU is shared with
the load generator, Postgres and Redis on this machine, so absolute numbers are lower than on a dedicated host.
`;
if (!values['no-write']) writeReport('bench/results/overhead.md', report);
console.log(report);
process.exit(0);
