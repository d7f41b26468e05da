// Read replicas (DATABASE_REPLICA_URLS): the router behind `app.sql` when replicas are configured. Each read goes to
// the least busy replica in rotation (ties taken in turn), or to the primary when none is; a read that fails on a
// replica because the server could not answer it (connection refused or lost, shutdown, recovery conflict) is run
// once more on another server. A monitor per process measures each replica's lag every interval and keeps a replica
// out of rotation while it is unreachable, not a replica, or further behind than REPLICA_MAX_LAG_MS.
// `app.primarySql` runs on the primary only, for the reads that must see every committed write.
import type { FastifyBaseLogger } from 'fastify';
import type postgres from 'postgres';
import type { Counter, Histogram, Registry } from 'prom-client';
import { failureOf } from './failures.ts';
import { queryMetrics, serverGauges } from './replica-metrics.ts';

type Sql = postgres.Sql;
type Build = (sql: Sql) => PromiseLike<unknown>;

/** How a query ended: answered, refused by the server (bad input, a raised error), or not answered by the server. */
type Outcome = 'ok' | 'error' | 'connection_error' | 'recovery_conflict';

/** A WAL position ('16/B374D848') as a number that orders like the position. */
export function parseLsn(text: string): bigint {
  const [hi, lo] = text.split('/');
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

interface Server {
  name: string;
  sql: Sql;
  inFlight: number;
  duration: Histogram.Internal<'server'>;
  outcomes: Record<Outcome, Counter.Internal>;
}

interface Replica extends Server {
  monitor: Sql;
  inRotation: boolean;
  /** Why it is out of rotation ('' while in). */
  reason: string;
  /** Seconds since the newest primary position it was seen to have replayed was current; null until measured. */
  lagSeconds: number | null;
  replayed: bigint | null;
  paused: boolean;
  checking: boolean;
  /** False once a check or a read could not reach it, until a check reaches it again. */
  reachable: boolean;
}

export interface ReplicaStatus {
  server: string;
  inRotation: boolean;
  lagSeconds: number | null;
  /** Why it is out of rotation; null while in. */
  reason: string | null;
  replayPaused: boolean;
}

export interface RouterOptions {
  primary: Sql;
  /** A one-connection pool on the primary for the monitor, so its checks never queue behind requests. */
  primaryMonitor: Sql;
  /** Labelled replica1, replica2... in this order (metrics and logs never show a URL). */
  replicas: { sql: Sql; monitor: Sql }[];
  maxLagMs: number;
  registry: Registry;
  log: FastifyBaseLogger;
  poolSize: number;
}

/** How long a monitor check may take before its server counts as unreachable. */
const CHECK_TIMEOUT_MS = 2000;
/** How long the primary's WAL positions are remembered: the largest lag measured exactly. */
const SAMPLES_KEPT_MS = 600_000;

function within<T>(query: PromiseLike<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    Promise.resolve(query).finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]);
}

/**
 * A query of the router: a thenable like postgres.js's own (run when first awaited, once), whose statement is built
 * on the server that runs it; as a value inside another query of the router it is a fragment, built on that one's
 * server.
 */
class Routed implements PromiseLike<unknown> {
  #promise: Promise<unknown> | undefined;
  constructor(
    private readonly router: ReadRouter,
    private readonly pinned: boolean,
    public build: Build,
  ) {}
  #run() {
    return (this.#promise ??= this.pinned ? this.router.onPrimary(this.build) : this.router.read(this.build));
  }
  then<A = unknown, B = never>(
    onFulfilled?: ((value: unknown) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#run().then(onFulfilled, onRejected);
  }
  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null) {
    return this.#run().catch(onRejected);
  }
  finally(onFinally?: (() => void) | null) {
    return this.#run().finally(onFinally);
  }
  execute() {
    void this.#run().catch(() => {});
    return this;
  }
  /** postgres.js's result modifiers, applied on whichever server runs the query. */
  values() {
    return this.#modify((q) => q.values());
  }
  raw() {
    return this.#modify((q) => q.raw());
  }
  simple() {
    return this.#modify((q) => q.simple());
  }
  #modify(change: (query: postgres.PendingQuery<postgres.Row[]>) => PromiseLike<unknown>) {
    const build = this.build;
    this.build = (sql) => change(build(sql) as postgres.PendingQuery<postgres.Row[]>);
    return this;
  }
}

