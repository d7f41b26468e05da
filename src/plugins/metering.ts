// Metering (Part 8): per-client sliding-window rate limit and the credit pool, admitted in one Redis round trip;
// charged only on 2xx (the reservation is refunded otherwise); usage flushed to Postgres in batches.
import fp from 'fastify-plugin';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler, onSendAsyncHookHandler } from 'fastify';
import { serializeDictionary } from 'structured-headers';
import { ApiError, prepareError, sendError, toApiError } from '../errors.ts';
import type { AuthContext, Surface } from './auth.ts';
import { ACK, INIT, REAP, TAKE, TURN } from '../metering/scripts.ts';

declare module 'fastify' {
  interface FastifyRequest {
    meter: { field: string | null; period: string; surface: Surface; subject: string; failOpen: boolean } | null;
    /** A REST admission running alongside the handler (see `speculates`); the reply waits for it in onSend. */
    admission: Promise<ApiError | null> | null;
  }
  interface FastifyInstance {
    /**
     * onRequest hook (after authenticate) that admits a request against the rate limit and the credit pool, either
     * before the handler runs or alongside it (then `awaitAdmission` holds the reply until it is decided).
     */
    meter: (surface: Surface) => onRequestAsyncHookHandler;
    /** onSend hook: waits for an admission running alongside the handler; a refusal replaces the handler's answer. */
    awaitAdmission: onSendAsyncHookHandler;
    /** Counts a failed authentication from an address: the 429 to give once an address floods, else null. */
    limitAuthFailures: (request: FastifyRequest, reply: FastifyReply) => Promise<ApiError | null>;
    /**
     * Writes every charged request settled so far (and any fail-open request) to Postgres, waiting for the usage
     * batch being written to close (at most USAGE_BATCH_MS).
     */
    flushUsage: () => Promise<number>;
    /** Admits a request or tool call: null when admitted, else the refusal to give (never sent here). */
    admitRequest: (
      request: FastifyRequest,
      reply: FastifyReply,
      surface: Surface,
      free: boolean,
    ) => Promise<ApiError | null>;
    /** Charges a 2xx answer (or refunds anything else); REST settles in onResponse, MCP per tool call. */
    settleRequest: (request: FastifyRequest, charge: boolean) => void;
    /**
     * Runs `read` with the charged requests of the client's pool this period that are still in Redis, not yet in
     * Postgres. This process's flush does not move events from Redis to Postgres while `read` runs, so a count made
     * of both never holds an event twice.
     */
    withPendingUsage: <T>(auth: AuthContext, period: string, read: (pending: number) => Promise<T>) => Promise<T>;
    /** Refunds reservations older than 5 minutes (their process died before settling); runs every minute. */
    reapOrphans: () => Promise<number>;
    /**
     * failOpen: requests admitted without Redis (it did not answer within a second); speculative: REST admissions
     * run alongside the handler; wasted: of those, the ones refused (the handler's work was thrown away).
     */
    meterStats: { failOpen: number; speculative: number; wasted: number };
  }
}

/** Routes marked `config: { free: true }` count against the rate limit but never cost a credit. */
const isFree = (request: FastifyRequest) =>
  (request.routeOptions.config as { free?: boolean } | undefined)?.free === true;
const FLUSH_MS = 1000;
/** Usage batches a flush reads from Redis and records in Postgres at once. */
const BATCHES_PER_STEP = 100;
/** Failed authentications allowed per address per minute before 429. */
export const AUTH_FAILURES_PER_MINUTE = 60;

export const periodOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);
/**
 * The UTC day (YYYY-MM-DD) and month (the period, YYYY-MM) of `now`, for the hot path: computed again only when `now`
 * leaves the day computed last.
 */
let today = { from: 0, to: -1, day: '', period: '' };
function calendar(now: number): { day: string; period: string } {
  if (now < today.from || now >= today.to) {
    const from = now - (now % 86_400_000);
    const day = new Date(from).toISOString().slice(0, 10);
    today = { from, to: from + 86_400_000, day, period: day.slice(0, 7) };
  }
  return today;
}
/** Admissions sent in one script call at most; more in one turn of the event loop go in several calls. */
const ADMIT_BATCH_MAX = 256;
/**
 * Settlements wait up to this long for an admission to ride with (one script call for both, and the admission does
 * not queue in Redis behind a settlement of its own), then go alone. Nothing reads them sooner: this process's usage
 * reads and trial caps send them first, and an admission carries them to Redis before it reads a balance.
 */
