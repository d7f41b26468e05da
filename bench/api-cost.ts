// The API process's own CPU per request, against a bare node:http server, at a fixed moderate rate. A paced client
// (bench/paced.ts, a process of its own) sends GET /v1/parcels/{id} (parcels drawn at random, auth and metering on,
// an Enterprise key) to the API, and the same number of requests at the same rate to a bare `node:http` server that
// answers a fixed body of the same size; the CPU time each server process spends (utime + stime from /proc) is divided
// by the requests it answered. A third server, bare node:http reading the parcel from Postgres as JSON text, is the
// floor of any server that reads the row per request. Variants alternate over several rounds, the order rotating,
// and medians are reported.
// At a moderate rate a server reads about one request per wake-up of its event loop, so what this measures includes
// the wake-ups a request costs (its arrival, Redis's reply, Postgres's reply): the voluntary context switches of the
// server's main thread per request are reported beside the CPU. Then the API runs once more under `--cpu-prof` at
// the same rate, and the profile's top entries by self time are printed.
//
//   make bench-api-cost
//   node --import tsx bench/api-cost.ts [--rate 500] [--seconds 10] [--rounds 3] [--connections 8]
//       [--profile-seconds 10] [--top 20] [--no-write]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { cpus, loadavg, totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { apiDatabaseUrl, ownerDatabaseUrl } from '../src/db-url.ts';
import { benchClient, startApi } from './api.ts';
import { cpuMs, describeCommit, freePort } from './load.ts';
import { paced, type PacedResult } from './paced.ts';
import { writeReport } from './report.ts';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '8' },
    'profile-seconds': { type: 'string', default: '10' },
    top: { type: 'string', default: '20' },
    out: { type: 'string', default: 'bench/results/api-cost.md' },
    'no-write': { type: 'boolean', default: false },
  },
});
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const profileSeconds = Number(values['profile-seconds']);
const top = Number(values.top);

const owner = postgres(ownerDatabaseUrl(), { max: 1, onnotice: () => {} });
const bench = await benchClient(owner);
const headers = { authorization: `Bearer ${bench.key}` };
const ids = (await owner<{ id: string }[]>`SELECT id::text FROM core.parcels ORDER BY random() LIMIT 500`).map(
  (r) => r.id,
);
if (ids.length === 0) throw new Error('no parcels in this database');
const [{ parcels }] = (await owner`SELECT count(*)::int AS parcels FROM core.parcels`) as unknown as [
  { parcels: number },
];

const api = await startApi(await freePort(), {}, [], 120); // a busy machine starts it slowly

// The bare server answers the median size of the API's answers for these parcels.
const sizes: number[] = [];
for (const url of ids.slice(0, 50).map((id) => `${api.base}/v1/parcels/${id}`)) {
  const res = await fetch(url, { headers });
  const body = await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  if (!res.headers.has('ratelimit')) throw new Error('the API answered without metering');
  sizes.push(body.byteLength);
}
const bodyBytes = sizes.sort((a, b) => a - b)[sizes.length >> 1]!;

/** A node:http server in a process of its own (`code` listens on PORT), run from this directory's node_modules. */
async function startChild(
  code: (port: number) => string,
  probe: string,
): Promise<{ process: ChildProcess; url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['-e', code(port)], { stdio: 'inherit' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.on('exit', () => child.kill());
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(url + probe)).ok) break;
    } catch {
      if (i > 100) throw new Error('the bare server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    process: child,
    url,
    stop: async () => {
      child.kill();
      await exited;
    },
  };
}
/** How both bare servers answer: `body`, a Buffer, as JSON. */
const SEND = `res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
  res.end(body);`;
/** The bare server: one fixed JSON body of the API's median size for every request. */
const bare = await startChild(
  (port) => `const body = Buffer.from(JSON.stringify({ data: 'x'.repeat(${bodyBytes - 11}) }));
require('node:http').createServer((req, res) => {
  ${SEND}
}).listen(${port}, '127.0.0.1');`,
  '',
);
/**
 * The floor of any server that reads the row from Postgres per request: bare node:http and postgres.js (the API's
 * driver and role), the parcel as the JSON text Postgres makes, no framework, no auth, no metering.
 */
const bareRow = await startChild(
  (port) => `const sql = require('postgres')(${JSON.stringify(apiDatabaseUrl())}, { max: 3 });
require('node:http').createServer(async (req, res) => {
  const [row] = await sql\`SELECT row_to_json(p)::text AS json FROM api.get_parcel(\${req.url.slice(1)}::bigint) p\`;
  const body = Buffer.from('{"data":' + row.json + '}');
  ${SEND}
}).listen(${port}, '127.0.0.1');`,
  ids[0]!,
);

/** Voluntary context switches of a process's main thread: about one per wake-up of an idle event loop. */
const wakeups = (pid: number) =>
  Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

