// `make fuzz`: the hostile fuzz of scripts/fuzz/properties.ts against a running server for --minutes, with a report.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import postgres from 'postgres';
import { Pool } from 'undici';
import { ownerDatabaseUrl } from '../src/db-url.ts';
import { resolveKeySecret } from '../src/accounts/keys.ts';
import { accounts } from '../src/accounts/service.ts';
import { createRedis, redisConnection } from '../src/plugins/redis.ts';
import {
  MCP_HEADERS,
  MCP_PATH,
  check,
  mcpRequest,
  operationsOf,
  reproduction,
  requestHeaders,
  restRequest,
  type FuzzRequest,
  type FuzzResponse,
} from './fuzz/properties.ts';

const KEY_FILE = join(new URL('..', import.meta.url).pathname, '.local', 'fuzz-key');
/** Far above any request rate this script reaches: the fuzz should meet the routes, not the per-minute limit. */
const FUZZ_RPM = 1_000_000_000;
const PROGRESS_MS = 10_000;
const MAX_EXAMPLES = 20;
const CLIP = 8000;

const { values: opts } = parseArgs({
  options: {
    url: { type: 'string', default: `http://127.0.0.1:${process.env.PORT || '3000'}` },
    minutes: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '8' },
    report: { type: 'string', default: '.local/fuzz-report.md' },
    'max-ms': { type: 'string', default: '1000' },
    'max-requests': { type: 'string', default: '2000000' },
    seed: { type: 'string' },
  },
});

function fail(message: string): never {
  console.error(`fuzz: ${message}`);
  process.exit(2);
}
const positive = (name: keyof typeof opts, integer = false) => {
  const n = Number(opts[name]);
  if (!(n > 0) || !Number.isFinite(n) || (integer && !Number.isInteger(n)))
    fail(`--${name} must be a positive ${integer ? 'whole ' : ''}number, got '${opts[name]}'`);
  return n;
};
const minutes = positive('minutes');
const concurrency = positive('concurrency', true);
const maxMs = positive('max-ms');
const maxRequests = positive('max-requests', true);
const seed = opts.seed === undefined ? Date.now() % 2 ** 31 : positive('seed', true);

let base: URL;
try {
  base = new URL(opts.url);
} catch {
  fail(`--url is not a URL: '${opts.url}'`);
}
// hostile traffic goes to this machine only
const loopback =
  base.hostname === 'localhost' || base.hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(base.hostname);
if (!loopback || base.protocol !== 'http:') fail(`refusing ${base.origin}: only http on a loopback host`);

/** The fuzz client's key: reused from .local/fuzz-key while active, else a new enterprise client; its RPM raised. */
async function fuzzKey(): Promise<string> {
  const sql = postgres(ownerDatabaseUrl(), { max: 1, onnotice: () => {} });
  // the API's Redis, as the operator CLI uses it, so the running server sees the new limit at once
  const redis = createRedis(redisConnection(process.env), process.env.REDIS_KEY_PREFIX || 'fl:');
  redis.on('error', () => {});
  try {
    const svc = accounts(sql, resolveKeySecret(process.env, { create: true }), redis);
    let [key = '', clientId = ''] = existsSync(KEY_FILE) ? readFileSync(KEY_FILE, 'utf8').split('\n') : [];
    if (!key || !clientId || !(await svc.isActiveKey(key))) {
      const client = await svc.createClient({ name: 'Fuzz', email: 'fuzz@localhost.localdomain', plan: 'enterprise' });
      clientId = client.id;
      key = (await svc.createKey(clientId, 'live')).key;
      mkdirSync(dirname(KEY_FILE), { recursive: true });
      writeFileSync(KEY_FILE, `${key}\n${clientId}\n`, { mode: 0o600 });
    }
    await svc.setLimits(clientId, { rpm: FUZZ_RPM });
    // setLimits does not drop the client's hot state in Redis; without this a running server keeps the old limit
    if (redis.status !== 'ready')
      await new Promise((resolve) => {
        redis.once('ready', resolve);
        setTimeout(resolve, 2000).unref();
      });
    await redis.del(`st:${clientId}`, `st:${clientId}:test`).catch((err: Error) => {
      console.error(`fuzz: warning: Redis not reachable (${err.message}); the server may keep the old limit a while`);
    });
    return key;
  } finally {
    redis.disconnect();
    await sql.end();
  }
}

