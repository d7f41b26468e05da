// Metering (Part 8): per-client sliding-window rate limit and the credit pool, admitted in one Redis round trip;
// charged only on 2xx (the reservation is refunded otherwise); usage flushed to Postgres in batches.
import fp from 'fastify-plugin';
import { hostname } from 'node:os';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { serializeDictionary } from 'structured-headers';
import { ApiError, sendError } from '../errors.ts';
import type { AuthContext, Surface } from './auth.ts';
import { ACK, ADMIT, INIT, REAP, SETTLE } from '../metering/scripts.ts';

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
    /** Charged requests of a client's pool this period that are still in Redis, not yet in Postgres. */
    pendingUsage: (auth: AuthContext, period: string) => Promise<number>;
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
  redis.defineCommand('meterAdmit', { numberOfKeys: 4, lua: ADMIT });
  redis.defineCommand('meterSettle', { numberOfKeys: 0, lua: SETTLE });
  redis.defineCommand('meterReap', { numberOfKeys: 0, lua: REAP });
  redis.defineCommand('meterInit', { numberOfKeys: 2, lua: INIT });
  redis.defineCommand('meterAck', { numberOfKeys: 1, lua: ACK });
  type Scripted = {
    meterAdmit: (...args: (string | number)[]) => Promise<[number, string, number, number]>;
    meterSettle: (...args: (string | number)[]) => Promise<number>;
    meterReap: (...args: (string | number)[]) => Promise<number>;
    meterInit: (...args: (string | number)[]) => Promise<number>;
    meterAck: (...args: (string | number)[]) => Promise<number>;
  };
  const r = redis as unknown as Scripted & typeof redis;
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

  /**
   * Admits a request. A missing or outdated balance in Redis means the client changed (or Redis lost its data):
   * re-authenticate from Postgres (the key may be revoked, the client suspended), rebuild the balance, admit again.
   * Returns null when re-authentication refused the request (the reply is sent).
   */
  async function admit(request: FastifyRequest, reply: FastifyReply, surface: Surface, now: number, free: boolean) {
    let auth = request.auth!;
    const period = periodOf(now);
    const call = (a: AuthContext, version: string) => {
      const { st, pend } = keysOf(subjectOf(a));
      return r.meterAdmit(
        st,
        pend,
        `win:${a.clientId}`,
        `res:${request.id}`,
        now,
        a.rpm,
        version,
        period,
        request.id,
        a.mode === 'test' ? 't' : 'm',
        free ? '1' : '0',
      );
    };
    let result = auth.trialCapDue ? null : await call(auth, auth.creditVersion);
    if (result === null || result[0] === -1) {
      if (!(await app.reauthenticate(request, reply, surface))) return null;
      auth = request.auth!;
      if (auth.trialCapDue && auth.mode === 'live') {
        const pending = Number((await redis.hget(keysOf(auth.clientId).pend, 'c')) ?? 0);
        await app.sql`SELECT meter.apply_trial_cap(${auth.clientId}::uuid, ${pending})`;
        if (!(await app.reauthenticate(request, reply, surface))) return null;
        auth = request.auth!;
      }
      result = await call(auth, await init(auth, subjectOf(auth), period));
    }
    return { result, subject: subjectOf(auth), period, auth };
  }

  function setHeaders(reply: FastifyReply, limit: number, remaining: number, resetMs: number, now: number) {
    const resetSeconds = Math.max(1, Math.ceil(resetMs / 1000));
    reply.header('X-RateLimit-Limit', limit);
    reply.header('X-RateLimit-Remaining', Math.max(0, remaining));
    reply.header('X-RateLimit-Reset', Math.ceil(now / 1000) + resetSeconds);
    reply.header(
      'RateLimit',
      serializeDictionary({
        default: [
          true,
          new Map([
            ['r', Math.max(0, remaining)],
            ['t', resetSeconds],
          ]),
        ],
      }),
    );
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

  // Settlements of the requests that finished in one turn of the event loop go to Redis as one script call.
  let settling: (string | number)[] = [];
  let settleScheduled = false;
  const sendSettlements = async () => {
    settleScheduled = false;
    const batch = settling;
    settling = [];
    if (batch.length === 0) return;
    try {
      await r.meterSettle(opts.keyPrefix, periodOf(Date.now()), ...batch);
    } catch (err) {
      // The reservations stay in Redis and the reaper refunds them: the client is not charged for these.
      app.log.error({ err: (err as Error).message, requests: batch.length / 3 }, 'could not settle metering');
    }
  };

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
    const event = [request.id, auth.clientId, auth.keyId, auth.mode, m.surface, m.period, Date.now()].join('|');
    settling.push(request.id, charge ? 1 : 0, event);
    if (!settleScheduled) {
      settleScheduled = true;
      setImmediate(sendSettlements);
    }
  }
  app.decorate('settleRequest', settle);
  app.addHook('onResponse', async (request, reply) =>
    settle(request, reply.statusCode >= 200 && reply.statusCode < 300),
  );

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

  app.decorate('pendingUsage', async (auth: AuthContext, period: string) => {
    const subject = auth.mode === 'test' ? `${auth.clientId}:test` : auth.clientId;
    try {
      return Number((await redis.hget(keysOf(subject).pend, `n:${period}`)) ?? 0);
    } catch {
      return 0;
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
    await sendSettlements();
    if (Date.now() - lastReap > 60_000) await reapOrphans();
    try {
      await redis.xgroup('CREATE', STREAM, GROUP, '0', 'MKSTREAM');
    } catch {
      // BUSYGROUP: it exists
    }
    for (;;) {
      const claimed = (await redis.xautoclaim(STREAM, GROUP, consumer, 30000, '0', 'COUNT', 500)) as [
        string,
        [string, string[]][],
      ];
      const fresh = (await redis.xreadgroup('GROUP', GROUP, consumer, 'COUNT', 2000, 'STREAMS', STREAM, '>')) as
        [string, [string, string[]][]][] | null;
      const messages = [...(claimed[1] ?? []), ...(fresh?.[0]?.[1] ?? [])].filter((m) => Array.isArray(m[1]));
      if (messages.length === 0) {
        await trimStream();
        return written;
      }
      const events = messages.map(([, kv]) => {
        const [request_id, client_id, key_id, mode, surface, period, usedAt, field] = (kv[1] ?? '').split(
          '|',
        ) as string[];
        return { request_id, client_id, key_id, mode, surface, period, usedAt, field: field! };
      });
      const rows = events.map((e) => ({
        request_id: e.request_id,
        client_id: e.client_id,
        key_id: e.key_id,
        mode: e.mode,
        surface: e.surface,
        bucket: bucketOf(e.field),
        pack_id: e.field.startsWith('p:') ? e.field.slice(2) : null,
        period: e.period,
        used_at: new Date(Number(e.usedAt)).toISOString(),
      }));
      written +=
        (await app.sql<{ n: number }[]>`SELECT meter.flush_usage(${app.sql.json(rows as never)}) AS n`)[0]?.n ?? 0;
      const ackArgs = messages.flatMap(([id], i) => {
        const e = events[i]!;
        const subject = e.mode === 'test' ? `${e.client_id}:test` : e.client_id!;
        return [id, `${opts.keyPrefix}pend:${subject}`, e.field, e.period!];
      });
      await r.meterAck(STREAM, GROUP, ...ackArgs);
    }
  }
  const flush = () => {
    flushing ??= flushOnce().finally(() => {
      flushing = null;
    });
    return flushing;
  };
  app.decorate('flushUsage', flush);
  const timer = setInterval(() => {
    flush().catch((err: Error) => app.log.warn({ err: err.message }, 'usage flush failed; will retry'));
  }, FLUSH_MS);
  timer.unref();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await flush().catch((err: Error) => app.log.error({ err: err.message }, 'final usage flush failed'));
  });
});
