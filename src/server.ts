// Serving: listen, graceful shutdown on SIGINT/SIGTERM, rolling restarts on SIGHUP. With WORKERS > 1 the calling
// process forks that many API processes sharing the port (node:cluster) and only supervises them: auth and metering
// are exact across processes, so nothing else changes.
//
// Shutdown (docs/operations.md#restarts): /readyz answers 503 at once; the process stops accepting connections; every
// answer from then on carries `Connection: close`, and a connection left idle is closed after IDLE_CLOSE_MS; requests
// in flight finish up to SHUTDOWN_TIMEOUT_MS (then they are cut). Only then does the app close: usage settled by the
// last answers is flushed to Postgres (metering's onClose), the pools close, the webhook workers stop, exit 0.
// Fastify's own close is not enough alone: with Node 20 it drops idle keep-alive connections at once (a request the
// client was sending on one is lost) and answers 503 to requests arriving on busy ones.
//
// Connections (docs/security.md): at most MAX_CONNECTIONS at once and MAX_CONNECTIONS_PER_ADDRESS from one client
// address; past either a new connection is closed at once, so no client, signed in or not, can use up the process's
// file descriptors. A keep-alive connection idle for KEEP_ALIVE_TIMEOUT_MS is closed.
//
// Rolling restart (WORKERS > 1): SIGHUP to the primary replaces the workers one at a time: a new one is forked and,
// once it listens, an old one gets SIGTERM and is waited for, so the port is always served.
import cluster, { type Worker } from 'node:cluster';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import net, { type Socket } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import type { FastifyPluginAsync } from 'fastify';
import { trustProxyOption, type Config } from './config.ts';
import { buildApp } from './app.ts';
import { shutdownMetrics } from './plugins/ops-metrics.ts';
import { webhookSettings } from './webhooks/settings.ts';
import { WebhookWorker } from './webhooks/worker.ts';
import { deliveryMetrics } from './webhooks/metrics.ts';

/**
 * A connection without a request in flight since the shutdown began (or since its last answer, if later) is closed
 * after this. Not at once: a client may be sending its next request on it right now, and closing under that request
 * loses it; within this time the request arrives and is answered, with `Connection: close`.
 */
const IDLE_CLOSE_MS = 1000;
/** How long closing the app (the usage flush, the pools, the webhook workers) may take past the deadline. */
const CLOSE_GRACE_MS = 15_000;
/** File descriptors kept out of MAX_CONNECTIONS's reach: the pools, Redis, logs, files. */
const FD_RESERVE = 256;
/** A refused connection is logged at most this often. */
const REFUSED_LOG_MS = 60_000;
/** The message a worker sends its primary once it listens. */
const LISTENING = 'florida:listening';

/**
 * Serves the API with `plugins` registered after its own routes (bench/server.ts adds its floor routes). The log goes
 * to `logStream` when given (src/main.ts: readable lines in development), else to stdout as JSON lines.
 */
export async function serve(
  config: Config,
  plugins: FastifyPluginAsync[] = [],
  logStream?: NodeJS.WritableStream,
): Promise<void> {
  if (config.WORKERS > 1 && cluster.isPrimary) supervise(config, logStream);
  else await serveOne(config, plugins, logStream);
}