const isTemplate = (value: unknown): value is TemplateStringsArray =>
  Array.isArray(value) && Array.isArray((value as unknown as TemplateStringsArray).raw);

export class ReadRouter {
  readonly primary: Server;
  readonly replicas: Replica[];
  /** Reads spread over the replicas with the primary as the fallback (postgres.js's call shape). */
  readonly readSql: Sql;
  /** Reads and writes on the primary, counted in the same metrics. */
  readonly primarySql: Sql;
  private readonly primaryMonitor: Sql;
  private readonly maxLagMs: number;
  private readonly log: FastifyBaseLogger;
  private readonly retries: Counter<'from' | 'to'>;
  /** The primary's WAL write position over time, oldest first: [when it was asked for, the position]. */
  private samples: { at: number; lsn: bigint }[] = [];
  private turn = 0;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  readonly intervalMs: number;
  /**
   * How far behind the primary a replica in rotation may be at most: the lag allowed at its last check, plus the time
   * since (an interval, and a check's timeout).
   */
  readonly maxStaleMs: number;

  constructor(opts: RouterOptions) {
    const { queries, duration, retries } = queryMetrics(opts.registry);
    this.retries = retries;
    const server = (name: string, sql: Sql): Server => ({
      name,
      sql,
      inFlight: 0,
      duration: duration.labels(name),
      outcomes: {
        ok: queries.labels(name, 'ok'),
        error: queries.labels(name, 'error'),
        connection_error: queries.labels(name, 'connection_error'),
        recovery_conflict: queries.labels(name, 'recovery_conflict'),
      },
    });
    this.primary = server('primary', opts.primary);
    this.replicas = opts.replicas.map((r, i) => ({
      ...server(`replica${i + 1}`, r.sql),
      monitor: r.monitor,
      inRotation: false,
      reason: 'not checked yet',
      lagSeconds: null,
      replayed: null,
      paused: false,
      checking: false,
      reachable: true,
    }));
    this.primaryMonitor = opts.primaryMonitor;
    this.maxLagMs = opts.maxLagMs;
    this.log = opts.log;
    // a quarter of the allowed lag, between 0.1 and 1 s: a replica over it is out within about 1.25 times the limit
    this.intervalMs = Math.min(1000, Math.max(100, Math.floor(opts.maxLagMs / 4)));
    this.maxStaleMs = opts.maxLagMs + this.intervalMs + CHECK_TIMEOUT_MS;

    serverGauges(opts.registry, [this.primary, ...this.replicas], this.replicas, opts.poolSize);

    this.readSql = this.sqlShape(false);
    this.primarySql = this.sqlShape(true);
  }

  /**
   * postgres.js's `sql` as seen by the code: tagged templates and `sql.unsafe` are routed; helpers that build values
   * (`sql.json`, `sql.array`, `sql(list)`...) come from the primary's pool, since they hold no connection; and
   * everything that holds a connection or a session (`begin`, `reserve`, `listen`, `notify`) runs on the primary.
   */
  private sqlShape(pinned: boolean): Sql {
    const primary = this.primary.sql;
    const call = (first: unknown, ...rest: unknown[]) => {
      if (!isTemplate(first)) return (primary as unknown as (...a: unknown[]) => unknown)(first, ...rest);
      return new Routed(this, pinned, (sql) =>
        sql(
          first,
          ...(rest.map((v) => (v instanceof Routed ? v.build(sql) : v)) as postgres.ParameterOrFragment<never>[]),
        ),
      );
    };
    const own: Record<PropertyKey, unknown> = {
      unsafe: (text: string, params?: postgres.ParameterOrJSON<never>[], options?: postgres.UnsafeQueryOptions) =>
        new Routed(this, pinned, (sql) => sql.unsafe(text, params, options)),
      end: () => this.close(),
    };
    return new Proxy(call, {
      get: (_target, prop) => (Object.hasOwn(own, prop) ? own[prop] : Reflect.get(primary, prop)),
    }) as unknown as Sql;
  }

