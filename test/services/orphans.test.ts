// Nothing a test starts outlives it: a test process (orphan-parent.ts) starts an API process (with two workers, or
// one process), a Redis server, a test database and a cleanup watcher through the suite's helpers, and is killed as
// tap kills a test that runs out of time (SIGALRM, then SIGKILL), or by SIGKILL or SIGTERM alone; then no process it
// started still runs or listens, its database is dropped, and the cleanup has run.
import t, { type Test } from 'tap';
import { once } from 'node:events';
import { existsSync, mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestDatabase } from '../helpers/db.ts';
import { cleanupWhenDone, isRunning, spawnChild } from '../helpers/processes.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
// four API processes start: a minute on a loaded machine
t.setTimeout(600_000);
const db = await createTestDatabase();
t.teardown(() => db.drop());
const dir = mkdtempSync(join(tmpdir(), 'florida-orphans-'));
cleanupWhenDone(t, 'rm', ['-rf', dir]);

/** Whether something accepts connections on the port. */
const listens = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** Polls `check` until it holds, for a time generous enough for a loaded machine; returns whether it held. */
async function eventually(check: () => Promise<boolean> | boolean) {
  for (let i = 0; i < 300; i++) {
    if (await check()) return true;
    await sleep(100);
  }
  return false;
}

/** Starts orphan-parent.ts and resolves with what it started, once it has started all of it. */
async function startParent(t: Test, marker: string, workers: number) {
  const parent = spawnChild(t, process.execPath, ['--import', 'tsx', 'test/services/orphan-parent.ts'], {
    cwd: ROOT,
    env: { ...process.env, API_DATABASE_URL: db.apiUrl, ORPHAN_MARKER: marker, ORPHAN_WORKERS: String(workers) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  parent.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const started = await new Promise<{ pids: number[]; ports: number[]; database: string }>((resolve, reject) => {
    parent.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = /^started (.*)$/m.exec(output)?.[1];
      if (line) resolve(JSON.parse(line));
    });
    parent.once('exit', (code) => reject(new Error(`the test process exited ${code} before starting: ${output}`)));
  });
  return { parent, ...started };
}

const CASES = [
  { how: "tap's timeout: SIGALRM, then SIGKILL", signals: ['SIGALRM', 'SIGKILL'], workers: 2 },
  { how: 'SIGKILL', signals: ['SIGKILL'], workers: 1 },
  { how: 'SIGTERM', signals: ['SIGTERM'], workers: 1 },
] as const;
const marker = (how: string) => join(dir, how.replace(/\W+/g, '-'));
// started together, as the slow part is the start
const started = await Promise.all(CASES.map((c) => startParent(t, marker(c.how), c.workers)));

for (const [i, { how, signals, workers }] of CASES.entries()) {
  t.test(`a test process killed by ${how} leaves no process running`, async (t) => {
    const { parent, pids, ports, database } = started[i]!;
    const databases = async () =>
      (await db.sql`SELECT count(*)::int AS n FROM pg_database WHERE datname = ${database}`)[0]!.n as number;
    t.equal(await databases(), 1, 'its database exists');
    t.equal(
      pids.length,
      workers > 1 ? workers + 1 : 1,
      `the API: ${workers > 1 ? 'a primary and its workers' : 'one process'}`,
    );
    t.ok(pids.every(isRunning), 'running');
    t.ok((await Promise.all(ports.map(listens))).every(Boolean), 'the API and Redis listen');
    const exited = once(parent, 'exit');
    for (const [n, signal] of signals.entries()) {
      if (n > 0) await sleep(500); // tap waits this long before its SIGKILL
      if (parent.exitCode === null && parent.signalCode === null) parent.kill(signal);
    }
    await exited;
    t.ok(await eventually(() => !pids.some(isRunning)), `no API process left (${pids.join(', ')})`);
    t.ok(
      await eventually(async () => !(await Promise.all(ports.map(listens))).some(Boolean)),
      `nothing listens on ${ports.join(', ')}`,
    );
    t.ok(await eventually(async () => (await databases()) === 0), `its database ${database} is dropped`);
    t.ok(await eventually(() => existsSync(marker(how))), 'the cleanup command ran');
  });
}