/** The process's open-files limit (Linux), or null when it cannot be read. */
export function openFilesLimit(): number | null {
  try {
    const match = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

export interface ConnectionLimits {
  /** Connections at once; the process's open-files limit lowers it (less FD_RESERVE). */
  total: number;
  /** Connections at once from one address; 0: no such cap. */
  perAddress: number;
  keepAliveTimeoutMs: number;
}

/**
 * This process's connections and the requests on them, so that a shutdown lets every started request finish; and the
 * connection limits (ConnectionLimits).
 */
export class Connections {
  private readonly open = new Map<Socket, { busy: number; idleSince: number }>();
  private readonly perAddress = new Map<string, number>();
  inFlight = 0;
  /** Connections closed at once because their address had too many. */
  refused = 0;
  private closing = false;
  private refusedLoggedAt = 0;

  constructor(server: Server, limits: ConnectionLimits, log?: { warn: (o: object, msg: string) => void }) {
    const fds = openFilesLimit();
    server.maxConnections = fds === null ? limits.total : Math.max(1, Math.min(limits.total, fds - FD_RESERVE));
    if (server.maxConnections < limits.total) {
      log?.warn(
        { maxConnections: server.maxConnections, openFilesLimit: fds },
        'MAX_CONNECTIONS lowered to fit the open-files limit (ulimit -n)',
      );
    }
    server.keepAliveTimeout = limits.keepAliveTimeoutMs;
    server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress ?? '';
      const count = (this.perAddress.get(address) ?? 0) + 1;
      if (limits.perAddress > 0 && count > limits.perAddress) {
        this.refused++;
        socket.destroy();
        if (Date.now() - this.refusedLoggedAt >= REFUSED_LOG_MS) {
          this.refusedLoggedAt = Date.now();
          log?.warn({ address, limit: limits.perAddress }, 'connection refused: too many from this address');
        }
        return;
      }
      this.perAddress.set(address, count);
      this.open.set(socket, { busy: 0, idleSince: Date.now() });
      socket.once('close', () => {
        this.open.delete(socket);
        const left = (this.perAddress.get(address) ?? 1) - 1;
        if (left > 0) this.perAddress.set(address, left);
        else this.perAddress.delete(address);
      });
    });
    // before Fastify's listener, so that the header is set before anything answers
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      const state = this.open.get(req.socket);
      if (state) state.busy++;
      this.inFlight++;
      if (this.closing) res.setHeader('connection', 'close');
      res.once('close', () => {
        this.inFlight--;
        if (state) {
          state.busy--;
          state.idleSince = Date.now();
        }
      });
    });
  }

  /**
   * Stops accepting connections and waits until every connection has closed (answers now close theirs; idle ones are
   * closed after IDLE_CLOSE_MS) or the deadline passes, when the rest are cut. Returns how many requests were cut.
   */
  async drain(server: Server, deadline: number): Promise<number> {
    this.closing = true;
    const since = Date.now();
    // the listening socket only: http.Server#close would also drop every idle keep-alive connection at once
    net.Server.prototype.close.call(server);
    for (;;) {
      const now = Date.now();
      for (const [socket, state] of this.open) {
        if (state.busy === 0 && now - Math.max(state.idleSince, since) >= IDLE_CLOSE_MS) socket.destroy();
      }
      if (this.open.size === 0 || now >= deadline) break;
      await sleep(20);
    }
    const cut = this.inFlight;
    for (const socket of this.open.keys()) socket.destroy();
    return cut;
  }
}

/** The connection caps of a configuration: no per-address cap by default behind a proxy, whose address all share. */
export const connectionLimits = (config: Config) => ({
  total: config.MAX_CONNECTIONS,
  perAddress: config.MAX_CONNECTIONS_PER_ADDRESS ?? (trustProxyOption(config.TRUST_PROXY) ? 0 : 256),
  keepAliveTimeoutMs: config.KEEP_ALIVE_TIMEOUT_MS,
});

