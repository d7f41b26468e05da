// A second clone on ports of its own remembers them (.local/env): `make status`, `make db`, the operator CLI, a new
// shell and `make stop` run there without PGPORT / REDIS_PORT all reach that clone's services, and only those; the
// services every other test uses keep running. An explicit variable still wins over the remembered one.
import t from 'tap';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { Redis } from 'ioredis';
import { localRedisUrl, ownerDatabaseUrl, withDatabase } from '../../src/db-url.ts';
import { loadLocalEnv } from '../../src/local-env.ts';
import { cleanupWhenDone, freePorts } from '../helpers/processes.ts';

const exec = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
// a start, a migration and fixtures in a fresh cluster take minutes on a loaded machine
t.setTimeout(900_000);

const folder = mkdtempSync(join(tmpdir(), 'florida-second-'));
const clone = join(folder, 'florida');
const [pgPort, redisPort, apiPort] = (await freePorts(3)).map(String) as [string, string, string];
const ports = { PGPORT: pgPort, REDIS_PORT: redisPort, PORT: apiPort };
/** The environment of a new shell that knows nothing of this clone: none of the settings .local/env may hold. */
const bare: NodeJS.ProcessEnv = { ...process.env };
for (const name of ['DATABASE_URL', 'REDIS_URL', 'PG_DIR', 'PGPORT', 'REDIS_PORT', 'PORT', 'API_DATABASE_URL'])
  delete bare[name];
delete bare.METER_DATABASE_URL;

