// One Redis script call per turn of the event loop (lua/turn.lua): the settlements of the requests answered in it,
// then the admissions of the requests it read. One command to encode and decode, one write, one read and one script
// run, however many requests the turn parsed and answered. It is sent from setImmediate, right after the poll phase
// that read those requests (a lone request waits for nothing); every waiting admission awaits its batch's one
// promise and reads its own four values.
import type { Redis } from 'ioredis';
import { TURN } from './scripts.ts';
import { calendar } from './periods.ts';

/** ok (1 admitted, 0 refused, -1 reload the balance), the pend field reserved, the window count, ms until a slot frees. */
export type AdmitReply = [ok: number, field: string, count: number, resetMs: number];

/** Admissions sent in one script call at most; more in one turn of the event loop go in several calls. */
const ADMIT_BATCH_MAX = 256;
/**
 * Settlements wait up to this long for an admission to ride with (one script call for both, and the admission does
 * not queue in Redis behind a settlement of its own), then go alone. Nothing reads them sooner: usage reads and trial
 * caps send them first, and an admission carries them to Redis before it reads a balance.
 */
const SETTLE_DELAY_MS = 5;

interface AdmitBatch {
  /** One argument per admission (see lua/turn.lua). */
  args: string[];
  promise: Promise<(string | number)[]>;
  resolve: (out: (string | number)[]) => void;
  reject: (err: unknown) => void;
}

export class Turns {
  private readonly redis: Redis & { meterTurn: (...args: (string | number)[]) => Promise<(string | number)[]> };
  private batch: AdmitBatch | null = null;
  /** Settlements waiting for the turn's call, one argument each: "<charge 1|0>|<request id>|<usage>". */
  private settling: string[] = [];
  private scheduled = false;
  private settleTimer: NodeJS.Timeout | null = null;
  /** The last call: calls on one connection run in order, so once it has run, every earlier one has too. */
  private last: Promise<void> = Promise.resolve();

  /**
   * `shared` is duplicated: each turn's call has a connection of its own (same options, 1 s timeout included), so a
   * request never waits behind other metering traffic (ioredis keeps one pipeline in flight per connection). Turns
   * are already batched, so it does not pipeline.
   */
  constructor(
    shared: Redis,
    private readonly keyPrefix: string,
    private readonly batchUs: number,
    private readonly onSettleError: (err: Error, requests: number) => void,
  ) {
    const redis = shared.duplicate({ enableAutoPipelining: false });
    redis.on('error', () => {}); // reported by the shared connection; a failed admission fails open
    redis.defineCommand('meterTurn', { numberOfKeys: 0, lua: TURN });
    this.redis = redis as typeof this.redis;
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
    if (b === null && settled.length === 0) return this.last;
    this.batch = null;
    this.settling = [];
    const period = calendar(Date.now()).period;
    const args = [this.keyPrefix, period, this.batchUs, settled.length, ...settled, ...(b?.args ?? [])];
    this.last = this.redis.meterTurn(...args).then(
      (out) => b?.resolve(out),
      (err: Error) => {
        b?.reject(err); // the admissions fail open
        // The reservations stay in Redis and the reaper refunds them: the client is not charged for these.
        if (settled.length > 0) this.onSettleError(err, settled.length);
      },
    );
    return this.last;
  };

  /** One admission ("subject|client id|now_ms|rpm|ver|period|request id|grant field|free"), batched with the turn's. */
  async admit(arg: string): Promise<AdmitReply> {
    const b = (this.batch ??= this.newBatch());
    const at = b.args.push(arg) * 4 - 4;
    if (b.args.length >= ADMIT_BATCH_MAX) void this.send();
    else this.schedule();
    const out = await b.promise;
    return [Number(out[at]), String(out[at + 1]), Number(out[at + 2]), Number(out[at + 3])];
  }

  /** One settlement ("<charge 1|0>|<request id>|<usage>"), sent with the next admission or within SETTLE_DELAY_MS. */
  settle(line: string) {
    this.settling.push(line);
    if (this.settling.length >= ADMIT_BATCH_MAX) void this.send();
    else this.settleTimer ??= setTimeout(this.send, SETTLE_DELAY_MS);
  }

  close() {
    this.redis.disconnect();
  }

  private schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.send);
  }

  private newBatch(): AdmitBatch {
    const b = { args: [] } as unknown as AdmitBatch;
    b.promise = new Promise((resolve, reject) => {
      b.resolve = resolve;
      b.reject = reject;
    });
    return b;
  }
}