const key = await fuzzKey();
const timeoutMs = Math.max(10 * maxMs, 10_000);
const pool = new Pool(base.origin, { connections: concurrency, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });

type Sent = { res: FuzzResponse; elapsed: number } | { error: string; elapsed: number };
async function send(req: FuzzRequest): Promise<Sent> {
  const started = performance.now();
  try {
    const r = await pool.request({
      path: req.url,
      method: req.method,
      headers: requestHeaders(req, key),
      body: req.body,
    });
    const body = await r.body.text();
    return { res: { status: r.statusCode, headers: r.headers, body }, elapsed: performance.now() - started };
  } catch (err) {
    return { error: (err as Error).message, elapsed: performance.now() - started };
  }
}

async function discover() {
  try {
    const doc = await pool.request({ path: '/v1/openapi.json', method: 'GET' });
    const list = await pool.request({
      path: MCP_PATH,
      method: 'POST',
      headers: { ...MCP_HEADERS, authorization: `Bearer ${key}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const tools = ((await list.body.json()) as { result?: { tools?: { name: string }[] } }).result?.tools ?? [];
    return { operations: operationsOf((await doc.body.json()) as never), tools };
  } catch (err) {
    return fail(
      `cannot read ${base.origin}/v1/openapi.json and tools/list (is \`make run\` serving?): ${(err as Error).message}`,
    );
  }
}

const { operations, tools } = await discover();
const arbitrary = fc.oneof(
  { weight: 2, arbitrary: restRequest(operations) },
  { weight: 1, arbitrary: mcpRequest(tools) },
);
let batch = 0;
let queue: FuzzRequest[] = [];
/** Samples in seeded batches, so a run is replayed by --seed. */
const nextRequest = () => {
  if (queue.length === 0) queue = fc.sample(arbitrary, { numRuns: 500, seed: seed + batch++ }).reverse();
  return queue.pop()!;
};

const stats = {
  requests: 0,
  rest: 0,
  byStatus: new Map<string, number>(),
  serverErrors: 0,
  violations: 0,
  byProblem: new Map<string, number>(),
  examples: [] as { req: FuzzRequest; status: string; problems: string[] }[],
  latencies: [] as number[],
  slow: [] as { req: FuzzRequest; ms: number; status: string }[],
  slowest: 0,
  overMax: 0,
};
const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
/** A problem without its particulars: "result for id 3, sent id 4" and "… id 5, sent id 6" are one kind. */
const kindOf = (problem: string) => problem.replace(/:.*/s, '').replace(/"[^"]*"|\b\d+ ms\b/g, '…');

function record(req: FuzzRequest, sent: Sent) {
  stats.requests++;
  if (req.kind === 'rest') stats.rest++;
  stats.latencies.push(sent.elapsed);
  const status = 'res' in sent ? String(sent.res.status) : 'no answer';
  bump(stats.byStatus, status);
  const problems = 'res' in sent ? check(req, sent.res, sent.elapsed, Infinity) : [`no HTTP answer: ${sent.error}`];
  if ('res' in sent && sent.res.status >= 500) stats.serverErrors++;
  if (problems.length > 0) {
    stats.violations++;
    for (const p of problems) bump(stats.byProblem, kindOf(p));
    // a spread of kinds rather than twenty of the first one
    const kinds = (ps: string[]) => ps.map(kindOf).sort().join(' + ');
    const seen = stats.examples.filter((e) => kinds(e.problems) === kinds(problems)).length;
    if (stats.examples.length < MAX_EXAMPLES && seen < 3) stats.examples.push({ req, status, problems });
  }
  stats.slowest = Math.max(stats.slowest, sent.elapsed);
  if (sent.elapsed > maxMs) {
    stats.overMax++;
    stats.slow.push({ req, ms: sent.elapsed, status });
    stats.slow.sort((a, b) => b.ms - a.ms).splice(5);
  }
}

const started = performance.now();
let deadline = started + minutes * 60_000;
process.once('SIGINT', () => {
  console.error('fuzz: interrupted; finishing the requests in flight and writing the report');
  deadline = 0;
});
const seconds = () => (performance.now() - started) / 1000;
const progress = setInterval(() => {
  const s = seconds();
  console.log(
    `[${s.toFixed(0).padStart(4)}s] ${stats.requests} requests, ${(stats.requests / s).toFixed(1)} req/s, ` +
      `${stats.serverErrors} 5xx, ${stats.violations} violations, slowest ${stats.slowest.toFixed(0)} ms`,
  );
}, PROGRESS_MS);
console.log(`fuzz: ${base.origin} for ${minutes} min, ${concurrency} at a time, seed ${seed}`);

let issued = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (performance.now() < deadline && issued < maxRequests) {
      issued++;
      const req = nextRequest();
      record(req, await send(req));
    }
  }),
);
clearInterval(progress);
await pool.close();

