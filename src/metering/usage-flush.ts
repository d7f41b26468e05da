// Usage from Redis to Postgres: closed usage batches (lua/take.lua) recorded by meter.flush_usage as api_meter and
// then acknowledged (lua/ack.lua); requests admitted without Redis (fail open) recorded in batches of their own; the
// reaper of reservations whose process died; and the gate that keeps a usage read from counting a batch twice.
// With Redis replicas (Sentinel), a batch is recorded only once a replica has its seal (WAIT): after a failover the
// promoted replica never writes into a batch Postgres already has, nor holds one Postgres has without its last counts
// (docs/metering.md#failover).
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { Sql } from '../plugins/db.ts';
import { ACK, REAP, TAKE } from './scripts.ts';
import { periodOf } from './periods.ts';
import type { ScriptTimer } from './metrics.ts';
import type { FailoverWatch } from '../plugins/redis.ts';

/** Usage batches a flush reads from Redis and records in Postgres at once. */
const BATCHES_PER_STEP = 100;
/** How long a flush waits for a replica to confirm the seal of the batches it took. */
const WAIT_MS = 500;
/**
 * Unconfirmed batches are held back (taken and sealed again by the next flush) until no replica has confirmed
 * anything for this long: then Redis has no replica to fail over to (the last one died), rather than a failover in
 * progress (the replica just promoted, this server not yet told), and the batches are recorded without confirmation.
 */
const UNCONFIRMED_RECORD_AFTER_MS = 60_000;

/** Charged requests of one kind (n of them), as meter.flush_usage records them. */
export interface UsageRow {
  batch_id: string;
  client_id: string;
  key_id: string;
  mode: string;
  surface: string;
  bucket: string;
  pack_id: string | null;
  period: string;
  day: string;
  n: number;
}

/**
 * Charged requests counted per batch, client, key, mode, surface, bucket, pack, period and UTC day: the rows a flush
 * records. `name` names a fail-open batch; once a flush has taken it, it is sealed.
 */
class UsageCounts {
  private readonly counts = new Map<string, UsageRow>();
  sealed = false;
  constructor(readonly name = '') {}
  get size() {
    return this.counts.size;
  }
  add(usage: UsageRow) {
    const { batch_id, client_id, key_id, mode, surface, bucket, pack_id, period, day } = usage;
    const key = [batch_id, client_id, key_id, mode, surface, bucket, pack_id, period, day].join('|');
    const row = this.counts.get(key);
    if (row) row.n += usage.n;
    else this.counts.set(key, { ...usage });
  }
  rows(): UsageRow[] {
    return [...this.counts.values()];
  }
}

/** The ledger bucket of a pend field (m:, t:, o:, p:, or c). */
export const bucketOf = (field: string) =>
  field.startsWith('m:')
    ? 'monthly'
    : field.startsWith('t:')
      ? 'test'
      : field.startsWith('o:')
        ? 'overage'
        : field.startsWith('p:')
          ? 'pack'
          : 'credits';

/**
 * Usage reads (Redis's pending count, then Postgres's) against the flush's step that writes a batch to Postgres and
 * then acknowledges it in Redis: were that step to fall between a read's two halves, the batch would count twice.
 * Reads share the gate; the step waits for the reads in progress and holds new ones back.
 */
class UsageReadGate {
  private reads = 0;
  private readsDone: (() => void) | null = null;
  private moving: Promise<void> | null = null;

  /** Resolves once no step is moving usage (call `leave` after the read). */
  async enter() {
    while (this.moving) await this.moving;
    this.reads++;
  }
  leave() {
    if (--this.reads === 0 && this.readsDone) {
      this.readsDone();
      this.readsDone = null;
    }
  }
  async move(step: () => Promise<void>) {
    let release = () => {};
    this.moving = new Promise((resolve) => (release = resolve));
    try {
      if (this.reads > 0) await new Promise<void>((resolve) => (this.readsDone = resolve));
      await step();
    } finally {
      this.moving = null;
      release();
    }
  }
}

type TakeReply = [nowUs: number, openCloses: number, batches: [name: string, counts: string[]][]];
type Scripted = Redis & {
  meterReap: (...args: (string | number)[]) => Promise<number>;
  meterTake: (...args: (string | number)[]) => Promise<TakeReply>;
  meterAck: (...args: (string | number)[]) => Promise<number>;
};