/**
 * The bare server, the bare server reading the row, and the API's by-id read four ways (bench/floor-routes.ts):
 * unguarded, with auth alone, with auth and a bare Redis round trip per request (metering's transport, nothing
 * metered), and as served (auth and metering). The steps between them show what each layer costs, and what any
 * server that reads the row per request costs at least.
 */
type Variant = 'bare' | 'bare+row' | 'unguarded' | 'auth' | 'auth+round trip' | 'api';
const VARIANTS: Variant[] = ['bare', 'bare+row', 'unguarded', 'auth', 'auth+round trip', 'api'];
const PREFIXES: Record<Exclude<Variant, 'bare' | 'bare+row'>, string> = {
  unguarded: '/bench/none/v1',
  auth: '/bench/auth/v1',
  'auth+round trip': '/bench/roundtrip/v1',
  api: '/v1',
};
const LABELS: Record<Variant, string> = {
  bare: 'bare node:http, fixed body',
  'bare+row': 'bare node:http, the row from Postgres as JSON text',
  unguarded: 'API unguarded (no auth, no metering)',
  auth: 'API with auth only',
  'auth+round trip': 'API with auth and a bare Redis round trip',
  api: 'API as served (auth and metering)',
};
const urlsOf = (v: Variant) =>
  v === 'bare'
    ? [bare.url]
    : v === 'bare+row'
      ? ids.map((id) => bareRow.url + id)
      : ids.map((id) => `${api.base}${PREFIXES[v]}/parcels/${id}`);
const pidOf = (v: Variant) => (v === 'bare' ? bare : v === 'bare+row' ? bareRow : api).process.pid!;
interface Run extends PacedResult {
  cpuUs: number;
  wakeups: number;
}

async function measure(v: Variant, secs: number): Promise<Run> {
  const pid = pidOf(v);
  const [cpu0, wake0] = [cpuMs([pid]), wakeups(pid)];
  const r = await paced({
    urls: urlsOf(v),
    rate,
    seconds: secs,
    connections,
    headers: v.startsWith('bare') ? {} : headers,
  });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${v}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return {
    ...r,
    cpuUs: ((cpuMs([pid]) - cpu0) * 1000) / r.answered,
    wakeups: (wakeups(pid) - wake0) / r.answered,
  };
}

const runs = Object.fromEntries(VARIANTS.map((v) => [v, []])) as unknown as Record<Variant, Run[]>;
const loads: number[] = [];
for (const v of VARIANTS) await measure(v, 2); // warm-up: JIT, pools, the key cache, the Redis balance
for (let round = 0; round < rounds; round++) {
  // rotate the order so no variant always runs first (or right after the heaviest)
  const order = VARIANTS.map((_, i) => VARIANTS[(i + round) % VARIANTS.length]!);
  for (const v of order) {
    const r = await measure(v, seconds);
    runs[v].push(r);
    loads.push(loadavg()[0]!);
    console.error(
      `round ${round + 1} ${v.padEnd(15)} ${r.cpuUs.toFixed(0).padStart(5)} µs CPU/req  ${r.wakeups.toFixed(2)} wake-ups/req  p50 ${r.p50.toFixed(2)} p99 ${r.p99.toFixed(2)} ms`,
    );
  }
}
await api.stop();
await bare.stop();
await bareRow.stop();

// The profile: the API again, alone, under the same paced load.
const profileDir = mkdtempSync(join(tmpdir(), 'api-cost-'));
const profiled = await startApi(
  await freePort(),
  {},
  ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '--cpu-prof-interval=250'],
  120,
);
const profiledUrls = ids.map((id) => `${profiled.base}/v1/parcels/${id}`);
await paced({ urls: profiledUrls, rate, seconds: 2, connections, headers });
// only the samples taken during the measured run count (not start-up and warm-up): V8 stamps them with the same
// monotonic clock as process.hrtime, in µs
const microseconds = () => Number(process.hrtime.bigint() / 1000n);
const measured = { from: microseconds(), to: 0 };
const profileRun = await paced({ urls: profiledUrls, rate, seconds: profileSeconds, connections, headers });
measured.to = microseconds();
await profiled.stop();
await bench.retire();
await owner.end();

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}
/**
 * Self time by function (name, file and line) in a V8 CPU profile, of the samples taken between `from` and `to` (µs),
 * largest first, with the busy (not idle) total.
 */