  /** The least busy replica in rotation other than `exclude`, ties taken in turn; else the primary. */
  private pick(exclude?: Server): Server {
    const n = this.replicas.length;
    this.turn = (this.turn + 1) % n;
    let best: Replica | undefined;
    for (let i = 0; i < n; i++) {
      const r = this.replicas[(this.turn + i) % n]!;
      if (r.inRotation && r !== exclude && (!best || r.inFlight < best.inFlight)) best = r;
    }
    return best ?? this.primary;
  }

  private async exec(server: Server, build: Build): Promise<unknown> {
    server.inFlight++;
    const started = performance.now();
    try {
      const result = await build(server.sql);
      server.outcomes.ok.inc();
      return result;
    } catch (err) {
      server.outcomes[failureOf(err) ?? 'error'].inc();
      throw err;
    } finally {
      server.inFlight--;
      server.duration.observe((performance.now() - started) / 1000);
    }
  }

  /** A read: on a replica, and once more on another server when that one could not answer it. */
  async read(build: Build): Promise<unknown> {
    const first = this.pick();
    if (first === this.primary) return this.exec(first, build);
    try {
      return await this.exec(first, build);
    } catch (err) {
      const failure = failureOf(err);
      if (failure === null) throw err;
      if (failure === 'connection_error') {
        (first as Replica).reachable = false;
        this.setRotation(first as Replica, false, `query failed: ${(err as Error).message}`);
      }
      const second = this.pick(first);
      this.retries.inc({ from: first.name, to: second.name });
      return this.exec(second, build);
    }
  }

  onPrimary(build: Build): Promise<unknown> {
    return this.exec(this.primary, build);
  }

  status(): ReplicaStatus[] {
    return this.replicas.map((r) => ({
      server: r.name,
      inRotation: r.inRotation,
      lagSeconds: r.lagSeconds,
      reason: r.inRotation ? null : r.reason,
      replayPaused: r.paused,
    }));
  }

  private setRotation(r: Replica, inRotation: boolean, reason: string) {
    const changed = r.inRotation !== inRotation;
    r.inRotation = inRotation;
    r.reason = reason;
    if (!changed) return;
    if (inRotation) this.log.info({ server: r.name, lagSeconds: r.lagSeconds }, 'read replica back in rotation');
    else this.log.warn({ server: r.name, reason }, 'read replica taken out of rotation');
  }

  /**
   * The replica's lag, in seconds: how long ago the newest moment was whose committed transactions it has all
   * replayed. From the primary's WAL positions sampled over time: if it has replayed the position the primary had at
   * time t, it holds every transaction committed before t (a commit is flushed, so the write position read after t
   * is past it), and lags at most now - t. That bound alone is as coarse as the sampling (a replica a few
   * milliseconds behind the newest sample is a whole interval behind the one before), so while the replica has WAL
   * left to replay the age of the last transaction it replayed (`replayAge`: its clock minus the commit's time on
   * the primary) bounds it too, and the smaller bound is the lag. `now() - pg_last_xact_replay_timestamp()` alone is
   * wrong on an idle primary, where it grows with nothing to replay: here it only ever lowers the sampled bound.
   * While replay is paused (pg_wal_replay_pause()) the primary's position moves on and both bounds grow. A replica
   * behind every sample kept is reported as behind the oldest one.
   */
  private lagOf(replayed: bigint, now: number, replayAge: number | null): number | null {
    if (this.samples.length === 0) return null;
    let sampled = (now - this.samples[0]!.at) / 1000;
    for (let i = this.samples.length - 1; i >= 0; i--) {
      const s = this.samples[i]!;
      if (s.lsn <= replayed) {
        sampled = (now - s.at) / 1000;
        if (i === this.samples.length - 1) return sampled; // caught up with the newest sample
        break;
      }
    }
    return replayAge === null ? sampled : Math.max(0, Math.min(sampled, replayAge));
  }