async function serveOne(
  config: Config,
  plugins: FastifyPluginAsync[],
  logStream: NodeJS.WritableStream | undefined,
): Promise<void> {
  const app = await buildApp(config, { plugins, logStream });
  const connections = new Connections(app.server, connectionLimits(config), app.log);
  shutdownMetrics(app.metrics, () => ({
    inFlight: connections.inFlight,
    shuttingDown: app.lifecycle.shuttingDown,
  }));
  let listening = false;
  let webhooks: Promise<WebhookWorker | null> = Promise.resolve(null); // unless WEBHOOK_WORKER=false

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.lifecycle.shuttingDown = true;
    app.log.info(
      { signal, inFlight: connections.inFlight, timeoutMs: config.SHUTDOWN_TIMEOUT_MS },
      'shutting down: accepting no connections, finishing the requests in flight',
    );
    const force = setTimeout(() => {
      app.log.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS + CLOSE_GRACE_MS);
    force.unref();
    // deliveries being sent finish meanwhile (graphile-worker's graceful stop)
    const webhooksStopped = webhooks.then((w) => w?.stop());
    if (listening) {
      const cut = await connections.drain(app.server, Date.now() + config.SHUTDOWN_TIMEOUT_MS);
      if (cut > 0) app.log.warn({ cut }, 'shutdown deadline passed: requests still in flight were cut');
    }
    // every answer has been sent and settled: the usage flush of metering's onClose records all of it
    await app.close();
    await webhooksStopped;
    app.log.info('shut down');
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      shutdown(signal).catch((err: Error) => {
        console.error(`shutdown failed: ${err.message}`);
        process.exit(1);
      });
    });
  }
  // a worker's SIGHUP is its primary's business (a terminal hangup reaches the whole process group)
  process.on('SIGHUP', () => {
    if (!cluster.isWorker) app.log.warn('SIGHUP ignored: a rolling restart needs WORKERS > 1');
  });

  try {
    await app.listen({ host: config.HOST, port: config.PORT });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    console.error(
      e.code === 'EADDRINUSE' ? `port ${config.PORT} is taken: stop that program or set PORT=<free port>` : e.message,
    );
    process.exit(1);
  }
  if (closing) return;
  listening = true;
  if (cluster.isWorker) process.send?.(LISTENING);
  if (config.WEBHOOK_WORKER) {
    webhooks = WebhookWorker.start(
      webhookSettings(config),
      app.log.child({ component: 'webhooks' }),
      deliveryMetrics(app.metrics),
    ).catch((err: Error) => {
      console.error(`webhook workers could not start: ${err.message}`);
      process.exit(1);
    });
  }
}

/** The primary of WORKERS processes: forks them, replaces them one by one on SIGHUP, stops them all on SIGTERM. */
function supervise(config: Config, logStream: NodeJS.WritableStream | undefined): void {
  const options = { level: config.LOG_LEVEL };
  const log = (logStream ? pino(options, logStream) : pino(options)).child({ component: 'primary' });
  let stopping = false;
  /** Workers a rolling restart told to stop: their exit is expected. */
  const replaced = new Set<Worker>();
  const live = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
  const stopAll = () => {
    stopping = true;
    for (const w of live()) w.process.kill('SIGTERM');
  };

  for (let i = 0; i < config.WORKERS; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (replaced.delete(worker)) {
      if (code !== 0) log.warn({ pid: worker.process.pid, code, signal }, 'a replaced worker exited uncleanly');
    } else if (!stopping) {
      // a worker that dies on its own takes the service down with it, loudly, rather than serving at half strength
      log.error({ pid: worker.process.pid, code, signal }, 'API worker exited; stopping');
      process.exitCode = 1;
      stopAll();
    }
    if (stopping && live().length === 0) process.exit();
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      log.info({ signal }, 'stopping the workers');
      stopAll();
    });
  }

  /** Resolves once `w` listens; rejects if it exits first (the exit handler has then stopped the service). */
  const listens = (w: Worker) =>
    new Promise<void>((resolve, reject) => {
      const onMessage = (message: unknown) => {
        if (message !== LISTENING) return;
        w.off('message', onMessage);
        resolve();
      };
      w.on('message', onMessage);
      w.once('exit', () => reject(new Error(`worker ${w.process.pid} exited before it listened`)));
    });

  const rollingRestart = async () => {
    const old = live();
    log.info({ workers: old.map((w) => w.process.pid) }, 'rolling restart');
    for (const w of old) {
      if (stopping) return;
      if (w.isDead()) continue;
      const fresh = cluster.fork();
      await listens(fresh);
      if (stopping) return;
      replaced.add(w);
      const exited = once(w, 'exit');
      w.process.kill('SIGTERM');
      await exited;
      log.info({ stopped: w.process.pid, started: fresh.process.pid }, 'worker replaced');
    }
    log.info({ workers: live().map((w) => w.process.pid) }, 'rolling restart done');
  };
  let restarting = false;
  let again = false;
  process.on('SIGHUP', () => {
    if (stopping) return;
    if (restarting) {
      again = true; // once this one is done, replace the workers it started too
      return;
    }
    restarting = true;
    void (async () => {
      try {
        do {
          again = false;
          await rollingRestart();
        } while (again && !stopping);
      } catch (err) {
        log.error({ err: (err as Error).message }, 'rolling restart stopped');
      } finally {
        restarting = false;
      }
    })();
  });
}
