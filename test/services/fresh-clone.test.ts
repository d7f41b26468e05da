// `make run` / `make test` from a clone in a private folder (root's home and `mktemp -d` are 0700): the services
// start there on their own ports, answer, report their status, and stop without touching another clone's.
import t from 'tap';
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { Redis } from 'ioredis';
import { ownerDatabaseUrl, withDatabase } from '../../src/db-url.ts';
import { cleanupWhenDone } from '../helpers/processes.ts';

const run = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;

function listen(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}
async function freePort(): Promise<number> {
  const server = await listen();
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const folder = mkdtempSync(join(tmpdir(), 'florida-clone-'));
const clone = join(folder, 'florida');
const ports = { PGPORT: String(await freePort()), REDIS_PORT: String(await freePort()) };
const env: NodeJS.ProcessEnv = { ...process.env, ...ports };
for (const name of ['DATABASE_URL', 'REDIS_URL', 'PG_DIR', 'API_DATABASE_URL']) delete env[name];

async function services(action: string, extra: NodeJS.ProcessEnv = {}) {
  try {
    const { stdout, stderr } = await run('bash', ['scripts/services.sh', action], {
      cwd: clone,
      env: { ...env, ...extra },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

// the clone's Postgres and Redis are daemons, not children of this process: stopped and removed when the file ends,
// however it ends
cleanupWhenDone(t, 'sh', ['-c', 'cd "$0/florida" 2>/dev/null && bash scripts/services.sh clean; rm -rf "$0"', folder], {
  env,
});
// a start or a copy of the cluster on a loaded machine can take a minute
t.setTimeout(600_000);

await run('git', ['clone', '--quiet', ROOT, clone]);
// the services scripts as they are in this working tree, so that what is tested is what would be committed
for (const script of ['services.sh', 'replica.sh'])
  copyFileSync(join(ROOT, 'scripts', script), join(clone, 'scripts', script));

t.test('services start in a clone inside a 0700 folder, answer, and stop', async (t) => {
  t.equal(statSync(folder).mode & 0o777, 0o700, 'the clone sits in a private folder');

  const started = await services('start');
  t.equal(started.code, 0, started.stderr);
  t.match(started.stdout, `postgres on 127.0.0.1:${ports.PGPORT}`);
  t.match(started.stdout, `redis on 127.0.0.1:${ports.REDIS_PORT}`);

  const sql = postgres(`postgres://postgres@127.0.0.1:${ports.PGPORT}/postgres`, { max: 1, onnotice: () => {} });
  const [row] = await sql`SELECT current_setting('data_directory') AS dir`;
  await sql.end();
  t.notOk(String(row?.dir).startsWith(folder), 'the cluster lives where the postgres user can reach it');
  t.match(String(row?.dir), /florida-[0-9a-f]{10}\/data$/, 'in a folder named after the clone');

  const redis = new Redis({ port: Number(ports.REDIS_PORT), lazyConnect: true, maxRetriesPerRequest: 0 });
  t.equal(await redis.ping(), 'PONG');
  redis.disconnect();

  t.match((await services('status')).stdout, /postgres: running[\s\S]*redis: running/);
  const again = await services('start');
  t.equal(again.code, 0, 'starting twice is harmless');
  t.match(again.stdout, /postgres already running[\s\S]*redis already running/);

  const stopped = await services('stop');
  t.equal(stopped.code, 0, stopped.stderr);
  t.match((await services('status')).stdout, /postgres: not running[\s\S]*redis: not running/);

  const suite = postgres(withDatabase(ownerDatabaseUrl(process.env), 'postgres'), { max: 1, onnotice: () => {} });
  t.same(await suite`SELECT 1 AS one`, [{ one: 1 }], "stopping one clone's services leaves the others running");
  await suite.end();
});

t.test('a port in use is named with its fix, in one line', async (t) => {
  const server = await listen();
  const { port } = server.address() as AddressInfo;
  try {
    const pg = await services('start', { PGPORT: String(port) });
    t.equal(pg.code, 1);
    t.match(pg.stderr.trim(), new RegExp(`^services: port ${port} is taken .*set PGPORT=<free port>$`));
    const redis = await services('start', { REDIS_PORT: String(port) });
    t.equal(redis.code, 1);
    t.match(redis.stderr.trim(), new RegExp(`^services: port ${port} is taken .*set REDIS_PORT=<free port>$`));
  } finally {
    await services('stop');
    server.close();
  }
});

t.test('a cluster folder the postgres user cannot enter is named with its fix', async (t) => {
  const res = await services('start', { PG_DIR: join(folder, 'private', 'cluster') });
  t.equal(res.code, 1);
  t.match(res.stderr.trim(), /^services: the postgres user cannot enter .*set PG_DIR to a folder it can reach$/);
});

t.test('PG_DIR names a parent: the folder itself is left as it is, and clean removes only this clone', async (t) => {
  const shared = mkdtempSync(join(tmpdir(), 'florida-pgdir-'));
  chmodSync(shared, 0o755);
  writeFileSync(join(shared, 'keep-me'), 'not ours');
  t.teardown(() => rmSync(shared, { recursive: true, force: true }));
  const extra = { PG_DIR: shared, PGPORT: String(await freePort()), REDIS_PORT: String(await freePort()) };
  cleanupWhenDone(t, 'bash', ['scripts/services.sh', 'clean'], { cwd: clone, env: { ...env, ...extra } });
  const started = await services('start', extra);
  t.equal(started.code, 0, started.stderr);
  t.match(started.stdout, `cluster in ${shared}/florida-`);
  const after = statSync(shared);
  t.equal(after.uid, 0, 'still root');
  t.equal(after.mode & 0o777, 0o755, 'mode unchanged');
  t.equal((await services('clean', extra)).code, 0);
  t.same(readdirSync(shared), ['keep-me'], "only the clone's own folder is gone");
});