  private async check(r: Replica, sampled: boolean) {
    if (r.checking) return; // the last check is still waiting for its answer (its timeout decides)
    r.checking = true;
    try {
      const [row] = await within(
        r.monitor<{ recovery: boolean; replayed: string | null; paused: boolean; age: number | null }[]>`
          SELECT pg_is_in_recovery() AS recovery, pg_last_wal_replay_lsn()::text AS replayed,
                 pg_is_wal_replay_paused() AS paused,
                 extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8 AS age`,
        CHECK_TIMEOUT_MS,
      );
      r.reachable = true;
      if (!row?.recovery || row.replayed === null) {
        this.setRotation(r, false, 'not a replica (not in recovery)');
        return;
      }
      r.replayed = parseLsn(row.replayed);
      r.paused = row.paused;
      // without a position of the primary from this round (the primary is unreachable) the lag stays as it was
      if (sampled) r.lagSeconds = this.lagOf(r.replayed, Date.now(), row.age);
      const lagMs = (r.lagSeconds ?? 0) * 1000;
      if (lagMs > this.maxLagMs) {
        const why = `${(lagMs / 1000).toFixed(1)} s behind the primary, over REPLICA_MAX_LAG_MS`;
        this.setRotation(r, false, row.paused ? `${why} (WAL replay is paused)` : why);
      } else this.setRotation(r, true, '');
    } catch (err) {
      r.reachable = false;
      if (sampled && r.replayed !== null) r.lagSeconds = this.lagOf(r.replayed, Date.now(), null);
      this.setRotation(r, false, `unreachable: ${(err as Error).message}`);
    } finally {
      r.checking = false;
    }
  }

  /** One round of the monitor: the primary's WAL position, then every replica's. */
  async tick(): Promise<void> {
    const at = Date.now();
    let sampled = false;
    try {
      const [row] = await within(
        this.primaryMonitor<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`,
        CHECK_TIMEOUT_MS,
      );
      this.samples.push({ at, lsn: parseLsn(row!.lsn) });
      let drop = 0;
      while (drop < this.samples.length - 1 && this.samples[drop]!.at < at - SAMPLES_KEPT_MS) drop++;
      if (drop > 0) this.samples = this.samples.slice(drop);
      sampled = true;
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'replica monitor: the primary did not answer');
    }
    await Promise.all(this.replicas.map((r) => this.check(r, sampled)));
  }

  /** Checks every replica once, then every interval until close. */
  async start(): Promise<void> {
    await this.tick();
    const loop = () => {
      this.ticking = this.tick().finally(() => {
        this.ticking = undefined;
        if (this.timer) this.timer = setTimeout(loop, this.intervalMs).unref();
      });
    };
    this.timer = setTimeout(loop, this.intervalMs).unref();
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.ticking;
    // postgres.js waits out the timeout for a connection the server closed under it: a replica last seen
    // unreachable has nothing to finish, and its pool is closed at once
    const pools = [this.primary.sql, this.primaryMonitor, ...this.replicas.map((r) => r.monitor)];
    const lost = this.replicas.filter((r) => !r.reachable).map((r) => r.sql);
    pools.push(...this.replicas.filter((r) => r.reachable).map((r) => r.sql));
    await Promise.all(lost.map((p) => p.end({ timeout: 0 })));
    await Promise.all(pools.map((p) => p.end({ timeout: 5 })));
  }
}
