// Graceful restarts against real processes: SIGTERM to a process serving 8 busy keep-alive connections (slow requests
// among them) loses no request, exits 0 and leaves in Postgres exactly the usage of its 2xx answers; with WORKERS=2,
// SIGHUP replaces both workers one at a time under the same load with no request lost and usage still exact.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { createTestDatabase } from '../helpers/db.ts';
import { clientWithKey } from '../helpers/accounts.ts';
import { Load, listeningPids, recordedUsage, startApi } from './graceful-helpers.ts';

// four API processes started and stopped under load: minutes on a loaded machine
t.setTimeout(600_000);
const db = await createTestDatabase();
t.teardown(() => db.drop());

/** An enterprise client whose limits the load never reaches. */
async function client() {
  const c = await clientWithKey(db.sql, 'enterprise');
  await c.svc.setLimits(c.client.id, { rpm: 1_000_000, monthlyCredits: 10_000_000 });
  return c;
}

/** Loops 0 and 1 send requests that take 1.5 s, the others a county read and a fast metered route in turn. */
const mix = (loop: number, n: number) =>
  loop < 2 ? '/slow/v1/wait?ms=1500' : n % 2 ? '/v1/counties/miami-dade' : '/slow/v1/wait?ms=0';

const env = () => ({
  API_DATABASE_URL: db.apiUrl,
  REDIS_KEY_PREFIX: `test:${randomBytes(6).toString('hex')}:`,
  USAGE_BATCH_MS: '200',
  SHUTDOWN_TIMEOUT_MS: '10000',
});

t.test('SIGTERM under load: every request sent is answered, exit 0, usage exact', async (t) => {
  const c = await client();
  const api = await startApi(t, env());
  const load = new Load(api.port, c.headers, 8, mix, 5);
  // a separate keep-alive connection that asks /readyz while the process shuts down
  const probe = new Load(api.port, {}, 1, () => '/readyz', 20);
  await load.waitForAnswers(200);
  const sentAt = Date.now();
  api.child.kill('SIGTERM');
  const code = await api.exited;
  await load.stop();
  await probe.stop();

  t.equal(code, 0, 'the process exits 0');
  t.same(load.failures, [], 'no request sent was left without its full answer');
  t.same(Object.keys(load.statuses()), ['200'], 'every answer a 200');
  const slowAfter = load.answers.filter((a) => a.at > sentAt && a.path.includes('ms=1500'));
  t.ok(slowAfter.length > 0, 'slow requests in flight at SIGTERM were answered after it');
  t.ok(load.refused > 0, 'connections made after the close were refused (not counted as failures)');
  t.ok(
    probe.answers.some((a) => a.status === 503 && JSON.parse(a.body).not_ready.includes('shutting_down')),
    '/readyz said not ready, shutting down, on a connection open before the close',
  );
  t.same(probe.failures, [], 'the probe lost nothing either');
  const usage = await recordedUsage(db.sql, c.client.id);
  t.equal(usage.requests, load.answers.length, 'usage in Postgres: every 2xx answer, once');
  t.equal(usage.debited, load.answers.length, 'the ledger debited one credit per 2xx answer');
  t.match(api.output(), /shutting down/);
  t.comment(`answers ${load.answers.length}, refused connections ${load.refused}`);
});

t.test('WORKERS=2: SIGHUP replaces both workers under load, nothing lost, usage exact', async (t) => {
  const c = await client();
  const api = await startApi(t, { ...env(), WORKERS: '2' }, 2);
  const before = listeningPids(api);
  t.equal(before.length, 2, 'two workers');
  const load = new Load(api.port, c.headers, 8, mix, 5);
  await load.waitForAnswers(200);
  api.child.kill('SIGHUP');
  await api.waitFor((l) => l.msg === 'rolling restart done', 'the rolling restart');
  const restartedAt = Date.now();
  await load.waitForAnswers(load.answers.length + 100);
  await load.stop();

  const after = listeningPids(api).filter((pid) => !before.includes(pid));
  t.equal(after.length, 2, 'two new workers listened');
  for (const pid of before) t.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `old worker ${pid} is gone`);
  const servedBy = new Set(
    load.answers.filter((a) => a.at > restartedAt && a.body.includes('pid')).map((a) => JSON.parse(a.body).data.pid),
  );
  t.ok(
    [...servedBy].every((pid) => after.includes(pid)) && servedBy.size > 0,
    'after the restart only new workers answer',
  );
  const replaced = api.lines.filter((l) => l.msg === 'worker replaced');
  t.same(replaced.map((l) => l.stopped).sort(), [...before].sort(), 'each old worker replaced once');
  t.same(load.failures, [], 'no request sent was left without its full answer');
  t.equal(load.refused, 0, 'no connection refused: the port was served throughout');
  t.same(Object.keys(load.statuses()), ['200'], 'every answer a 200');

  api.child.kill('SIGTERM');
  t.equal(await api.exited, 0, 'the primary exits 0 after its workers');
  const usage = await recordedUsage(db.sql, c.client.id);
  t.equal(usage.requests, load.answers.length, 'usage in Postgres: every 2xx answer, once');
  t.equal(usage.debited, load.answers.length, 'the ledger debited one credit per 2xx answer');
  t.comment(`answers ${load.answers.length}, old workers ${before.join(',')}, new ${after.join(',')}`);
});

t.test('WORKERS=2: a worker that dies on its own stops the service, exit 1', async (t) => {
  const api = await startApi(t, { ...env(), WORKERS: '2' }, 2);
  const [victim, other] = listeningPids(api) as [number, number];
  process.kill(victim, 'SIGKILL');
  t.equal(await api.exited, 1, 'the primary exits 1');
  t.throws(() => process.kill(other, 0), { code: 'ESRCH' }, 'the other worker was stopped too');
  t.match(api.output(), /API worker exited; stopping/);
});

t.test(
  'past SHUTDOWN_TIMEOUT_MS a request still in flight is cut, uncharged, and the process still exits 0',
  async (t) => {
    const c = await client();
    const api = await startApi(t, { ...env(), SHUTDOWN_TIMEOUT_MS: '300' });
    const load = new Load(api.port, c.headers, 1, (_loop, n) =>
      n === 0 ? '/v1/counties/miami-dade' : '/slow/v1/wait?ms=20000',
    );
    await load.waitForAnswers(1);
    await api.waitFor(
      (l) => l.msg === 'incoming request' && String(l.req && (l.req as { url: string }).url).includes('ms=20000'),
      'the slow request',
    );
    api.child.kill('SIGTERM');
    t.equal(await api.exited, 0);
    await load.stop();
    t.equal(load.answers.length, 1, 'the first request was answered');
    t.match(load.failures, [/ms=20000/], 'the slow one was cut');
    t.match(api.output(), /shutdown deadline passed: requests still in flight were cut/);
    const usage = await recordedUsage(db.sql, c.client.id);
    t.equal(usage.requests, 1, 'only the answered request is charged');
  },
);
