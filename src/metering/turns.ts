// One Redis script call per turn of the event loop (lua/turn.lua): the settlements of the requests answered in it,
// then the admissions of the requests it read. One command to encode and decode, one write, one read and one script
// run, however many requests the turn parsed and answered. It is sent from setImmediate, right after the poll phase
// that read those requests (a lone request waits for nothing); every waiting admission awaits its batch's one
// promise and reads its own four values.
import type { Redis } from 'ioredis';
import { TURN } from './scripts.ts';
import { calendar } from './periods.ts';
import type { ScriptTimer } from './metrics.ts';
import type { FailoverWatch } from '../plugins/redis.ts';

/**
 * ok (1 admitted, 0 refused, -1 reload the balance), the pend field reserved, the window count, ms until a slot frees,
 * and whether it ran during a failover's hold (see TurnsOptions.failover): then its reservation will not last.
 */
export type AdmitReply = [ok: number, field: string, count: number, resetMs: number, held: boolean];

/** Admissions sent in one script call at most; more in one turn of the event loop go in several calls. */
const ADMIT_BATCH_MAX = 256;
/**
 * Settlements wait up to this long for an admission to ride with (one script call for both, and the admission does
 * not queue in Redis behind a settlement of its own), then go alone. Nothing reads them sooner: usage reads and trial
 * caps send them first, and an admission carries them to Redis before it reads a balance.
 */
const SETTLE_DELAY_MS = 5;
/**
 * Settlements whose call failed (Redis down, or failing over) are sent again every second for a minute: settling is
 * idempotent (a reservation settled before, on a server that kept it, is skipped), and a settlement that reaches the
 * new master charges what the old one may have lost. After that the reaper refunds the reservation.
 */
const SETTLE_RETRY_MS = 1000;
const SETTLE_RETRY_FOR_MS = 60_000;

/** An admission's argument with no in-flight cap (its fifth field). */
function uncapped(arg: string): string {
  const fields = arg.split('|');
  fields[4] = String(Number.MAX_SAFE_INTEGER);
  return fields.join('|');
}

interface AdmitBatch {
  /** One argument per admission (see lua/turn.lua). */
  args: string[];
  /** Sent during a failover's hold. */
  held: boolean;
  promise: Promise<(string | number)[]>;
  resolve: (out: (string | number)[]) => void;
  reject: (err: unknown) => void;
}

export interface TurnsOptions {
  /** A settlement call failed: `requests` settlements, sent again later (unless `final`: given up). */
  onSettleError: (err: Error, requests: number, final: boolean) => void;
  /** Settlements that reached Redis, with the tags given to `settle` (charges only: refunds have none). */
  onSettled?: (tags: string[]) => void;
  timeScript?: ScriptTimer;
  /**
   * With Sentinels: while a failover may leave this connection on the old master, whose writes from then on the new
   * master will never have, settlements are not sent (they wait for the retry, which reaches the new master), and
   * admissions are, their answers marked `held`: the old master's windows and balances are still right for the check,
   * but the reservation is lost with it, so the caller charges such a request in Postgres directly. The in-flight cap
   * is not checked on a hold: the releases that would free its slots wait for the new master, so it could only refuse
   * a client inside its limit.
   */
  failover?: FailoverWatch | null;
}

export class Turns {
  private readonly redis: Redis & { meterTurn: (...args: (string | number)[]) => Promise<(string | number)[]> };
  private batch: AdmitBatch | null = null;
  /**
   * Settlements waiting for the turn's call, one argument each: "<charge 1|0>|<request id>|<usage>", or a release
   * "r|<request id>|<client id>".
   */
  private settling: string[] = [];
  /** A tag per settlement (for the charged-credits metric), '' for none. */
  private settlingTags: string[] = [];
  private scheduled = false;
  private settleTimer: NodeJS.Timeout | null = null;
  /** Settlements whose call failed, waiting for the retry timer: lines, tags and when each first failed. */
  private retrying = { lines: [] as string[], tags: [] as string[], since: [] as number[] };
  private retryTimer: NodeJS.Timeout | null = null;
  /** The last call: calls on one connection run in order, so once it has run, every earlier one has too. */
  private last: Promise<void> = Promise.resolve();
  private readonly opts: TurnsOptions;

  /**
   * `shared` is duplicated: each turn's call has a connection of its own (same options, 1 s timeout included), so a
   * request never waits behind other metering traffic (ioredis keeps one pipeline in flight per connection). Turns
   * are already batched, so it does not pipeline.
   */
  constructor(
    shared: Redis,
    private readonly keyPrefix: string,
    private readonly batchUs: number,
    opts: TurnsOptions | TurnsOptions['onSettleError'],
  ) {
    this.opts = typeof opts === 'function' ? { onSettleError: opts } : opts;
    const redis = shared.duplicate({ enableAutoPipelining: false });
    redis.on('error', () => {}); // reported by the shared connection; a failed admission fails open
    redis.defineCommand('meterTurn', { numberOfKeys: 0, lua: TURN });
    this.redis = redis as typeof this.redis;
    this.opts.failover?.track(redis);
  }