export interface UsageFlushOptions {
  redis: Redis;
  /** The api_meter connection: the only one that may record usage. */
  meterSql: Sql;
  keyPrefix: string;
  /** Sends every settlement so far to Redis: a drain must see them in the usage batches. */
  sendTurn: () => Promise<void>;
  /**
   * Replicas that must confirm a batch's seal (WAIT) before it is recorded; 0 (the default) for a Redis without
   * replicas. Set, the flush has a connection of its own (WAIT blocks the connection it is sent on).
   */
  waitReplicas?: number;
  /**
   * Fewer replicas than `waitReplicas` confirmed the seal of the batches taken within WAIT_MS: `recorded` false, they
   * are held back; true, recorded all the same (none has confirmed anything for UNCONFIRMED_RECORD_AFTER_MS).
   */
  onReplicationTimeout?: (batches: number, recorded: boolean) => void;
  timeScript?: ScriptTimer;
  /** With Sentinels: no batch is taken while a failover may leave the flush's connection on the old master. */
  failover?: FailoverWatch | null;
}

export class UsageFlush {
  readonly gate = new UsageReadGate();
  private readonly redis: Scripted;
  /** The connection that takes and acknowledges batches: `redis`, or with waitReplicas one of its own. */
  private readonly flushRedis: Scripted;
  private readonly processName = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  /** Charged requests admitted without Redis, waiting for the flush, in batches of their own name. */
  private readonly unmetered: UsageCounts[] = [];
  private unmeteredBatches = 0;
  private running: Promise<number> | null = null;
  private again: Promise<number> | null = null;
  private lastReap = 0;
  /** When a flush last completed (Date.now()), for the flush-lag metric. */
  lastSuccess = Date.now();
  /** Since when no replica has confirmed a seal (null: the last WAIT was confirmed). */
  private unconfirmedSince: number | null = null;

  constructor(private readonly opts: UsageFlushOptions) {
    const define = (redis: Redis) => {
      redis.defineCommand('meterReap', { numberOfKeys: 0, lua: REAP });
      redis.defineCommand('meterTake', { numberOfKeys: 0, lua: TAKE });
      redis.defineCommand('meterAck', { numberOfKeys: 0, lua: ACK });
      return redis as Scripted;
    };
    this.redis = define(opts.redis);
    if ((opts.waitReplicas ?? 0) > 0) {
      const own = opts.redis.duplicate();
      own.on('error', () => {}); // reported by the shared connection; the flush fails and is retried
      this.flushRedis = define(own);
      opts.failover?.track(own);
    } else {
      this.flushRedis = this.redis;
    }
  }

  /** Closes the flush's own connection, if it has one. */
  close() {
    if (this.flushRedis !== this.redis) this.flushRedis.disconnect();
  }

  /** A charged request admitted without Redis: recorded by the next flush, straight from this process. */
  addUnmetered(row: Omit<UsageRow, 'batch_id' | 'n'>) {
    let open = this.unmetered.at(-1);
    if (!open || open.sealed) {
      this.unmetered.push((open = new UsageCounts(`unmetered:${this.processName}:${++this.unmeteredBatches}`)));
    }
    open.add({ ...row, batch_id: open.name, n: 1 });
  }

  /**
   * Records usage in Postgres; draining, everything settled before the call. A flush already running may have taken
   * its batches before the caller's events reached Redis, so a drain asked for meanwhile waits for it and then runs
   * one more (shared by every drain asked for during the same run); a periodic flush just joins the running one.
   */
  flush(drain: boolean): Promise<number> {
    if (this.running === null) {
      this.running = this.flushOnce(drain).finally(() => {
        this.running = null;
      });
      return this.running;
    }
    if (!drain) return this.running;
    this.again ??= this.running
      .catch(() => 0)
      .then(() => {
        this.again = null;
        return this.flush(true);
      });
    return this.again;
  }

