// A worker killed mid-delivery loses nothing: `npm run worker` (src/webhooks/main.ts) runs as a child process, is
// killed with SIGKILL while a receiver holds its request open, and another worker sends the event again, with the
// same webhook-id, once the dead worker's lease runs out. SIGTERM stops a worker cleanly.
import t from 'tap';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { buildTestApp } from '../helpers/app.ts';
import { TEST_KEY_SECRET } from '../helpers/accounts.ts';
import { spawnChild } from '../helpers/processes.ts';
import { FAST, api, importLiberty, receiver, startWorker, waitFor } from './helpers.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const ctx = await buildTestApp(t, FAST);
const { db } = ctx;
const m = api(ctx);

/** `npm run worker` as a child process, stopped when the test ends, however it ends (helpers/processes.ts). */
function workerProcess(t: Parameters<typeof spawnChild>[0]): ChildProcess {
  return spawnChild(t, process.execPath, ['--import', 'tsx', 'src/webhooks/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...FAST,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      API_DATABASE_URL: db.apiUrl,
      API_KEY_SECRET: TEST_KEY_SECRET,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

t.test('killed mid-delivery: sent again by another worker, with the same webhook-id', async (t) => {
  let first = true;
  const r = await receiver(t, () => {
    if (first) {
      first = false;
      return { hang: true }; // the worker waits for an answer that never comes
    }
    return {};
  });
  const e = await m.create({ url: r.url, events: ['tax_delinquency.created'], counties: ['liberty'] });
  const a = workerProcess(t);
  await importLiberty(db, 1980, 1);
  await waitFor('the first attempt, held open', () => r.requests.length >= 1);
  a.kill('SIGKILL');
  await once(a, 'exit');
  const killedAt = Date.now();

  await startWorker(t, db);
  await waitFor('sent again', () => r.requests.length >= 2);
  // generous: the lease runs out in seconds; this only tells a lease that never runs out from a loaded machine
  t.ok(Date.now() - killedAt < 120_000, 'once the lease ran out');
  t.equal(r.requests[1]!.headers['webhook-id'], r.requests[0]!.headers['webhook-id'], 'the same webhook-id');
  t.equal(r.requests[1]!.body, r.requests[0]!.body, 'the same body');
  const d = await waitFor('recorded', async () => {
    const x = (await m.get(`/v1/webhooks/${e.id}/deliveries`)).json().data[0];
    return x?.status === 'delivered' ? x : null;
  });
  t.match(d.attempts, [
    { number: 1, status_code: null, error: /^interrupted: the worker stopped before the answer was recorded/ },
    { number: 2, status_code: 200, error: null },
  ]);
  t.equal(r.requests.length, 2, 'nothing else');
});

t.test('SIGTERM stops a worker process cleanly', async (t) => {
  const c = workerProcess(t);
  // started: it has installed the job queue and listens
  await waitFor('the worker is up', async () => {
    const rows =
      await db.sql`SELECT 1 FROM pg_stat_activity WHERE datname = ${db.name} AND application_name = 'florida-webhooks'`;
    return rows.length > 0;
  });
  c.kill('SIGTERM');
  const [code] = await once(c, 'exit');
  t.equal(code, 0);
});
