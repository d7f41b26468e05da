// Metering (Part 8): per-client sliding-window rate limit and the credit pool, admitted in one Redis round trip;
// charged only on 2xx (the reservation is refunded otherwise); usage flushed to Postgres in batches.
import fp from 'fastify-plugin';
import { hostname } from 'node:os';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { serializeDictionary } from 'structured-headers';
import { ApiError, sendError } from '../errors.ts';
import type { AuthContext, Surface } from './auth.ts';
import { ACK, INIT, REAP, TURN } from '../metering/scripts.ts';

declare module 'fastify' {
  interface FastifyRequest {
    meter: { field: string | null; period: string; surface: Surface; subject: string; failOpen: boolean } | null;
  }
  interface FastifyInstance {
    /** onRequest hook (after authenticate) that admits a request against the rate limit and the credit pool. */
    meter: (surface: Surface) => onRequestAsyncHookHandler;
    /** Counts a failed authentication from an address; answers 429 once an address floods. */
    limitAuthFailures: (request: FastifyRequest, reply: FastifyReply) => Promise<boolean>;
    /** Writes every charged request waiting in Redis (and any fail-open request) to Postgres now. */
    flushUsage: () => Promise<number>;
    /** Admits a request or tool call: null when admitted, the refusal otherwise, 'sent' if already answered. */
    admitRequest: (
      request: FastifyRequest,
      reply: FastifyReply,
      surface: Surface,
      free: boolean,
    ) => Promise<ApiError | null | 'sent'>;
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
    /** Requests admitted without Redis (it did not answer within a second). */
    meterStats: { failOpen: number };
  }
}

/** Routes marked `config: { free: true }` count against the rate limit but never cost a credit. */
const isFree = (request: FastifyRequest) =>
  (request.routeOptions.config as { free?: boolean } | undefined)?.free === true;
const STREAM = 'usage';
const GROUP = 'flush';
const FLUSH_MS = 1000;
/** Failed authentications allowed per address per minute before 429. */
export const AUTH_FAILURES_PER_MINUTE = 60;

export const periodOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);
/** periodOf for the hot path: the month is computed again only when `now` leaves the one computed last. */
let periodCache = { from: 0, to: -1, name: '' };
function currentPeriod(now: number): string {
  if (now < periodCache.from || now >= periodCache.to) {
    const d = new Date(now);
    periodCache = {
      from: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
      to: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
      name: periodOf(now),
    };
  }
  return periodCache.name;
}
/** Admissions sent in one script call at most; more in one turn of the event loop go in several calls. */
const ADMIT_BATCH_MAX = 256;
type AdmitReply = [ok: number, field: string, count: number, resetMs: number];
export function secondsToNextPeriod(ms: number): number {
  const d = new Date(ms);
  return Math.ceil((Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) - ms) / 1000);
}

interface Balance {
  monthly: string;
  credits: string;
  overage: string;
  packs: { id: string; remaining: number; expires_ms: number }[];
  version: string;
}

