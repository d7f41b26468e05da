// Real Redis servers for the failover tests, started as child processes in a temporary folder and stopped when the
// test ends, however it ends (helpers/processes.ts): a primary, replicas (redis-server --replicaof) and Redis
// Sentinels (Debian's redis-sentinel, each with a generated configuration), on ports free when the test starts.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { cleanupWhenDone, spawnChild } from '../helpers/processes.ts';

export { freePorts } from '../helpers/processes.ts';

interface Teardown {
  teardown: (fn: () => unknown) => void;
}

export interface Servers {
  /** A plain client of the server on `port` (no key prefix), closed at teardown. */
  client: (port: number) => Redis;
  /** Starts redis-server on `port`, replicating `replicaOf` when given; resolves once it answers. */
  redis: (port: number, replicaOf?: number) => Promise<void>;
  /** Starts a Sentinel on `port` monitoring the master `name` on `masterPort` (quorum 2, down after 1 s). */
  sentinel: (port: number, name: string, masterPort: number) => Promise<void>;
  /** SIGKILL: the server dies at once, without a word to its replicas or the Sentinels. */
  kill: (port: number) => Promise<void>;
  /** Resolves once `check` is true, polling; fails with `what` after `ms`. */
  until: (what: string, check: () => Promise<boolean>, ms?: number) => Promise<void>;
}

const quiet = (redis: Redis) => {
  redis.on('error', () => {});
  return redis;
};

export function servers(t: Teardown): Servers {
  const dir = mkdtempSync(join(tmpdir(), 'florida-redis-failover-'));
  const children = new Map<number, ChildProcess>();
  const clients: Redis[] = [];
  // registered before the servers' own teardowns, so these run after them (tap runs teardowns last first)
  cleanupWhenDone(t, 'rm', ['-rf', dir]);
  t.teardown(() => {
    for (const c of clients) c.disconnect();
  });

  const client = (port: number) => {
    const c = quiet(new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0, retryStrategy: () => 200 }));
    clients.push(c);
    return c;
  };

  const until = async (what: string, check: () => Promise<boolean>, ms = 30_000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      if (await check().catch(() => false)) return;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(100);
    }
  };

  /** A server left on the port by an earlier run that died before its teardown is shut down first. */
  async function freePort(port: number) {
    const stale = quiet(new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 }));
    try {
      await stale.connect();
      await stale.call('SHUTDOWN', 'NOSAVE').catch(() => {});
    } catch {
      // nothing listens there
    } finally {
      stale.disconnect();
    }
  }

  async function start(port: number, command: string, args: string[]) {
    await freePort(port);
    const child = spawnChild(t, command, args, { stdio: 'ignore' });
    children.set(port, child);
    const probe = quiet(new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 }));
    try {
      await until(`${command} on ${port}`, async () => {
        if (probe.status !== 'ready') await probe.connect().catch(() => {});
        return (await probe.ping()) === 'PONG';
      });
    } finally {
      probe.disconnect();
    }
  }

  return {
    client,
    until,
    redis: async (port, replicaOf) => {
      const home = join(dir, String(port));
      mkdirSync(home, { recursive: true }); // a server killed and started again keeps its folder
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', home, '--save', '', '--appendonly', 'no'];
      args.push('--logfile', join(home, 'redis.log'));
      if (replicaOf) args.push('--replicaof', '127.0.0.1', String(replicaOf));
      await start(port, 'redis-server', args);
    },
    sentinel: async (port, name, masterPort) => {
      const home = join(dir, String(port));
      mkdirSync(home);
      const conf = join(home, 'sentinel.conf');
      writeFileSync(
        conf,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${home}`,
          `logfile ${join(home, 'sentinel.log')}`,
          `sentinel monitor ${name} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${name} 1000`,
          `sentinel failover-timeout ${name} 5000`,
          `sentinel parallel-syncs ${name} 1`,
          '',
        ].join('\n'),
      );
      await start(port, 'redis-sentinel', [conf]);
    },
    kill: async (port) => {
      const child = children.get(port);
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await once(child, 'exit');
    },
  };
}
