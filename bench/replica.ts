// Reads on a streaming replica against reads on the primary, in one run: the mixed workload of `make bench`
// (bench/workload.ts, bench/driver.ts) through the API as a user runs it (bench/api.ts: its own process, auth and
// metering on), with DATABASE_REPLICA_URLS unset and then naming the replica, in alternating rounds. Around each run
// it reads the CPU time of both PostgreSQL clusters (the postmaster, its live children and the children it reaped:
// backends, WAL sender and receiver, replay) and of the API process from /proc, per request. From those it estimates
// on paper the requests per second of 2, 4 and 8 replicas. Writes bench/results/replicas.md.
//
// On one machine the replica shares the cores with the primary, the API and the load generator: this measures what
// routing costs, not what a replica adds. The clusters should be otherwise idle while it runs (their whole CPU is
// counted).
//   node --import tsx bench/replica.ts [--database-url URL] [--replica-port 55443] [--seconds 10] [--rounds 1]
//       [--concurrency 16] [--port 3998] [--no-write]
// --database-url: the owner URL of a database on the project-local cluster (default: DATABASE_URL or the fixtures
// database `florida`); the replica is started with scripts/replica.sh on --replica-port unless one runs there, and
// stopped and deleted afterwards if this run started it.
import { execFile, execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { parseArgs, promisify } from 'node:util';
import postgres from 'postgres';
import { ownerDatabaseUrl, withDatabase, withRole } from '../src/db-url.ts';
import { benchClient, startApi } from './api.ts';
import { drive, type DriveResult } from './driver.ts';
import { cpuMs } from './load.ts';
import { writeReport } from './report.ts';
import { buildWorkloads, mixed } from './workload.ts';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    'replica-port': { type: 'string', default: '55443' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '16' },
    port: { type: 'string', default: '3998' },
    'no-write': { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const concurrency = Number(values.concurrency);
const replicaPort = Number(values['replica-port']);
const ownerUrl = values['database-url'] ?? ownerDatabaseUrl();
const primaryPort = Number(new URL(ownerUrl).port || 5432);
const database = new URL(ownerUrl).pathname.slice(1);
const run = promisify(execFile);

const replicaScript = (command: string) =>
  run('bash', ['scripts/replica.sh', command, '--port', String(replicaPort)], {
    env: { ...process.env, DATABASE_URL: '', PGPORT: String(primaryPort) },
    timeout: 1_800_000,
  });
const replicaOwnerUrl = withDatabase(`postgres://postgres@127.0.0.1:${replicaPort}/postgres`, database);
const replicaReaderUrl = withRole(replicaOwnerUrl, 'api_reader');

const owner = postgres(ownerUrl, { max: 2, onnotice: () => {} });
const started = !/: running/.test((await replicaScript('status')).stdout);
if (started) {
  console.error(`bench: starting a replica of 127.0.0.1:${primaryPort} on ${replicaPort} (pg_basebackup)`);
  await replicaScript('start');
}
const onReplica = postgres(replicaOwnerUrl, { max: 1, onnotice: () => {} });
for (let i = 0; ; i++) {
  try {
    await onReplica`SELECT 1`;
    break;
  } catch (err) {
    if (i > 600) throw err;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const TICK_MS = 1000 / Number(execSync('getconf CLK_TCK').toString().trim() || 100);

/** The CPU time (ms) a cluster has used: its postmaster, its live children and the children it has reaped. */
async function clusterCpuMs(sql: postgres.Sql): Promise<number> {
  const [{ dir }] = (await sql`SELECT current_setting('data_directory') AS dir`) as unknown as [{ dir: string }];
  const postmaster = Number(readFileSync(`${dir}/postmaster.pid`, 'utf8').split('\n')[0]);
  const children = readFileSync(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
  // children that exited (reaped by the postmaster) count in its cutime and cstime
  const fields = readFileSync(`/proc/${postmaster}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const reaped = (Number(fields[13]) + Number(fields[14])) * TICK_MS;
  let live = 0;
  for (const pid of [postmaster, ...children]) {
    const ms = cpuMs([pid]);
    if (Number.isFinite(ms)) live += ms; // a backend that exited in between is in `reaped` by the next reading
  }
  return live + reaped;
}

interface Measured extends DriveResult {
  mode: 'primary' | 'replica';
  /** CPU ms a request: the primary cluster, the replica cluster, the API process. */
  primaryMs: number;
  replicaMs: number;
  apiMs: number;
  /** Share of the API role's queries the replica answered (from the API's metrics; replica mode only). */
  replicaShare: number | null;
}

const [{ parcels }] = (await owner`SELECT count(*)::int AS parcels FROM core.parcels`) as unknown as [
  { parcels: number },
];
const bench = await benchClient(owner);
const headers = { authorization: `Bearer ${bench.key}` };
const workloads = await buildWorkloads(owner);
const paths = mixed(workloads);
const base = `http://127.0.0.1:${values.port}`;
const metricsToken = 'm'.repeat(40);

/** The API role's queries answered by each server so far, from the process's metrics. */
async function queriesByServer(): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^florida_db_queries_total\{server="(\w+)",outcome="ok"\} (\d+)/gm)) {
    out[m[1]!] = Number(m[2]);
  }
  return out;
}

async function measure(mode: 'primary' | 'replica'): Promise<Measured> {
  const api = await startApi(Number(values.port), {
    DATABASE_URL: ownerUrl,
    API_DATABASE_URL: withRole(ownerUrl, 'api_reader'),
    DATABASE_REPLICA_URLS: mode === 'replica' ? replicaReaderUrl : '',
    METRICS_TOKEN: metricsToken,
    REDIS_KEY_PREFIX: `bench:${database}:`, // the usage counted in Redis belongs to this database
  });
  try {
    // warm-up: the caches of the server that will answer, and the API's prepared statements
    await drive({ base, paths, headers, concurrency, seconds: Math.min(3, seconds) });
    const before = { p: await clusterCpuMs(owner), r: await clusterCpuMs(onReplica), a: cpuMs([api.process.pid!]) };
    const q0 = mode === 'replica' ? await queriesByServer() : {};
    const result = await drive({ base, paths, headers, concurrency, seconds });
    const after = { p: await clusterCpuMs(owner), r: await clusterCpuMs(onReplica), a: cpuMs([api.process.pid!]) };
    let replicaShare: number | null = null;
    if (mode === 'replica') {
      const q1 = await queriesByServer();
      const delta = (s: string) => (q1[s] ?? 0) - (q0[s] ?? 0);
      replicaShare = delta('replica1') / (delta('replica1') + delta('primary'));
    }
    const per = (ms: number) => ms / result.requests;
    const m: Measured = {
      ...result,
      mode,
      primaryMs: per(after.p - before.p),
      replicaMs: per(after.r - before.r),
      apiMs: per(after.a - before.a),
      replicaShare,
    };
    console.error(
      `${mode.padEnd(8)} ${m.rps.toFixed(0)} req/s p50 ${m.p50.toFixed(1)} p99 ${m.p99.toFixed(1)} ms non-2xx ${m.non2xx} ` +
        `CPU ms/request: primary ${m.primaryMs.toFixed(3)} replica ${m.replicaMs.toFixed(3)} API ${m.apiMs.toFixed(3)}` +
        (replicaShare === null ? '' : ` replica answered ${(replicaShare * 100).toFixed(1)}% of queries`),
    );
    return m;
  } finally {
    await api.stop();
  }
}

const runs: Measured[] = [];
try {
  for (let round = 0; round < rounds; round++) {
    // alternate which goes first, so a machine that drifts during the run favours neither
    const order: ('primary' | 'replica')[] = round % 2 === 0 ? ['primary', 'replica'] : ['replica', 'primary'];
    for (const mode of order) runs.push(await measure(mode));
  }
} finally {
  await bench.retire();
  await onReplica.end();
  await owner.end();
  if (started) await replicaScript('clean');
}

const mean = (mode: string, key: keyof Measured) => {
  const xs = runs.filter((r) => r.mode === mode).map((r) => r[key] as number);
  return xs.reduce((a, b) => a + b, 0) / xs.length;
};
const f = (n: number, d = 2) => n.toFixed(d);
const rows = runs.map(
  (r, i) =>
    `| ${i + 1} | reads on the ${r.mode} | ${f(r.rps, 0)} | ${f(r.p50)} / ${f(r.p95)} / ${f(r.p99)} | ${r.non2xx + r.errors} | ${f(r.primaryMs, 3)} | ${f(r.replicaMs, 3)} | ${f(r.apiMs, 3)} | ${r.replicaShare === null ? '—' : `${f(r.replicaShare * 100, 1)}%`} |`,
);

// The paper estimate: replicas of this machine's size (2 cores each, PostgreSQL alone on them), the primary too; API
// hosts added as needed. Reads scale with the replicas; what stays on the primary per request does not.
const CORES = 2;
const readMs = mean('replica', 'replicaMs');
const primaryMs = mean('replica', 'primaryMs');
const apiMs = mean('replica', 'apiMs');
const estimate = [2, 4, 8].map((n) => {
  const byReplicas = (n * CORES * 1000) / readMs;
  const byPrimary = (CORES * 1000) / primaryMs;
  const rps = Math.min(byReplicas, byPrimary);
  return `| ${n} | ${f(byReplicas, 0)} | ${f(byPrimary, 0)} | **${f(rps, 0)}** (${byReplicas <= byPrimary ? 'the replicas' : 'the primary'}) | ${f((rps * apiMs) / 1000 / CORES, 1)} |`;
});

const report = `# Reads on a replica against reads on the primary (latest run)

- When: ${new Date().toISOString()}; machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${f(totalmem() / 2 ** 30, 0)} GiB, load average before the run ${f(loadavg()[0]!, 1)}
- Data: database \`${database}\` (${parcels.toLocaleString('en-US')} parcels) on the cluster of port ${primaryPort}; the replica a \`pg_basebackup\` of that cluster streaming on port ${replicaPort} (\`scripts/replica.sh\`), both on this machine
- Command: \`node --import tsx bench/replica.ts --database-url <owner URL> --seconds ${seconds} --rounds ${rounds} --concurrency ${concurrency}\`
- Each run: the API as a user runs it (\`src/main.ts\`, one process, auth and metering on, an Enterprise key), the mixed workload of \`make bench\` (${paths.length} requests interleaving its 15 workloads) at ${concurrency} connections for ${seconds} s after a ${Math.min(3, seconds)} s warm-up; "reads on the replica" sets \`DATABASE_REPLICA_URLS\` to the replica. CPU is read from /proc around each run (all of each cluster's processes, including the WAL sender, receiver and replay) and divided by the requests answered.

**On one machine this shows the cost of routing, not a gain**: the replica runs on the same 2 cores as the primary,
the API and the load generator, so moving reads to it cannot add capacity; it only adds what a replica costs (WAL
replay, the monitor's checks, a second cache warming the same pages).

| run | reads | req/s | p50 / p95 / p99 ms | errors and non-2xx | primary CPU ms/request | replica CPU ms/request | API CPU ms/request | queries the replica answered |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}

Mean database CPU a request: reads on the primary ${f(mean('primary', 'primaryMs') + mean('primary', 'replicaMs'), 3)} ms (primary ${f(mean('primary', 'primaryMs'), 3)}, idle replica ${f(mean('primary', 'replicaMs'), 3)}); reads on the replica ${f(primaryMs + readMs, 3)} ms (primary ${f(primaryMs, 3)}, replica ${f(readMs, 3)}).

## Paper estimate: 2, 4 and 8 replicas

From the run with reads on the replica: each request costs the replicas ${f(readMs, 3)} ms of CPU, the primary
${f(primaryMs, 3)} ms (what stays there: usage flushes, key lookups that must be current, \`/v1/account/usage\`, the
monitor's checks, WAL sending) and the API ${f(apiMs, 3)} ms. With replicas and a primary of this machine's size
(${CORES} cores each, PostgreSQL alone on them, used to the full) and enough API hosts:

| replicas | limit of the replicas, req/s | limit of the primary, req/s | estimate, req/s (bound by) | API hosts of ${CORES} cores needed |
| --- | --- | --- | --- | --- |
${estimate.join('\n')}

Reads scale with the replicas; the primary's share does not, and bounds the total once the replicas' limit passes it.
An upper bound: CPU only, at full use (plan for 60-70%), with the workload's mix and this database's size; Redis (one
script call a request, batched) and the network are not counted.
`;

console.log(report);
if (!values['no-write']) writeReport('bench/results/replicas.md', report);
process.exit(0);
