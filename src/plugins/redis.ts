// Redis (ioredis) as `app.redis`: hot counters only; every command gives up after a second so callers can fail open.
// One factory for every client the project makes (the API, the operator CLI, tests, benchmarks): a plain REDIS_URL,
// or the master of a Redis Sentinel deployment (REDIS_SENTINELS), followed across failovers. With Sentinels,
// `app.redisFailover` also tells the metering while a failover is promoting a replica (docs/metering.md#failover).
import fp from 'fastify-plugin';
import { Redis, type RedisOptions } from 'ioredis';
import { localRedisUrl } from '../db-url.ts';

declare module 'fastify' {
  interface FastifyInstance {
    redis: Redis;
    /** With REDIS_SENTINELS: the failovers under way, as the Sentinels announce them; else null. */
    redisFailover: FailoverWatch | null;
  }
}

/** Where Redis is: a URL, or Sentinels that name the master (then the URL gives only credentials, database, TLS). */
export interface RedisConnection {
  url: string;
  /** host:port of each Sentinel, comma-separated. */
  sentinels?: string;
  /** The master's name in the Sentinels' configuration. */
  sentinelName?: string;
  sentinelPassword?: string;
}

/** The connection the settings describe (the decoded configuration, or the environment for the CLIs). */
export function redisConnection(settings: {
  REDIS_URL?: string;
  REDIS_PORT?: string;
  REDIS_SENTINELS?: string;
  REDIS_SENTINEL_NAME?: string;
  REDIS_SENTINEL_PASSWORD?: string;
}): RedisConnection {
  return {
    url: settings.REDIS_URL || localRedisUrl(settings),
    sentinels: settings.REDIS_SENTINELS || undefined,
    sentinelName: settings.REDIS_SENTINEL_NAME || 'florida',
    sentinelPassword: settings.REDIS_SENTINEL_PASSWORD || undefined,
  };
}

/** "host:port, [::1]:port" as ioredis wants Sentinels. */
export function parseSentinels(list: string): { host: string; port: number }[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => {
      const at = s.lastIndexOf(':');
      return { host: s.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(s.slice(at + 1)) };
    });
}