// --- report -----------------------------------------------------------------------------------------------------
const duration = seconds();
const sorted = Float64Array.from(stats.latencies).sort();
const pct = (p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! : 0);
const ms = (n: number) => `${n.toFixed(1)} ms`;
const clip = (s: string) => (s.length > CLIP ? `${s.slice(0, CLIP)}… (${s.length} characters, clipped)` : s);
const repro = (req: FuzzRequest) => clip(reproduction(req, base.origin));
const passed = stats.serverErrors === 0 && stats.violations === 0 && stats.overMax === 0;
const lines = [
  '# Hostile fuzz report',
  '',
  `- target: ${base.origin}, ${new Date().toISOString()}`,
  `- duration: ${duration.toFixed(1)} s (--minutes ${minutes}), concurrency ${concurrency}, seed ${seed} (--seed replays)`,
  `- requests: ${stats.requests} (${stats.rest} REST, ${stats.requests - stats.rest} MCP), ` +
    `${(stats.requests / duration).toFixed(1)} req/s`,
  `- verdict: **${passed ? 'PASS' : 'FAIL'}**`,
  '',
  '## Statuses',
  '',
  '| status | requests |',
  '|---|---|',
  ...[...stats.byStatus].sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `| ${s} | ${n} |`),
  '',
  `## Server errors (5xx): ${stats.serverErrors}`,
  '',
  `## Violations: ${stats.violations} requests`,
  '',
  ...(stats.byProblem.size === 0
    ? ['None.']
    : [
        '| problem | count |',
        '|---|---|',
        ...[...stats.byProblem].sort((a, b) => b[1] - a[1]).map(([p, n]) => `| ${p.replace(/\|/g, '\\|')} | ${n} |`),
      ]),
  '',
  ...stats.examples.flatMap((e, i) => [
    `### ${i + 1}. ${e.req.method} ${clip(e.req.url).slice(0, 200)} → ${e.status}`,
    '',
    ...e.problems.map((p) => `- ${p}`),
    '',
    '```sh',
    repro(e.req),
    '```',
    '',
  ]),
  '## Latency',
  '',
  '| p50 | p99 | max |',
  '|---|---|---|',
  `| ${ms(pct(0.5))} | ${ms(pct(0.99))} | ${ms(sorted[sorted.length - 1] ?? 0)} |`,
  '',
  `## Over --max-ms (${maxMs} ms): ${stats.overMax}`,
  '',
  ...stats.slow.flatMap((s) => [`- ${ms(s.ms)} → ${s.status}:`, '', '  ```sh', `  ${repro(s.req)}`, '  ```', '']),
];
mkdirSync(dirname(opts.report), { recursive: true });
writeFileSync(opts.report, `${lines.join('\n')}\n`);
console.log(
  `fuzz: ${passed ? 'PASS' : 'FAIL'}: ${stats.requests} requests, ${stats.serverErrors} 5xx, ${stats.violations} ` +
    `violations, ${stats.overMax} over ${maxMs} ms; report in ${opts.report}`,
);
process.exitCode = passed ? 0 : 1;
