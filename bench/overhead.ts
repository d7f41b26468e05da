// The cost of authentication and metering: the same endpoint served unguarded, with auth only, and with auth
// and metering, driven by autocannon on loopback in one run (interleaved, twice, to even out a noisy machine).
//   make bench-overhead   (or: node --import tsx bench/overhead.ts [--seconds 10] [--connections 32])
import { execSync } from 'node:child_process';
import { writeFileSync, mkdirSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { ownerDatabaseUrl } from '../src/db-url.ts';
import { resolveKeySecret } from '../src/accounts/keys.ts';
import { accounts } from '../src/accounts/service.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    endpoint: { type: 'string', default: '/counties/miami-dade' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const ENDPOINT = values.endpoint;

const owner = postgres(ownerDatabaseUrl(), { max: 1, onnotice: () => {} });
const svc = accounts(owner, resolveKeySecret(process.env, { create: true }));
const client = await svc.createClient({ name: 'Benchmark', email: 'bench@localhost.localdomain', plan: 'enterprise' });
await svc.setLimits(client.id, { rpm: 1_000_000_000 });
const { key } = await svc.createKey(client.id, 'live');

const app = await buildApp(
  { ...loadConfig({ ...process.env, LOG_LEVEL: 'warn' }), DATABASE_POOL_SIZE: 10 },
  { benchRoutes: true },
);
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address() as { port: number };
const base = `http://127.0.0.1:${address.port}`;

type Variant = 'none' | 'auth' | 'auth+meter';
const paths: Record<Variant, string> = { none: '/bench/none/v1', auth: '/bench/auth/v1', 'auth+meter': '/v1' };
const results: Record<Variant, { rps: number[]; p50: number[]; p99: number[] }> = {
  none: { rps: [], p50: [], p99: [] },
  auth: { rps: [], p50: [], p99: [] },
  'auth+meter': { rps: [], p50: [], p99: [] },
};

async function drive(variant: Variant) {
  const r = await autocannon({
    url: `${base}${paths[variant]}${ENDPOINT}`,
    connections,
    duration: seconds,
    headers: { authorization: `Bearer ${key}` },
  });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${variant}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  results[variant].rps.push(r.requests.average);
  results[variant].p50.push(r.latency.p50);
  results[variant].p99.push(r.latency.p99);
  console.error(
    `${variant.padEnd(10)} ${r.requests.average.toFixed(0)} req/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms`,
  );
}

for (let round = 0; round < 2; round++) for (const v of ['none', 'auth', 'auth+meter'] as Variant[]) await drive(v);
await app.close();
await owner`UPDATE accounts.clients SET status = 'suspended' WHERE id = ${client.id}`;
await owner.end();

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const row = (v: Variant) => {
  const rps = mean(results[v].rps);
  const base = mean(results.none.rps);
  return `| ${v} | ${rps.toFixed(0)} | ${((1 - rps / base) * 100).toFixed(1)}% | ${mean(results[v].p50).toFixed(2)} | ${mean(results[v].p99).toFixed(2)} | ${(1000 / rps - 1000 / base).toFixed(3)} |`;
};
let commit = 'unknown';
try {
  commit = execSync('git rev-parse --short HEAD').toString().trim();
} catch {
  // not a checkout
}
const report = `# Auth and metering overhead

Measured ${new Date().toISOString()} at commit ${commit} on ${cpus().length} cores (${cpus()[0]?.model}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB.
Command: \`node --import tsx bench/overhead.ts --seconds ${seconds} --connections ${connections} --endpoint ${ENDPOINT}\`
Endpoint: GET ${ENDPOINT}, ${connections} connections, ${seconds} s per run, each variant run twice interleaved; autocannon in the same process.

| variant | req/s | throughput cost vs none | p50 ms | p99 ms | added service time per request (ms) |
| --- | --- | --- | --- | --- | --- |
${row('none')}
${row('auth')}
${row('auth+meter')}

"Added service time" is 1 / throughput minus the same for the unguarded route: the server time each request spends
on auth (an HMAC and an in-process cache hit; a Postgres lookup on a miss) and metering (one Redis script to admit,
one to settle). The load generator shares the 2 cores, so every ratio here is conservative.
`;
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/overhead.md', report);
console.log(report);
process.exit(0);