async function run(command: string, args: string[], env: NodeJS.ProcessEnv = bare) {
  try {
    const { stdout, stderr } = await exec(command, args, { cwd: clone, env, timeout: 600_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

// the clone's Postgres and Redis are daemons, not children of this process: stopped and removed when the file ends,
// however it ends, with the ports named explicitly (the clean removes .local/env)
cleanupWhenDone(t, 'sh', ['-c', 'cd "$0/florida" 2>/dev/null && bash scripts/services.sh clean; rm -rf "$0"', folder], {
  env: { ...bare, ...ports },
});

await exec('git', ['clone', '--quiet', ROOT, clone]);
// what this change touches, as in the working tree, so that what is tested is what would be committed
for (const file of [
  'scripts/services.sh',
  'scripts/replica.sh',
  'scripts/local-env.sh',
  'Makefile',
  'src/local-env.ts',
]) {
  mkdirSync(dirname(join(clone, file)), { recursive: true });
  copyFileSync(join(ROOT, file), join(clone, file));
}
// the dependencies this clone already has; its package files older than them, so that `make` does not run npm ci
symlinkSync(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
for (const file of ['package.json', 'package-lock.json']) utimesSync(join(clone, file), 0, 0);
mkdirSync(join(clone, '.local'), { recursive: true });
writeFileSync(join(clone, '.local', 'api-key-secret'), 'a second clone key secret, 32 characters or more');

t.test('make services records the ports; make status, make db, the CLI and a new shell use them', async (t) => {
  const started = await run('make', ['services'], { ...bare, ...ports });
  t.equal(started.code, 0, started.stderr);
  t.match(started.stdout, `postgres on 127.0.0.1:${pgPort}`);
  const recorded = readFileSync(join(clone, '.local', 'env'), 'utf8');
  t.match(recorded, `PGPORT='${pgPort}'`);
  t.match(recorded, `REDIS_PORT='${redisPort}'`);
  t.match(recorded, `PORT='${apiPort}'`);
  t.notMatch(recorded, /DATABASE_URL|REDIS_URL/, 'no server URL: the local ones follow from the ports');

  const status = await run('make', ['status']);
  t.equal(status.code, 0, status.stderr);
  t.match(status.stdout, `postgres: running on 127.0.0.1:${pgPort}`);
  t.match(status.stdout, `redis: running on 127.0.0.1:${redisPort}`);

  const db = await run('make', ['db']);
  t.equal(db.code, 0, db.stderr);
  const cloneSql = postgres(`postgres://postgres@127.0.0.1:${pgPort}/florida`, { max: 1, onnotice: () => {} });
  t.teardown(() => cloneSql.end());
  t.ok((await cloneSql`SELECT to_regclass('accounts.clients') AS t`)[0]?.t, "make db migrated the clone's database");

  const email = `second-clone-${process.pid}@example.com`;
  const admin = (...args: string[]) => run('node', ['--import', 'tsx', 'src/accounts/cli.ts', ...args]);
  const created = await admin('client', 'create', '--name', 'Second Clone', '--email', email, '--plan', 'free');
  t.equal(created.code, 0, created.stderr);
  const found = await admin('client', 'find', '--email', email, '--json');
  t.equal(found.code, 0, found.stderr);
  t.same(
    JSON.parse(found.stdout).map((c: { id: string }) => c.id),
    [created.stdout.trim()],
  );
  const [here] = await cloneSql`SELECT count(*)::int AS n FROM accounts.clients WHERE email = ${email}`;
  t.equal(here?.n, 1, "the CLI wrote to this clone's database");
  t.equal((await cloneSql`SELECT inet_server_port() AS p`)[0]?.p, Number(pgPort), 'which is on its own server');

  const shell = await run('bash', [
    '-c',
    'set -a; . .local/env; set +a; echo "$PORT"; redis-cli -p "$REDIS_PORT" ping',
  ]);
  t.same(shell.stdout.split('\n').slice(0, 2), [apiPort, 'PONG'], 'a new shell that sources .local/env');

  const other = String(Number(pgPort) === 65535 ? 1025 : Number(pgPort) + 1);
  const wrongPort = await run('make', ['services'], { ...bare, PGPORT: other });
  t.not(wrongPort.code, 0, 'an explicit PGPORT wins over .local/env ...');
  t.match(
    wrongPort.stderr,
    `this clone's postgres already runs on port ${pgPort}, not PGPORT=${other}`,
    '... and a cluster already running elsewhere is named rather than a second one started',
  );
});

t.test("make stop stops this clone's services only", async (t) => {
  const stopped = await run('make', ['stop']);
  t.equal(stopped.code, 0, stopped.stderr);
  t.match(stopped.stdout, /postgres stopped[\s\S]*redis stopped/);
  const status = await run('make', ['status']);
  t.match(status.stdout, /postgres: not running[\s\S]*redis: not running/);

  const suite = postgres(withDatabase(ownerDatabaseUrl(process.env), 'postgres'), { max: 1, onnotice: () => {} });
  t.same(await suite`SELECT 1 AS one`, [{ one: 1 }], "the suite's PostgreSQL still answers");
  await suite.end();
  const redis = new Redis(localRedisUrl(process.env), { lazyConnect: true, maxRetriesPerRequest: 0 });
  t.equal(await redis.ping(), 'PONG', 'and its Redis');
  redis.disconnect();
});

t.test('loadLocalEnv fills only what the environment leaves unset', async (t) => {
  const file = join(folder, 'env');
  writeFileSync(file, "# a comment\nPGPORT='55999'\nREDIS_PORT='56999'\nPORT='3999'\n");
  const env: NodeJS.ProcessEnv = { PGPORT: '55001', PORT: '' };
  loadLocalEnv(env, file);
  t.same(env, { PGPORT: '55001', PORT: '', REDIS_PORT: '56999' }, 'set, even empty, wins');
  const missing: NodeJS.ProcessEnv = {};
  loadLocalEnv(missing, join(folder, 'no-such-file'));
  t.same(missing, {}, 'no file, no change');

  const shell = await exec(
    'bash',
    ['-c', `. "$1"; echo "$PGPORT $REDIS_PORT $PORT"`, 'sh', join(clone, 'scripts', 'local-env.sh')],
    { env: { ...bare, PGPORT: '55001', PORT: '' }, timeout: 60_000 },
  );
  t.equal(shell.stdout, `55001 ${redisPort} \n`, 'the shell loader too, with the port the clone recorded');
});
