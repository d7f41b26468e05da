// What the HTTP benchmarks that run against a started API share: the load generator (wrk, or the autocannon CLI when
// asked for, each in a process of its own so it does not share the server's event loop), a free port, and the
// CPU time of local processes from /proc, and which processes are Redis and the database's backends.
import { execFile, execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { promisify } from 'node:util';
import type postgres from 'postgres';
import { loadConfig } from '../src/config.ts';
import { createRedis, redisConnection, whenReady } from '../src/plugins/redis.ts';

const run = promisify(execFile);

export type Tool = 'wrk' | 'autocannon';

export interface Load {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
}

const hasWrk = () => {
  try {
    execSync('command -v wrk', { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/**
 * `wrk` (the default: `make bench-overhead` installs it) or `autocannon`, asked for by name: a benchmark never falls
 * back to a coarser tool on its own. Throws on anything else or on a wrk that is missing.
 */
export function pickTool(choice: string): Tool {
  if (choice !== 'wrk' && choice !== 'autocannon') throw new Error(`--tool must be wrk or autocannon, not ${choice}`);
  if (choice === 'wrk' && !hasWrk()) {
    throw new Error('wrk is not installed: `bash scripts/services.sh install-bench` (or apt-get install wrk)');
  }
  return choice;
}

/** The finest latency step the tool reports, in ms: wrk prints two decimals (1.23ms), autocannon whole ms. */
export const latencyResolutionMs = (tool: Tool) => (tool === 'wrk' ? 0.01 : 1);

/**
 * 'met' or 'missed' for "value below target", or a refusal to judge when the target is finer than what the tool
 * could measure (a whole-millisecond median says nothing about a 0.3 ms target).
 */
export function judge(value: number, target: number, resolutionMs: number): string {
  if (target < resolutionMs) {
    return `not judged: latencies were measured in steps of ${resolutionMs} ms, coarser than the ${target} ms target`;
  }
  return value < target ? 'met' : 'missed';
}

/** How the report names the load generator. */
export const toolName = (tool: Tool) =>
  tool === 'wrk'
    ? `wrk (${execSync('wrk -v 2>&1 || true').toString().split('\n')[0]!.trim()}), 1 thread`
    : 'the autocannon CLI';

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/** CPU time (user + system, ms) of local processes, or NaN when /proc does not show them. */
const TICK_MS = 1000 / Number(execSync('getconf CLK_TCK').toString().trim() || 100);
export function cpuMs(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {
      return NaN;
    }
  }
  return ticks * TICK_MS;
}

/** wrk prints latencies as 812.00us, 1.23ms or 1.02s. */
const wrkMs = (s: string) => {
  const m = /^([\d.]+)(us|ms|s)$/.exec(s.trim());
  if (!m) throw new Error(`wrk: cannot read the latency ${s}`);
  return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
};

/** `conns` keep-alive connections on `url` for `secs` seconds; throws on any non-2xx answer or socket error. */
export async function generateLoad(
  tool: Tool,
  url: string,
  conns: number,
  secs: number,
  authorization?: string,
): Promise<Load> {
  if (tool === 'wrk') {
    const header = authorization ? ['-H', `Authorization: ${authorization}`] : [];
    const { stdout } = await run('wrk', ['-t1', `-c${conns}`, `-d${secs}s`, '--latency', ...header, url], {
      maxBuffer: 1 << 20,
    });
    const bad = /Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1];
    const socketErrors = /Socket errors: (.*)/.exec(stdout)?.[1];
    if (bad || socketErrors) throw new Error(`${bad ?? 0} non-2xx, socket errors: ${socketErrors ?? 'none'}`);
    return {
      requests: Number(/(\d+) requests in/.exec(stdout)![1]),
      rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)![1]),
      p50: wrkMs(/^\s+50%\s+(\S+)$/m.exec(stdout)![1]!),
      p99: wrkMs(/^\s+99%\s+(\S+)$/m.exec(stdout)![1]!),
    };
  }
  const header = authorization ? ['-H', `authorization=${authorization}`] : [];
  const { stdout } = await run(
    process.execPath,
    ['node_modules/autocannon/autocannon.js', '-j', '-c', String(conns), '-d', String(secs), ...header, url],
    { maxBuffer: 16 << 20 },
  );
  const r = JSON.parse(stdout) as {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
  };
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${r.non2xx} non-2xx, ${r.errors} errors`);
  return { requests: r.requests.total, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
}

export type Component = 'api' | 'redis' | 'pg';
export const COMPONENTS: Component[] = ['api', 'redis', 'pg'];

/**
 * Returns a function giving the pids of each component now: the API process, the Redis server (when it answers
 * with its pid: it is local) and the backends of `owner`'s database other than `owner`'s own.
 */
export async function componentPids(apiPid: number, owner: postgres.Sql) {
  const redis = createRedis(redisConnection(loadConfig({ ...process.env, LOG_LEVEL: 'warn' })), '');
  redis.on('error', () => {});
  let redisPid = NaN;
  try {
    if (!(await whenReady(redis, 2000))) throw new Error('Redis did not answer');
    redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
  } catch {
    // no Redis CPU column
  }
  redis.disconnect();
  return async (): Promise<Record<Component, number[]>> => ({
    api: [apiPid],
    redis: Number.isFinite(redisPid) ? [redisPid] : [],
    pg: (
      await owner<
        { pid: number }[]
      >`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`
    ).map((r) => r.pid),
  });
}

/** Runs `generate` and returns its load with the CPU µs each component (`pids`, read just before) spent a request. */
export async function withCpu<L extends Pick<Load, 'requests'>>(
  pids: () => Promise<Record<Component, number[]>>,
  generate: () => Promise<L>,
): Promise<L & { cpu: Record<Component, number> }> {
  const of = await pids();
  const before = COMPONENTS.map((c) => cpuMs(of[c]));
  const load = await generate();
  const cpu = Object.fromEntries(
    COMPONENTS.map((c, k) => [c, ((cpuMs(of[c]) - before[k]!) * 1000) / load.requests]),
  ) as Record<Component, number>;
  return { ...load, cpu };
}

/** The checkout's short commit, with "plus uncommitted changes" when src/ or bench/ differ from it. */
export function describeCommit(): string {
  try {
    const git = (args: string) => execSync(`git ${args}`, { stdio: ['ignore', 'pipe', 'ignore'] }).toString();
    const commit = git('rev-parse --short HEAD').trim();
    return git('status --porcelain -- src bench').length > 0 ? `${commit} plus uncommitted changes` : commit;
  } catch {
    return 'unknown'; // not a checkout
  }
}