/** Resolves true once `redis` is connected, false after `ms` (a client from createRedis refuses commands until then). */
export function whenReady(redis: Redis, ms: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** A READONLY error: this connection still talks to a master that a failover made a replica. */
const isReadOnly = (err: Error) => err.message.startsWith('READONLY');

export function createRedis(connection: RedisConnection | string, keyPrefix: string): Redis {
  const conn = typeof connection === 'string' ? { url: connection } : connection;
  const common: RedisOptions = {
    keyPrefix,
    commandTimeout: 1000,
    connectTimeout: 1000,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    lazyConnect: false,
    enableAutoPipelining: true,
    retryStrategy: (times) => Math.min(times * 200, 2000),
    // reconnect (through the Sentinels: to the new master); the command itself fails, and its caller fails open
    reconnectOnError: (err) => (isReadOnly(err) ? 1 : false),
  };
  if (!conn.sentinels) return new Redis(conn.url, common);
  const url = new URL(conn.url);
  const db = Number(url.pathname.slice(1) || '0');
  return new Redis({
    ...common,
    sentinels: parseSentinels(conn.sentinels),
    name: conn.sentinelName ?? 'florida',
    role: 'master',
    sentinelPassword: conn.sentinelPassword,
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: Number.isInteger(db) ? db : 0,
    ...(url.protocol === 'rediss:' ? { tls: {}, enableTLSForSentinelMode: true } : {}),
    // a Sentinel that does not answer within a second is skipped for the next one
    sentinelCommandTimeout: 1000,
    // every Sentinel unreachable: ask them all again, soon, for as long as it takes (commands fail open meanwhile)
    sentinelRetryStrategy: (times) => Math.min(times * 100, 1000),
    // the master lost: ask the Sentinels again quickly, as a failover takes about down-after-milliseconds
    retryStrategy: (times) => Math.min(times * 100, 1000),
    // Not ioredis's failoverDetector: a +switch-master that comes while the connection is being made again ends it
    // for good (status 'end'). The API's FailoverWatch moves its connections instead; others (the CLI) leave a
    // demoted master when it drops them or answers READONLY.
  });
}

/** A hold lasts at most this long, whatever the Sentinels say (a failover that never ends, a message lost). */
const HOLD_MAX_MS = 10_000;

/**
 * The failovers of one master, from the Sentinels' announcements (their pub/sub channels). From the moment a Sentinel
 * is about to promote a replica (+failover-state-send-slaveof-noone) until the switch is announced (+switch-master),
 * the old master still takes writes that the new one will never have: `holds` says so for each tracked connection
 * then, and after the switch until that connection has connected again (to the new master), at most HOLD_MAX_MS; the
 * metering sends no write that must last meanwhile. At the switch, every tracked connection still on another server
 * is dropped, to connect again through the Sentinels, and one already on the new master is taken as following it.
 */
export class FailoverWatch {
  /** Events seen, in order: a connection ready after the switch's event is on the new master. */
  private seq = 0;
  private holdSince: number | null = null;
  private switchSeq = Infinity;
  private readonly readySeq = new WeakMap<Redis, number>();
  private readonly tracked = new Set<Redis>();
  private readonly subscribers: Redis[];

  constructor(conn: RedisConnection, onEvent: (event: string, message: string) => void = () => {}) {
    const name = conn.sentinelName ?? 'florida';
    const channels = [
      '+failover-state-send-slaveof-noone',
      '+switch-master',
      '-failover-abort-no-good-slave',
      '-failover-abort-not-elected',
    ];
    this.subscribers = parseSentinels(conn.sentinels ?? '').map(({ host, port }) => {
      const sub = new Redis({
        host,
        port,
        password: conn.sentinelPassword,
        connectTimeout: 1000,
        retryStrategy: (times) => Math.min(times * 200, 2000),
      });
      sub.on('error', () => {}); // a Sentinel down: the others still tell
      sub.subscribe(...channels).catch(() => {});
      sub.on('message', (channel: string, message: string) => {
        // "<type> <name> <ip> <port> @ <master> <ip> <port>", "<master> <old ip> <old port> <new ip> <new port>",
        // "master <master> <ip> <port>"
        const master = channel.startsWith('+failover-state')
          ? / @ (\S+) /.exec(message)?.[1]
          : channel === '+switch-master'
            ? message.split(' ')[0]
            : message.split(' ')[1];
        if (master !== name) return;
        onEvent(channel, message);
        this.seq++;
        if (channel === '+failover-state-send-slaveof-noone') {
          this.holdSince = Date.now();
          this.switchSeq = Infinity;
        } else if (channel === '+switch-master') {
          // Every Sentinel announces the switch, each when it learns of it: a connection already on the new master
          // follows it, whichever announcement comes first.
          this.holdSince ??= Date.now();
          this.switchSeq = this.seq;
          const [, , , ip, port] = message.split(' ');
          for (const redis of this.tracked) {
            if (redis.status !== 'ready') continue;
            const on = `${redis.stream.remoteAddress?.replace(/^::ffff:/, '')}:${redis.stream.remotePort}`;
            if (on === `${ip}:${port}`) this.readySeq.set(redis, this.seq);
            else redis.disconnect(true);
          }
        } else {
          this.holdSince = null; // aborted: the master stays
        }
      });
      return sub;
    });
  }

  /** Follows `redis`'s connections, for `holds` and to move them at a switch. */
  track(redis: Redis) {
    this.tracked.add(redis);
    redis.on('end', () => this.tracked.delete(redis));
    redis.on('ready', () => this.readySeq.set(redis, ++this.seq));
    if (redis.status === 'ready') this.readySeq.set(redis, ++this.seq);
  }

  /** Whether `redis` (tracked) may be connected to a master a failover is replacing: what it writes may be lost. */
  holds(redis: Redis): boolean {
    if (this.holdSince === null) return false;
    if (Date.now() - this.holdSince > HOLD_MAX_MS) {
      this.holdSince = null;
      return false;
    }
    return (this.readySeq.get(redis) ?? 0) < this.switchSeq;
  }

  close() {
    for (const sub of this.subscribers) sub.disconnect();
  }
}

export default fp<RedisConnection & { keyPrefix: string }>(
  async (app, opts) => {
    const redis = createRedis(opts, opts.keyPrefix);
    redis.on('error', (err) => app.log.warn({ err: err.message }, 'redis error'));
    let failover: FailoverWatch | null = null;
    if (opts.sentinels) {
      // which server the Sentinels named master, at start and after each failover
      redis.on('ready', () =>
        app.log.info({ master: `${redis.stream.remoteAddress}:${redis.stream.remotePort}` }, 'redis master connected'),
      );
      failover = new FailoverWatch(opts, (event, message) => app.log.warn({ event, message }, 'redis failover'));
      failover.track(redis);
    }
    app.decorate('redis', redis);
    app.decorate('redisFailover', failover);
    app.addHook('onClose', async () => {
      redis.disconnect();
      failover?.close();
    });
  },
  { name: 'redis' },
);