export default fp<{ keyPrefix: string }>(async (app, opts) => {
  const redis = app.redis;
  redis.defineCommand('meterReap', { numberOfKeys: 0, lua: REAP });
  redis.defineCommand('meterInit', { numberOfKeys: 2, lua: INIT });
  redis.defineCommand('meterAck', { numberOfKeys: 1, lua: ACK });
  type Scripted = {
    meterTurn: (...args: (string | number)[]) => Promise<(string | number)[]>;
    meterReap: (...args: (string | number)[]) => Promise<number>;
    meterInit: (...args: (string | number)[]) => Promise<number>;
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
  const consumer = `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
  const stats = { failOpen: 0 };
  const unmetered: Record<string, unknown>[] = [];
  app.decorate('meterStats', stats);
  app.decorateRequest('meter', null);

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
    args: (string | number)[];
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
  /** Settlements waiting for the turn's call: (request id, charge 1|0, event) triples. */
  let settling: (string | number)[] = [];
  let turnScheduled = false;
  /** The last turn call: calls on one connection run in order, so once it has run, every earlier one has too. */
  let lastTurn: Promise<void> = Promise.resolve();
  /** Sends what this turn has (settlements, admissions) as one script call; resolves once every call sent has run. */
  const sendTurn = () => {
    turnScheduled = false;
    const b = batch;
    const settled = settling;
    if (b === null && settled.length === 0) return lastTurn;
    batch = null;
    settling = [];
    const period = currentPeriod(Date.now());
    lastTurn = a.meterTurn(opts.keyPrefix, period, settled.length / 3, ...settled, ...(b?.args ?? [])).then(
      (out) => b?.resolve(out),
      (err: Error) => {
        b?.reject(err); // the admissions fail open
        // The reservations stay in Redis and the reaper refunds them: the client is not charged for these.
        if (settled.length > 0) {
          app.log.error({ err: err.message, requests: settled.length / 3 }, 'could not settle metering');
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
      subjectOf(a),
      a.clientId,
      now,
      a.rpm,
      version,
      period,
      rid,
      a.mode === 'test' ? 't' : 'm',
      free ? '1' : '0',
    );
    if (b.size >= ADMIT_BATCH_MAX) void sendTurn();
    else scheduleTurn();
    const out = await b.promise;
    return [Number(out[at]), String(out[at + 1]), Number(out[at + 2]), Number(out[at + 3])] as AdmitReply;
  }

  /**
   * Admits a request. A missing or outdated balance in Redis means the client changed (or Redis lost its data):
   * re-authenticate from Postgres (the key may be revoked, the client suspended), rebuild the balance, admit again.
   * Returns null when re-authentication refused the request (the reply is sent).
   */
  async function admit(request: FastifyRequest, reply: FastifyReply, surface: Surface, now: number, free: boolean) {
    let auth = request.auth!;
    const period = currentPeriod(now);
    let result = auth.trialCapDue ? null : await admitOnce(request.id, auth, auth.creditVersion, now, period, free);
    if (result === null || result[0] === -1) {
      if (!(await app.reauthenticate(request, reply, surface))) return null;
      auth = request.auth!;
      if (auth.trialCapDue && auth.mode === 'live') {
        await lastTurn; // settlements sent on the turn connection have run (refunds lower what is pending)
        const pending = Number((await redis.hget(keysOf(auth.clientId).pend, 'c')) ?? 0);
        await app.sql`SELECT meter.apply_trial_cap(${auth.clientId}::uuid, ${pending})`;
        if (!(await app.reauthenticate(request, reply, surface))) return null;
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
   * Admits one request (or one MCP tool call) and sets the rate-limit headers. Returns null when admitted, the
   * refusal to give the client otherwise, or 'sent' when re-authentication already answered (401/403).
   */
  async function admitRequest(request: FastifyRequest, reply: FastifyReply, surface: Surface, free: boolean) {
    const now = Date.now();
    let admitted;
    try {
      admitted = await admit(request, reply, surface, now, free);
      if (admitted === null) return 'sent' as const;
    } catch (err) {
      if (reply.sent) throw err;
      stats.failOpen++;
      request.log.warn({ err: (err as Error).message }, 'metering unavailable: request allowed (fail open)');
      // Without Redis the key cache cannot be trusted to be current: check the key in Postgres.
      if (!(await app.reauthenticate(request, reply, surface))) return 'sent' as const;
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
      request.meter = field === '' ? null : { field, period, surface, subject, failOpen: false };
      return null;
    }
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

  app.decorate('meter', (surface: Surface): onRequestAsyncHookHandler => async (request, reply) => {
    if (!request.auth) return;
    const refusal = await admitRequest(request, reply, surface, isFree(request));
    if (refusal === 'sent') return reply;
    if (refusal) return sendError(reply, refusal);
  });

  /** Charges (or refunds) the request's reservation; settling twice changes nothing. */
  function settle(request: FastifyRequest, charge: boolean) {
    const m = request.meter;
    const auth = request.auth;
    if (!m || !auth) return;
    request.meter = null;
    if (m.failOpen) {
      if (charge) {
        unmetered.push({
          request_id: request.id,
          client_id: auth.clientId,
          key_id: auth.keyId,
          mode: auth.mode,
          surface: m.surface,
          bucket: auth.mode === 'test' ? 'test' : 'unmetered',
          pack_id: null,
          period: m.period,
          used_at: new Date().toISOString(),
        });
      }
      return;
    }
    const event = `${request.id}|${auth.clientId}|${auth.keyId}|${auth.mode}|${m.surface}|${m.period}|${Date.now()}`;
    settling.push(request.id, charge ? 1 : 0, event);
    scheduleTurn();
  }
  app.decorate('settleRequest', settle);
  // a callback hook, not an async one: no promise per request for work that never waits
  app.addHook('onResponse', (request, reply, done) => {
    settle(request, reply.statusCode >= 200 && reply.statusCode < 300);
    done();
  });

  app.decorate('limitAuthFailures', async (request: FastifyRequest, reply: FastifyReply) => {
    const now = Date.now();
    const minute = Math.floor(now / 60000);
    let count = 0;
    try {
      const key = `authfail:${request.ip}:${minute}`;
      const [[, n]] = (await redis.multi().incr(key).expire(key, 120).exec()) as [[null, number]];
      count = n;
    } catch {
      return false; // fail open
    }
    const resetMs = (minute + 1) * 60000 - now;
    const resetSeconds = setHeaders(reply, AUTH_FAILURES_PER_MINUTE, AUTH_FAILURES_PER_MINUTE - count, resetMs, now);
    if (count <= AUTH_FAILURES_PER_MINUTE) return false;
    reply.header('Retry-After', resetSeconds);
    await sendError(
      reply,
      new ApiError(
        429,
        'rate_limited',
        `Too many failed authentications from this address; retry in ${resetSeconds} seconds.`,
      ),
    );
    return true;
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
  app.decorate('withPendingUsage', async (auth, period, read) => {
    while (moving) await moving;
    usageReads++;
    try {
      const pending = await redis.hget(keysOf(subjectOf(auth)).pend, `n:${period}`).then(Number, () => 0);
      return await read(pending);
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

  let flushing: Promise<number> | null = null;
  /** Drops acknowledged entries: everything older than the oldest entry any consumer still has pending. */
  async function trimStream() {
    const [count, oldestPending] = (await redis.xpending(STREAM, GROUP)) as [number, string | null];
    let minId = count > 0 ? oldestPending : null;
    if (minId === null) {
      const groups = (await redis.xinfo('GROUPS', STREAM)) as (string | number)[][];
      const group = groups.find((g) => g[1] === GROUP);
      const at = group ? group.indexOf('last-delivered-id') : -1;
      minId = at >= 0 ? String(group![at + 1]) : null;
    }
    if (minId && minId !== '0-0') await redis.xtrim(STREAM, 'MINID', minId);
  }

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
  async function flushOnce(): Promise<number> {
    let written = 0;
    // Postgres first: requests admitted while Redis was away are recorded even while it still is.
    if (unmetered.length > 0) {
      const batch = unmetered.splice(0, unmetered.length);
      try {
        written +=
          (await app.sql<{ n: number }[]>`SELECT meter.flush_usage(${app.sql.json(batch as never)}) AS n`)[0]?.n ?? 0;
        // make every process reload these clients' balances from Postgres
        for (const clientId of new Set(batch.map((e) => String(e.client_id)))) {
          await redis.del(`st:${clientId}`).catch(() => {});
        }
      } catch (err) {
        unmetered.unshift(...batch);
        throw err;
      }
    }
    await sendTurn(); // every settlement so far has run, so the stream holds its events
    if (Date.now() - lastReap > 60_000) await reapOrphans();
    try {
      await redis.xgroup('CREATE', STREAM, GROUP, '0', 'MKSTREAM');
    } catch {
      // BUSYGROUP: it exists
    }
    for (;;) {
      const claimed = (await redis.xautoclaim(STREAM, GROUP, consumer, 30000, '0', 'COUNT', 100)) as [
        string,
        [string, string[]][],
      ];
      const fresh = (await redis.xreadgroup('GROUP', GROUP, consumer, 'COUNT', 200, 'STREAMS', STREAM, '>')) as
        [string, [string, string[]][]][] | null;
      const messages = [...(claimed[1] ?? []), ...(fresh?.[0]?.[1] ?? [])].filter((m) => Array.isArray(m[1]));
      if (messages.length === 0) {
        await trimStream();
        return written;
      }
      // An entry holds the events of one settled batch, one per line (an entry written before batching: one).
      const rows: Record<string, string | null>[] = [];
      const ackArgs: (string | number)[] = [];
      for (const [id, kv] of messages) {
        const lines = (kv[1] ?? '').split('\n').filter((line) => line !== '');
        ackArgs.push(id, lines.length);
        for (const line of lines) {
          const [request_id, client_id, key_id, mode, surface, period, usedAt, field] = line.split('|') as string[];
          rows.push({
            request_id: request_id!,
            client_id: client_id!,
            key_id: key_id!,
            mode: mode!,
            surface: surface!,
            bucket: bucketOf(field!),
            pack_id: field!.startsWith('p:') ? field!.slice(2) : null,
            period: period!,
            used_at: new Date(Number(usedAt)).toISOString(),
          });
          ackArgs.push(`${opts.keyPrefix}pend:${mode === 'test' ? `${client_id}:test` : client_id}`, field!, period!);
        }
      }
      await moveUsage(async () => {
        if (rows.length > 0) {
          written +=
            (await app.sql<{ n: number }[]>`SELECT meter.flush_usage(${app.sql.json(rows as never)}) AS n`)[0]?.n ?? 0;
        }
        await r.meterAck(STREAM, GROUP, ...ackArgs);
      });
    }
  }
  /**
   * Flushes everything settled before the call. A flush already running may have read the stream before the
   * caller's events reached it, so a call made meanwhile waits for it and then runs one more (shared by every call
   * made during the same run).
   */
  let again: Promise<number> | null = null;
  const flush = (): Promise<number> => {
    if (flushing === null) {
      flushing = flushOnce().finally(() => {
        flushing = null;
      });
      return flushing;
    }
    again ??= flushing
      .catch(() => 0)
      .then(() => {
        again = null;
        return flush();
      });
    return again;
  };
  app.decorate('flushUsage', flush);
  const timer = setInterval(() => {
    flush().catch((err: Error) => app.log.warn({ err: err.message }, 'usage flush failed; will retry'));
  }, FLUSH_MS);
  timer.unref();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await flush().catch((err: Error) => app.log.error({ err: err.message }, 'final usage flush failed'));
    turns.disconnect();
  });
});
