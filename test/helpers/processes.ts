// The processes a test starts, stopped however the test ends. When it passes or fails, its teardown stops them. When
// the test process dies first (tap's timeout sends SIGALRM, then SIGKILL, which no handler in the test outlives), the
// kernel stops them: a child runs under `setpriv --pdeathsig KILL` (util-linux), and a cleanup command runs in a
// watcher that waits for the test process's end of a pipe to close.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';

interface Teardown {
  teardown: (fn: () => unknown) => void;
}

const running = new Set<ChildProcess>();

/** SIGKILL to the child's process group: the child and whatever it started (an API primary's workers). */
function killGroup(child: ChildProcess) {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // the whole group is gone
  }
}

// a setup that throws ends the process before any teardown runs
process.on('exit', () => {
  for (const child of running) killGroup(child);
});

/**
 * `command` as a child of the test, in a process group of its own, killed with that group at teardown unless it has
 * exited by then, and killed by the kernel if the test process dies first. Its pid is the command's own (setpriv
 * executes it), so signals a test sends reach it.
 */
export function spawnChild(t: Teardown, command: string, args: string[], options: SpawnOptions = {}): ChildProcess {
  const child = spawn('setpriv', ['--pdeathsig', 'KILL', '--', command, ...args], { ...options, detached: true });
  running.add(child);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  void exited.then(() => running.delete(child));
  t.teardown(async () => {
    const alive = child.exitCode === null && child.signalCode === null;
    killGroup(child); // after the leader's exit too: a worker it left behind is still in the group
    if (alive) await exited;
  });
  return child;
}

/** A command that runs when this process ends, however it ends, or earlier when asked (see `whenThisProcessEnds`). */
export interface Deferred {
  /** Runs the command now; resolves once it has succeeded. */
  now: () => Promise<void>;
}

/**
 * Runs `command` when this process ends, however it ends, for what outlives a process unless someone cleans it up (a
 * daemonized server, a database): a watcher in its own process group reads its stdin until this process's end of the
 * pipe closes, at `now()` or at this process's death, then runs the command.
 */
export function whenThisProcessEnds(command: string, args: string[], options: SpawnOptions = {}): Deferred {
  const watcher = spawn('sh', ['-c', 'cat >/dev/null; exec "$@"', 'cleanup', command, ...args], {
    stdio: ['pipe', 'ignore', 'ignore'],
    ...options,
    detached: true,
  });
  const exited = new Promise<number | null>((resolve) => watcher.once('exit', resolve));
  watcher.unref();
  (watcher.stdin as unknown as { unref: () => void }).unref();
  return {
    now: async () => {
      watcher.ref(); // until the command has run
      watcher.stdin!.end();
      const code = watcher.exitCode ?? (await exited);
      if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}`);
    },
  };
}

/** Runs `command` once the test ends, however it ends (whenThisProcessEnds); the teardown waits for it. */
export function cleanupWhenDone(t: Teardown, command: string, args: string[], options: SpawnOptions = {}) {
  const deferred = whenThisProcessEnds(command, args, options);
  t.teardown(deferred.now);
}

/**
 * `n` distinct ports of 127.0.0.1 that nothing listens on or is bound to right now (a fixed port can be held by
 * another run of the suite, or by any connection's ephemeral local port).
 */
export async function freePorts(n: number): Promise<number[]> {
  const held = await Promise.all(
    Array.from({ length: n }, async () => {
      const server = createServer();
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      return server;
    }),
  );
  const ports = held.map((server) => (server.address() as AddressInfo).port);
  await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** Whether nothing listens on `port` of 127.0.0.1. */
export async function portFree(port: number): Promise<boolean> {
  const server = createServer();
  try {
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return true;
  } catch {
    return false;
  } finally {
    server.close();
  }
}

/** Whether the process `pid` is still running (a zombie nobody has reaped yet counts as gone). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
