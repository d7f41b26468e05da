// What every benchmark needs around the API: a client whose limits never get in the way, and the API started as a
// user runs it (bench/server.ts: src/main.ts plus the floor routes, in its own process), ready once /healthz answers.
import { spawn, type ChildProcess } from 'node:child_process';
import type postgres from 'postgres';
import { ownerDatabaseUrl } from '../src/db-url.ts';
import { resolveKeySecret } from '../src/accounts/keys.ts';
import { accounts } from '../src/accounts/service.ts';

/** An Enterprise client with a practically unlimited RPM and one live key; `retire` suspends it after the run. */
export async function benchClient(owner: postgres.Sql) {
  const svc = accounts(owner, resolveKeySecret(process.env, { create: true }));
  const client = await svc.createClient({
    name: 'Benchmark',
    email: 'bench@localhost.localdomain',
    plan: 'enterprise',
  });
  await svc.setLimits(client.id, { rpm: 1_000_000_000 });
  const { key } = await svc.createKey(client.id, 'live');
  return {
    key,
    retire: () => owner`UPDATE accounts.clients SET status = 'suspended' WHERE id = ${client.id}`,
  };
}

export interface RunningApi {
  process: ChildProcess;
  base: string;
  /** SIGTERM, resolved once the process has exited. */
  stop: () => Promise<void>;
}

const benchPrefix = () => `bench:${new URL(ownerDatabaseUrl()).pathname.slice(1)}:`;

/**
 * Starts bench/server.ts (the API plus its floor routes) on `port` with `env` on top; resolves once /healthz answers
 * (within `waitSeconds`: a machine busy with other work starts it slowly).
 */
export async function startApi(
  port: number,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  waitSeconds = 30,
): Promise<RunningApi> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...nodeArgs, 'bench/server.ts'], {
    // a Redis key prefix of the benchmark database's own: usage counted in Redis belongs to one database
    env: { ...process.env, PORT: String(port), LOG_LEVEL: 'warn', REDIS_KEY_PREFIX: benchPrefix(), ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = () => child.kill('SIGTERM');
  process.on('exit', kill);
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      // not up yet
    }
    if (i > waitSeconds * 5) throw new Error('the API did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    process: child,
    base,
    stop: async () => {
      kill();
      await exited;
    },
  };
}