const SETTLE_DELAY_MS = 5;
/** Subjects remembered as refused last (see `speculates`); the set is cleared when it reaches this size. */
const REFUSED_MAX = 100_000;
type AdmitReply = [ok: number, field: string, count: number, resetMs: number];
/** How long a request waits for Redis before it is allowed without it (fail open, Part 8.1). */
const FAIL_OPEN_MS = 1000;
/** `work`'s value, or `fallback` once the clock passes `deadline` (ms), whichever comes first; never rejects. */
async function within<T>(work: Promise<T>, deadline: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()), fallback)));
  try {
    return await Promise.race([work.catch(() => fallback), late]);
  } finally {
    clearTimeout(timer);
  }
}
export function secondsToNextPeriod(ms: number): number {
  const d = new Date(ms);
  return Math.ceil((Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) - ms) / 1000);
}

/** Charged requests of one kind (n of them), as meter.flush_usage records them. */
interface UsageRow {
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
 * records (meter.flush_usage). `name` names a fail-open batch; once a flush has taken it, it is sealed.
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

interface Balance {
  monthly: string;
  credits: string;
  overage: string;
  packs: { id: string; remaining: number; expires_ms: number }[];
  version: string;
}

export interface MeteringOptions {
  keyPrefix: string;
  /** How long settlements write into one usage batch before the next is opened; a batch is recorded after that. */
  usageBatchMs: number;
}

export default fp<MeteringOptions>(async (app, opts) => {
  const batchUs = opts.usageBatchMs * 1000;
  const redis = app.redis;
  redis.defineCommand('meterReap', { numberOfKeys: 0, lua: REAP });
  redis.defineCommand('meterInit', { numberOfKeys: 2, lua: INIT });
  redis.defineCommand('meterTake', { numberOfKeys: 0, lua: TAKE });
  redis.defineCommand('meterAck', { numberOfKeys: 0, lua: ACK });
  type Scripted = {
    meterTurn: (...args: (string | number)[]) => Promise<(string | number)[]>;
    meterReap: (...args: (string | number)[]) => Promise<number>;
    meterInit: (...args: (string | number)[]) => Promise<number>;
    meterTake: (
      ...args: (string | number)[]
    ) => Promise<[nowUs: number, openCloses: number, batches: [name: string, counts: string[]][]]>;
    meterAck: (...args: (string | number)[]) => Promise<number>;
  };
  const r = redis as unknown as Scripted & typeof redis;
  // Each turn's script call (settlements and admissions) has a connection of its own (same options, 1 s timeout
  // included), so that a request never waits behind other metering traffic: with auto-pipelining ioredis keeps one
  // pipeline in flight per connection, and on the shared one an admission would queue behind a flush (an extra round
  // trip at the median with one client). Turns are already batched, so this one does not pipeline.
  const turns = redis.duplicate({ enableAutoPipelining: false });
  turns.on('error', () => {}); // reported by the shared connection; a failed admission fails open
  turns.defineCommand('meterTurn', { numberOfKeys: 0, lua: TURN });
  const a = turns as unknown as Scripted;
  const processName = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  const stats = { failOpen: 0, speculative: 0, wasted: 0 };
  /** Charged requests admitted without Redis, waiting for the flush, in batches of their own name. */
  const unmetered: UsageCounts[] = [];
  let unmeteredBatches = 0;
  app.decorate('meterStats', stats);
  app.decorateRequest('meter', null);
  app.decorateRequest('admission', null);

  const keysOf = (subject: string) => ({ st: `st:${subject}`, pend: `pend:${subject}` });

  async function init(auth: AuthContext, subject: string, period: string): Promise<string> {
    const [b] = await app.sql<Balance[]>`
      SELECT monthly::text, credits::text, overage::text, packs, version::text
        FROM meter.client_balance(${auth.clientId}::uuid, ${auth.mode}, ${period})`;
    if (!b) throw new Error('client vanished');
    const { st, pend } = keysOf(subject);
    const packArgs = b.packs.flatMap((p) => [p.id, p.remaining, p.expires_ms]);
    const overage = auth.mode === 'live' && auth.overage ? 1 : 0;
    await r.meterInit(st, pend, b.version, period, b.monthly, b.credits, b.overage, overage, ...packArgs);
    return b.version;
  }

  const subjectOf = (auth: AuthContext) => (auth.mode === 'test' ? `${auth.clientId}:test` : auth.clientId);

  // The admissions of one turn of the event loop and the settlements of the requests answered in it go to Redis as
  // one script call (TURN): one command to encode and decode, one write, one read and one script run, however many
  // requests the turn parsed and answered. It is sent from setImmediate, right after the poll phase that read those
  // requests (a lone request waits for nothing). Every waiting request awaits its batch's one promise and reads its
  // own four values.
  interface AdmitBatch {
    /** One argument per admission (see TURN). */
    args: string[];
    size: number;
    promise: Promise<(string | number)[]>;
    resolve: (out: (string | number)[]) => void;
    reject: (err: unknown) => void;
  }
  let batch: AdmitBatch | null = null;
  const newBatch = (): AdmitBatch => {
    const b = { args: [], size: 0 } as unknown as AdmitBatch;
    b.promise = new Promise((resolve, reject) => {
      b.resolve = resolve;
      b.reject = reject;
    });
    return b;
  };
  /** Settlements waiting for the turn's call, one argument each: "<charge 1|0>|<request id>|<usage>" (see TURN). */
  let settling: string[] = [];
  let turnScheduled = false;
  let settleTimer: NodeJS.Timeout | null = null;
  /** The last turn call: calls on one connection run in order, so once it has run, every earlier one has too. */
  let lastTurn: Promise<void> = Promise.resolve();
  /** Sends what this turn has (settlements, admissions) as one script call; resolves once every call sent has run. */
  const sendTurn = () => {
    turnScheduled = false;
    if (settleTimer !== null) {
      clearTimeout(settleTimer);
      settleTimer = null;
    }
    const b = batch;
    const settled = settling;
    if (b === null && settled.length === 0) return lastTurn;
    batch = null;
    settling = [];
    const period = calendar(Date.now()).period;
    lastTurn = a.meterTurn(opts.keyPrefix, period, batchUs, settled.length, ...settled, ...(b?.args ?? [])).then(
      (out) => b?.resolve(out),
      (err: Error) => {
        b?.reject(err); // the admissions fail open
        // The reservations stay in Redis and the reaper refunds them: the client is not charged for these.
        if (settled.length > 0) {
          app.log.error({ err: err.message, requests: settled.length }, 'could not settle metering');
        }
      },
    );
    return lastTurn;
  };
  const scheduleTurn = () => {
    if (turnScheduled) return;
    turnScheduled = true;
    setImmediate(sendTurn);
  };

  /** One admission (ADMIT_ONE in scripts.ts), batched with the others of this turn of the event loop. */
  async function admitOnce(rid: string, a: AuthContext, version: string, now: number, period: string, free: boolean) {
    const b = (batch ??= newBatch());
    const at = b.size++ * 4;
    b.args.push(
      `${subjectOf(a)}|${a.clientId}|${now}|${a.rpm}|${version}|${period}|${rid}|${a.mode === 'test' ? 't' : 'm'}|${free ? 1 : 0}`,
    );
    if (b.size >= ADMIT_BATCH_MAX) void sendTurn();
    else scheduleTurn();
    const out = await b.promise;
    return [Number(out[at]), String(out[at + 1]), Number(out[at + 2]), Number(out[at + 3])] as AdmitReply;
  }

  /**
   * Admits a request. A missing or outdated balance in Redis means the client changed (or Redis lost its data):
   * re-authenticate from Postgres (the key may be revoked, the client suspended), rebuild the balance, admit again.
   * Returns the refusal when re-authentication refused the request.
   */
  async function admit(request: FastifyRequest, reply: FastifyReply, surface: Surface, now: number, free: boolean) {
    let auth = request.auth!;
    const period = calendar(now).period;
    let result = auth.trialCapDue ? null : await admitOnce(request.id, auth, auth.creditVersion, now, period, free);
    if (result === null || result[0] === -1) {
      let refusal = await app.reauthenticate(request, reply, surface);
      if (refusal) return refusal;
      auth = request.auth!;
      if (auth.trialCapDue && auth.mode === 'live') {
        await sendTurn(); // every settlement so far has run (refunds lower what is pending)
        const pending = Number((await redis.hget(keysOf(auth.clientId).pend, 'c')) ?? 0);
        await app.meterSql`SELECT meter.apply_trial_cap(${auth.clientId}::uuid, ${pending})`;
        refusal = await app.reauthenticate(request, reply, surface);
        if (refusal) return refusal;
        auth = request.auth!;
      }
      const version = await init(auth, subjectOf(auth), period);
      result = await admitOnce(request.id, auth, version, now, period, free);
    }
    return { result, subject: subjectOf(auth), period, auth };
  }

  function setHeaders(reply: FastifyReply, limit: number, remaining: number, resetMs: number, now: number) {
    const resetSeconds = Math.max(1, Math.ceil(resetMs / 1000));
    const left = Math.max(0, remaining);
    reply.header('X-RateLimit-Limit', limit);
    reply.header('X-RateLimit-Remaining', left);
    reply.header('X-RateLimit-Reset', Math.ceil(now / 1000) + resetSeconds);
    // RFC 9651 structured field, serialized by the library (about 3 us): `default;r=<remaining>;t=<seconds>`
    const field = new Map([
      ['r', left],
      ['t', resetSeconds],
    ]);
    reply.header('RateLimit', serializeDictionary({ default: [true, field] }));
    return resetSeconds;
  }

  /**
   * Admits one request (or one MCP tool call) and sets the rate-limit headers. Returns null when admitted, else the
   * refusal to give the client (429, 402, or 401/403 from re-authentication); it never sends the reply.
   */
  async function admitRequest(
    request: FastifyRequest,
    reply: FastifyReply,
    surface: Surface,
    free: boolean,
  ): Promise<ApiError | null> {
    const now = Date.now();
    let admitted;
    try {
      admitted = await admit(request, reply, surface, now, free);
      if (admitted instanceof ApiError) return admitted;
    } catch (err) {
      stats.failOpen++;
      request.log.warn({ err: (err as Error).message }, 'metering unavailable: request allowed (fail open)');
      // Without Redis the key cache cannot be trusted to be current: check the key in Postgres.
      const refusal = await app.reauthenticate(request, reply, surface);
      if (refusal) return refusal;
      const auth = request.auth!;
      request.meter = free
        ? null
        : { field: null, period: periodOf(now), surface, subject: auth.clientId, failOpen: true };
      setHeaders(reply, auth.rpm, auth.rpm - 1, 60000, now);
      return null;
    }
    const { result, subject, period, auth } = admitted;
    const [ok, field, count, resetMs] = result;
    const resetSeconds = setHeaders(reply, auth.rpm, auth.rpm - count, resetMs, now);
    if (ok === 1) {
      refusedLast.delete(subject);
      request.meter = field === '' ? null : { field, period, surface, subject, failOpen: false };
      return null;
    }
    if (refusedLast.size >= REFUSED_MAX) refusedLast.clear();
    refusedLast.add(subject);
    if (field === 'rate') {
      reply.header('Retry-After', resetSeconds);
      return new ApiError(
        429,
        'rate_limited',
        `Rate limit of ${auth.rpm} requests per minute exceeded; retry in ${resetSeconds} seconds.`,
      );
    }
    if (auth.plan === 'free' && auth.mode === 'live') {
      return new ApiError(
        402,
        'payment_required',
        'Your free trial credits are used up. Upgrade to a paid plan (Developer and up) or buy a credit pack to continue.',
      );
    }
    const wait = secondsToNextPeriod(now);
    reply.header('Retry-After', wait);
    const what = auth.mode === 'test' ? 'The monthly quota of test keys' : 'Your monthly credits';
    return new ApiError(
      429,
      'rate_limited',
      `${what} are used up; retry in ${wait} seconds, when the next month starts, or buy a credit pack.`,
    );
  }
  app.decorate('admitRequest', admitRequest);

  // Speculative admission: the Redis round trip of a REST admission overlaps the handler's work, so a request
  // admitted (the usual case) waits for the longer of the two, not their sum. The handler's answer is held in onSend
  // until the admission is decided; a refusal replaces it (nothing is charged: only an admitted 2xx is). Refusals
  // look the same either way. A subject (client pool) whose last admission in this process was refused is admitted
  // first, before any work, until one is admitted again, so a client at its limit costs no handler work; so is a
  // free trial due its cap.
  const refusedLast = new Set<string>();
  const speculates = (auth: AuthContext) => !auth.trialCapDue && !refusedLast.has(subjectOf(auth));
  app.decorate('meter', (surface: Surface): onRequestAsyncHookHandler => async (request, reply) => {
    if (!request.auth) return;
    const admission = admitRequest(request, reply, surface, isFree(request));
    if (speculates(request.auth)) {
      stats.speculative++;
      request.admission = admission;
      admission.catch(() => {}); // awaited in onSend; a handler that throws first must not leave it unhandled
      return;
    }
    const refusal = await admission;
    if (refusal) return sendError(reply, refusal);
  });
  app.decorate('awaitAdmission', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const admission = request.admission;
    if (admission === null) return payload;
    request.admission = null;
    const refusal = await admission.catch((err: unknown) => {
      request.log.error({ err }, 'admission failed');
      return toApiError(err);
    });
    if (refusal === null) return payload;
    stats.wasted++;
    reply.header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify(prepareError(reply, refusal));
  });

  /** Charges (or refunds) the request's reservation; settling twice changes nothing. */
  function settle(request: FastifyRequest, charge: boolean) {
    const m = request.meter;
    const auth = request.auth;
    if (!m || !auth) return;
    request.meter = null;
    if (m.failOpen) {
      if (charge) {
        let open = unmetered.at(-1);
        if (!open || open.sealed) {
          unmetered.push((open = new UsageCounts(`unmetered:${processName}:${++unmeteredBatches}`)));
        }
        open.add({
          batch_id: open.name,
          client_id: auth.clientId,
          key_id: auth.keyId,
          mode: auth.mode,
          surface: m.surface,
          bucket: auth.mode === 'test' ? 'test' : 'unmetered',
          pack_id: null,
          period: m.period,
          day: calendar(Date.now()).day,
          n: 1,
        });
      }
      return;
    }
    const usage = `${auth.clientId}|${auth.keyId}|${auth.mode}|${m.surface}|${m.period}|${calendar(Date.now()).day}`;
    settling.push(`${charge ? 1 : 0}|${request.id}|${usage}`);
    if (settling.length >= ADMIT_BATCH_MAX) void sendTurn();
    else settleTimer ??= setTimeout(sendTurn, SETTLE_DELAY_MS);
  }
  app.decorate('settleRequest', settle);
  // a callback hook, not an async one: no promise per request for work that never waits
  app.addHook('onResponse', (request, reply, done) => {
    settle(request, reply.statusCode >= 200 && reply.statusCode < 300);
    done();
  });

  app.decorate('limitAuthFailures', async (request: FastifyRequest, reply: FastifyReply): Promise<ApiError | null> => {
    const now = Date.now();
    const minute = Math.floor(now / 60000);
    let count = 0;
    try {
      const key = `authfail:${request.ip}:${minute}`;
      const [[, n]] = (await redis.multi().incr(key).expire(key, 120).exec()) as [[null, number]];
      count = n;
    } catch {
      return null; // fail open
    }
    const resetMs = (minute + 1) * 60000 - now;
    const resetSeconds = setHeaders(reply, AUTH_FAILURES_PER_MINUTE, AUTH_FAILURES_PER_MINUTE - count, resetMs, now);
    if (count <= AUTH_FAILURES_PER_MINUTE) return null;
    reply.header('Retry-After', resetSeconds);
    return new ApiError(
      429,
      'rate_limited',
      `Too many failed authentications from this address; retry in ${resetSeconds} seconds.`,
    );
  });

  // Usage reads (Redis's pending count, then Postgres's) against the flush's step that writes a batch to Postgres
  // and then acknowledges it in Redis: were that step to fall between a read's two halves, the batch would count
  // twice. Reads share the gate; the step waits for the reads in progress and holds new ones back.
  let usageReads = 0;
  let readsDone: (() => void) | null = null;
  let moving: Promise<void> | null = null;
  async function moveUsage(step: () => Promise<void>) {
    let release = () => {};
    moving = new Promise((resolve) => (release = resolve));
    try {
      if (usageReads > 0) await new Promise<void>((resolve) => (readsDone = resolve));
      await step();
    } finally {
      moving = null;
      release();
    }
  }
  // The Redis half has the fail-open budget: past it, the count is Postgres's alone (requests not flushed yet are
  // missing from it; none is counted twice).
  app.decorate('withPendingUsage', async (auth, period, read) => {
    const deadline = Date.now() + FAIL_OPEN_MS;
    const gateOpen = async () => {
      if (settling.length > 0) await sendTurn(); // this process's answers so far count
      while (moving) await moving;
      return true;
    };
    if (!(await within(gateOpen(), deadline, false))) return read(0);
    usageReads++;
    try {
      const hget = redis.hget(keysOf(subjectOf(auth)).pend, `n:${period}`).then(Number, () => 0);
      return await read(await within(hget, deadline, 0));
    } finally {
      if (--usageReads === 0 && readsDone) {
        readsDone();
        readsDone = null;
      }
    }
  });

  const bucketOf = (field: string) =>
    field.startsWith('m:')
      ? 'monthly'
      : field.startsWith('t:')
        ? 'test'
        : field.startsWith('o:')
          ? 'overage'
          : field.startsWith('p:')
            ? 'pack'
            : 'credits';

  /** Records counted requests in Postgres (usage_daily and the ledger); returns how many were new. */
  const recordUsage = async (rows: UsageRow[]) =>
    (await app.meterSql<{ n: number }[]>`SELECT meter.flush_usage(${app.sql.json(rows as never)}) AS n`)[0]?.n ?? 0;

  let flushing: Promise<number> | null = null;
  let lastReap = 0;
  const reapOrphans = async () => {
    lastReap = Date.now();
    let reaped = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${opts.keyPrefix}res:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) reaped += await r.meterReap(periodOf(Date.now()), ...keys);
    } while (cursor !== '0');
    return reaped;
  };
  app.decorate('reapOrphans', reapOrphans);
  async function flushOnce(drain: boolean): Promise<number> {
    let written = 0;
    // Postgres first: requests admitted while Redis was away are recorded even while it still is. A batch that fails
    // is kept whole and sent again under the same name (it may have been recorded before the error reached us).
    if (unmetered.length > 0) {
      const batches = unmetered.splice(0);
      for (const batch of batches) batch.sealed = true;
      try {
        const rows = batches.flatMap((batch) => batch.rows());
        written += await recordUsage(rows);
        // make every process reload these clients' balances from Postgres
        for (const clientId of new Set(rows.map((row) => row.client_id))) {
          await redis.del(`st:${clientId}`).catch(() => {});
        }
      } catch (err) {
        unmetered.unshift(...batches);
        throw err;
      }
    }
    await sendTurn(); // every settlement so far has run: the usage batches hold its counts
    if (Date.now() - lastReap > 60_000) await reapOrphans();
    // Record every closed batch: this process's, any other's, and one whose flush died before acknowledging it. To
    // drain (flushing on demand or on close), also wait for the batch open when the flush began to close.
    let drainUntil: number | null = null;
    for (;;) {
      const [nowUs, openCloses, batches] = await r.meterTake(opts.keyPrefix, BATCHES_PER_STEP);
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
      await moveUsage(async () => {
        if (counts.size > 0) written += await recordUsage(counts.rows());
        await r.meterAck(opts.keyPrefix, ...batches.map(([batch]) => batch));
      });
    }
  }
  /**
   * Records usage in Postgres; draining, everything settled before the call. A flush already running may have taken
   * its batches before the caller's events reached Redis, so a drain asked for meanwhile waits for it and then runs
   * one more (shared by every drain asked for during the same run); a periodic flush just joins the running one.
   */
  let again: Promise<number> | null = null;
  const flush = (drain: boolean): Promise<number> => {
    if (flushing === null) {
      flushing = flushOnce(drain).finally(() => {
        flushing = null;
      });
      return flushing;
    }
    if (!drain) return flushing;
    again ??= flushing
      .catch(() => 0)
      .then(() => {
        again = null;
        return flush(true);
      });
    return again;
  };
  app.decorate('flushUsage', () => flush(true));
  const timer = setInterval(() => {
    flush(false).catch((err: Error) => app.log.warn({ err: err.message }, 'usage flush failed; will retry'));
  }, FLUSH_MS);
  timer.unref();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await flush(true).catch((err: Error) => app.log.error({ err: err.message }, 'final usage flush failed'));
    turns.disconnect();
  });
});
