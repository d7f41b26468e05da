// `promtool check metrics` (Debian's prometheus package, installed by `make test` through scripts/services.sh
// install-test) accepts what /metrics serves: the API process's series after some traffic, and the webhook worker's.
import t from 'tap';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { Registry } from 'prom-client';
import { buildTestApp } from '../helpers/app.ts';
import { collectProcessMetrics } from '../../src/plugins/metrics.ts';
import { deliveryMetrics } from '../../src/webhooks/metrics.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const TOKEN = 'p'.repeat(40);

function hasPromtool(): boolean {
  try {
    execFileSync('promtool', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
// run on its own (not through `make test`): install it the way `make test` does
if (!hasPromtool()) await promisify(execFile)('bash', [`${ROOT}scripts/services.sh`, 'install-test']);

/** promtool's verdict on a scrape: its exit code and what it printed about each problem. */
function promtool(text: string): Promise<{ code: number | null; problems: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let problems = '';
    child.stdout.on('data', (d: Buffer) => (problems += d));
    child.stderr.on('data', (d: Buffer) => (problems += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, problems: problems.trim() }));
    child.stdin.end(text);
  });
}

t.test('promtool finds something wrong in a bad scrape (the check can fail)', async (t) => {
  const verdict = await promtool('# HELP jobs_total Jobs.\n# TYPE jobs_total gauge\njobs_total 1\n');
  t.not(verdict.code, 0);
  t.match(verdict.problems, /non-counter metrics should not have "_total" suffix/);
});

t.test("the API process's /metrics passes promtool check metrics", async (t) => {
  const { app, get } = await buildTestApp(t, { METRICS_TOKEN: TOKEN });
  await get('/v1/counties/broward');
  await get('/v1/counties/no-such-county');
  await app.inject({ method: 'GET', url: '/v1/counties', headers: { authorization: 'Bearer nope' } });
  const scrape = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  t.equal(scrape.statusCode, 200);
  t.match(scrape.body, /^http_requests_total\{/m, 'with the request series');
  t.match(scrape.body, /^nodejs_active_handles\{/m, 'and the per-type handle gauges');
  t.notMatch(scrape.body, /^nodejs_active_(handles|requests|resources)_total/m, 'not their _total sums');
  const verdict = await promtool(scrape.body);
  t.equal(verdict.problems, '', 'no problem reported');
  t.equal(verdict.code, 0);
});

t.test("the webhook worker's registry passes too", async (t) => {
  const registry = new Registry();
  collectProcessMetrics(registry);
  deliveryMetrics(registry);
  const verdict = await promtool(await registry.metrics());
  t.equal(verdict.problems, '');
  t.equal(verdict.code, 0);
});