  /** Resolves once the connection is up, or after `ms` (until it is, admissions fail open). */
  ready(ms: number): Promise<void> {
    if (this.redis.status === 'ready') return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.redis.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  get pendingSettlements() {
    return this.settling.length;
  }

  /** Sends what this turn has; resolves once every call sent so far has run. */
  send = (): Promise<void> => {
    this.scheduled = false;
    if (this.settleTimer !== null) {
      clearTimeout(this.settleTimer);
      this.settleTimer = null;
    }
    const b = this.batch;
    const settled = this.settling;
    const tags = this.settlingTags;
    if (b === null && settled.length === 0) return this.last;
    this.batch = null;
    this.settling = [];
    this.settlingTags = [];
    this.last = this.call(settled, tags, null, b);
    return this.last;
  };

  /**
   * One admission ("subject|client id|now_ms|rpm|in-flight cap|ver|period|request id|grant field|free"), batched with
   * the turn's.
   */
  async admit(arg: string): Promise<AdmitReply> {
    const b = (this.batch ??= this.newBatch());
    const at = b.args.push(arg) * 4 - 4;
    if (b.args.length >= ADMIT_BATCH_MAX) void this.send();
    else this.schedule();
    const out = await b.promise;
    return [Number(out[at]), String(out[at + 1]), Number(out[at + 2]), Number(out[at + 3]), b.held];
  }

  /**
   * One settlement ("<charge 1|0>|<request id>|<usage>"), sent with the next admission or within SETTLE_DELAY_MS;
   * `tag` is handed to onSettled once it has reached Redis.
   */
  settle(line: string, tag = '') {
    this.settling.push(line);
    this.settlingTags.push(tag);
    if (this.settling.length >= ADMIT_BATCH_MAX) void this.send();
    else this.settleTimer ??= setTimeout(this.send, SETTLE_DELAY_MS);
  }

  /** The request's answer is done or abandoned: it no longer counts as in flight; sent as a settlement is. */
  release(requestId: string, clientId: string) {
    this.settle(`r|${requestId}|${clientId}`);
  }

  close() {
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.redis.disconnect();
  }

  /**
   * One script call: settlements (the turn's, or retries, which have `since`: when each first failed) and the
   * turn's admissions.
   */
  private call(settled: string[], tags: string[], since: number[] | null, b: AdmitBatch | null): Promise<void> {
    if (this.opts.failover?.holds(this.redis)) {
      if (settled.length > 0) this.again(new Error('Redis failover under way'), settled, tags, since, false);
      if (b === null) return Promise.resolve();
      b.held = true;
      b.args = b.args.map(uncapped);
      settled = [];
    }
    const period = calendar(Date.now()).period;
    const args = [this.keyPrefix, period, this.batchUs, settled.length, ...settled, ...(b?.args ?? [])];
    const done = this.opts.timeScript?.('turn');
    return this.redis.meterTurn(...args).then(
      (out) => {
        done?.();
        b?.resolve(out);
        if (settled.length > 0) this.opts.onSettled?.(tags);
      },
      (err: Error) => {
        b?.reject(err); // the admissions fail open
        if (settled.length > 0) this.again(err, settled, tags, since, since === null);
      },
    );
  }

  /**
   * Settlements whose call failed or was held back, to send again; until settled, their reservations stay in Redis,
   * and after a minute they are left to the reaper. `log`: report the failure (the first of these settlements).
   */
  private again(err: Error, settled: string[], tags: string[], since: number[] | null, log: boolean) {
    if (log) this.opts.onSettleError(err, settled.length, false);
    const now = Date.now();
    let dropped = 0;
    for (const [i, line] of settled.entries()) {
      const first = since?.[i] ?? now;
      if (now - first >= SETTLE_RETRY_FOR_MS) {
        dropped++;
        continue;
      }
      this.retrying.lines.push(line);
      this.retrying.tags.push(tags[i] ?? '');
      this.retrying.since.push(first);
    }
    if (dropped > 0) this.opts.onSettleError(err, dropped, true);
    if (this.retrying.lines.length > 0) {
      this.retryTimer ??= setTimeout(this.retry, SETTLE_RETRY_MS);
      this.retryTimer.unref();
    }
  }

  /** Sends the settlements whose call failed again, in calls of at most ADMIT_BATCH_MAX. */
  private retry = () => {
    this.retryTimer = null;
    const { lines, tags, since } = this.retrying;
    this.retrying = { lines: [], tags: [], since: [] };
    for (let i = 0; i < lines.length; i += ADMIT_BATCH_MAX) {
      const end = i + ADMIT_BATCH_MAX;
      this.last = this.call(lines.slice(i, end), tags.slice(i, end), since.slice(i, end), null);
    }
  };

  private schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.send);
  }

  private newBatch(): AdmitBatch {
    const b = { args: [], held: false } as unknown as AdmitBatch;
    b.promise = new Promise((resolve, reject) => {
      b.resolve = resolve;
      b.reject = reject;
    });
    return b;
  }
}