function selfTimes(profile: Profile, from: number, to: number) {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let busy = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i]!;
    const frame = byNode.get(id)!.callFrame;
    const dt = profile.timeDeltas[i + 1] ?? 0; // a sample's time is the delta to the next one
    if (at < from || at > to || frame.functionName === '(idle)') return;
    busy += dt;
    const file = frame.url.replace(/^file:\/\//, '').replace(`${process.cwd()}/`, '');
    const name = `${frame.functionName || '(anonymous)'} ${file ? `${file}:${frame.lineNumber + 1}` : ''}`.trim();
    self.set(name, (self.get(name) ?? 0) + dt);
  });
  return { busy, entries: [...self].sort((a, b) => b[1] - a[1]) };
}
const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error(`no CPU profile written in ${profileDir}`);
const { busy, entries } = selfTimes(
  JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as Profile,
  measured.from,
  measured.to,
);
const perRequest = (us: number) => us / profileRun.answered;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const spread = (xs: number[], digits: number) =>
  `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
/** A run whose median latency is over this fell behind the paced client (its queue grew). */
const BEHIND_MS = 50;
const behind = VARIANTS.flatMap((v) =>
  runs[v].flatMap((r, i) => (r.p50 > BEHIND_MS ? [`${v} round ${i + 1}, p50 ${r.p50.toFixed(0)} ms`] : [])),
);
/** Per round, paired with the bare server's run of the same round, so slow drift of the machine cancels. */
const ratiosOf = (v: Variant) => runs[v].map((r, i) => r.cpuUs / runs.bare[i]!.cpuUs);
const ratios = ratiosOf('api');
const ratio = median(ratios);
const row = (v: Variant) =>
  `| ${LABELS[v]} | ${median(runs[v].map((r) => r.cpuUs)).toFixed(0)} (${spread(
    runs[v].map((r) => r.cpuUs),
    0,
  )}) | ${v === 'bare' ? '1' : `${median(ratiosOf(v)).toFixed(2)}×`} | ${median(runs[v].map((r) => r.wakeups)).toFixed(2)} | ${median(runs[v].map((r) => r.p50)).toFixed(2)} | ${median(runs[v].map((r) => r.p99)).toFixed(2)} |`;

const commit = describeCommit();
const command = `node --import tsx bench/api-cost.ts --rate ${rate} --seconds ${seconds} --rounds ${rounds} --connections ${connections} --profile-seconds ${profileSeconds}`;
const report = `# The API process's own cost per request

- When: ${new Date().toISOString()}, commit ${commit}
- Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, shared with Postgres, Redis and
  other work (1-minute load average during the runs: ${spread(loads, 1)})
- Data: ${parcels.toLocaleString('en-US')} parcels (\`${new URL(ownerDatabaseUrl()).pathname.slice(1)}\`); a by-id read costs the API the same at any scale
- Command: \`make bench-api-cost\` (\`${command}\`)
- Method: a paced client (\`bench/paced.ts\`, its own process) sends ${rate} requests/s, evenly spaced, over
  ${connections} keep-alive connections, for ${seconds} s, to each of: a bare \`node:http\` server answering a fixed
  ${bodyBytes}-byte JSON body (the median size of the API's answers), the same server reading the parcel from
  Postgres per request through postgres.js as the JSON text Postgres makes (the floor of any server that reads the
  row: no framework, auth or metering), and the API (\`bench/server.ts\`, as \`make run\`
  serves it, plus the floor routes of \`bench/floor-routes.ts\`, an Enterprise key) answering GET /parcels/{id} over
  ${ids.length} parcels drawn at random four ways: unguarded, with auth only, with auth and a bare Redis round trip per
  request (metering's transport with nothing metered), and as served (\`/v1\`, auth and metering). CPU per request is
  the server process's utime + stime (/proc) over the requests it answered; wake-ups per request are the voluntary
  context switches of its main thread. After a 2 s warm-up of each, ${rounds} rounds of every variant, the order
  rotating; medians, with the range in brackets. Ratios are paired per round with the bare server's run.

| server | CPU µs per request | ratio to bare | wake-ups per request | p50 ms | p99 ms |
| --- | --- | --- | --- | --- | --- |
${VARIANTS.map(row).join('\n')}

${
  behind.length > 0
    ? `**Not paced**: in ${behind.length} run(s) (${behind.join(', ')}) the server fell behind the client (p50 over ${BEHIND_MS} ms):
it then reads several requests per wake-up, so its CPU per request is that of a saturated server, not of a paced one.
The machine was too busy for this rate; run again at a lower \`--rate\` or on a quieter machine.

`
    : ''
}API CPU per request as a multiple of the bare server's: **${ratio.toFixed(2)}×** (per round ${spread(ratios, 2)}; target
≤ 2.5×: ${behind.length > 0 ? 'not judged: runs fell behind the paced client (above)' : ratio <= 2.5 ? 'met' : '**missed**'}).

CPU profile of the API process under the same paced load (\`node --cpu-prof --cpu-prof-interval=250\`, ${profileSeconds} s at
${rate}/s, ${profileRun.answered} requests; profiling slows the process, so shares matter more than µs): busy
${(busy / 1000).toFixed(0)} ms, ${perRequest(busy).toFixed(0)} µs per request. Top ${top} entries by self time:

| self µs per request | share of busy | function (file:line) |
| --- | --- | --- |
${entries
  .slice(0, top)
  .map(([name, us]) => `| ${perRequest(us).toFixed(1)} | ${((us / busy) * 100).toFixed(1)}% | \`${name}\` |`)
  .join('\n')}
`;
if (!values['no-write']) writeReport(values.out!, report);
console.log(report);
process.exit(0);