  /** Refunds reservations older than 5 minutes (their process died before settling). */
  async reapOrphans(): Promise<number> {
    this.lastReap = Date.now();
    let reaped = 0;
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${this.opts.keyPrefix}res:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) {
        const done = this.opts.timeScript?.('reap');
        reaped += await this.redis.meterReap(periodOf(Date.now()), ...keys);
        done?.();
      }
    } while (cursor !== '0');
    return reaped;
  }

  /**
   * The oldest closed batches, sealed (lua/take.lua). With waitReplicas, in one pipeline with a WAIT, so that the seal
   * has reached a replica (the one a failover would promote) before the batches are recorded in Postgres.
   */
  private async take(): Promise<TakeReply> {
    const done = this.opts.timeScript?.('take');
    const waitReplicas = this.opts.waitReplicas ?? 0;
    if (waitReplicas === 0) {
      const taken = await this.flushRedis.meterTake(this.opts.keyPrefix, BATCHES_PER_STEP);
      done?.();
      return taken;
    }
    if (this.opts.failover?.holds(this.flushRedis))
      throw new Error('Redis failover under way: usage recorded after it');
    const pipeline = this.flushRedis.pipeline() as ReturnType<Redis['pipeline']> & {
      meterTake: (...args: (string | number)[]) => ReturnType<Redis['pipeline']>;
    };
    const replies = await pipeline.meterTake(this.opts.keyPrefix, BATCHES_PER_STEP).wait(waitReplicas, WAIT_MS).exec();
    done?.();
    const [[takeErr, taken], [waitErr, confirmed]] = replies as [[Error | null, TakeReply], [Error | null, number]];
    if (takeErr) throw takeErr;
    if (waitErr) throw waitErr;
    if (confirmed >= waitReplicas) {
      this.unconfirmedSince = null;
      return taken;
    }
    this.unconfirmedSince ??= Date.now();
    if (taken[2].length === 0) return taken;
    const recordAnyway = Date.now() - this.unconfirmedSince >= UNCONFIRMED_RECORD_AFTER_MS;
    this.opts.onReplicationTimeout?.(taken[2].length, recordAnyway);
    if (recordAnyway) return taken;
    throw new Error(`no Redis replica confirmed ${taken[2].length} usage batches within ${WAIT_MS} ms: held back`);
  }

  /** Records counted requests in Postgres (usage_daily and the ledger); returns how many were new. */
  private async record(rows: UsageRow[]): Promise<number> {
    const sql = this.opts.meterSql;
    return (await sql<{ n: number }[]>`SELECT meter.flush_usage(${sql.json(rows as never)}) AS n`)[0]?.n ?? 0;
  }

  private async flushOnce(drain: boolean): Promise<number> {
    let unmeteredWritten = 0;
    // Postgres first: requests admitted while Redis was away are recorded even while it still is. A batch that fails
    // is kept whole and sent again under the same name (it may have been recorded before the error reached us).
    if (this.unmetered.length > 0) {
      const batches = this.unmetered.splice(0);
      for (const batch of batches) batch.sealed = true;
      try {
        const rows = batches.flatMap((batch) => batch.rows());
        unmeteredWritten += await this.record(rows);
        // make every process reload these clients' balances from Postgres
        for (const clientId of new Set(rows.map((row) => row.client_id))) {
          await this.redis.del(`st:${clientId}`).catch(() => {});
        }
      } catch (err) {
        this.unmetered.unshift(...batches);
        throw err;
      }
    }
    await this.opts.sendTurn(); // every settlement so far has run: the usage batches hold its counts
    if (Date.now() - this.lastReap > 60_000) await this.reapOrphans();
    const written = await this.flushBatches(drain);
    this.lastSuccess = Date.now();
    return unmeteredWritten + written;
  }

  private async flushBatches(drain: boolean): Promise<number> {
    let written = 0;
    // Record every closed batch: this process's, any other's, and one whose flush died before acknowledging it. To
    // drain (flushing on demand or on close), also wait for the batch open when the flush began to close.
    let drainUntil: number | null = null;
    for (;;) {
      const [nowUs, openCloses, batches] = await this.take();
      drainUntil ??= drain ? openCloses : -1;
      if (batches.length === 0) {
        if (openCloses < 0 || openCloses > drainUntil) return written;
        await sleep((openCloses - nowUs) / 1000 + 1);
        continue;
      }
      const counts = new UsageCounts();
      for (const [batch, kv] of batches) {
        for (let i = 0; i < kv.length; i += 2) {
          const [clientId, keyId, mode, surface, period, day, field] = kv[i]!.split('|') as string[];
          counts.add({
            batch_id: batch,
            client_id: clientId!,
            key_id: keyId!,
            mode: mode!,
            surface: surface!,
            bucket: bucketOf(field!),
            pack_id: field!.startsWith('p:') ? field!.slice(2) : null,
            period: period!,
            day: day!,
            n: Number(kv[i + 1]),
          });
        }
      }
      await this.gate.move(async () => {
        if (counts.size > 0) written += await this.record(counts.rows());
        const done = this.opts.timeScript?.('ack');
        await this.flushRedis.meterAck(this.opts.keyPrefix, ...batches.map(([batch]) => batch));
        done?.();
      });
    }
  }
}
