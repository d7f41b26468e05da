// Metering: per-client sliding-window rate limit, requests in flight per client and the credit pool, admitted in one
// Redis round trip; charged only on 2xx (the reservation is refunded otherwise); usage flushed to Postgres in
// batches. The parts live in src/metering/ (the per-turn Redis call, the usage flush, headers, periods, in flight, the
// Lua scripts); this plugin wires them to requests: admission (before or alongside the handler), settlement, usage
// reads. Its Prometheus series are in src/metering/metrics.ts; what a Redis failover can cost and why no more is in
// docs/metering.md#failover.
import fp from 'fastify-plugin';
import type {
  FastifyReply,
  FastifyRequest,
  onErrorAsyncHookHandler,
  onRequestAsyncHookHandler,
  onSendAsyncHookHandler,
} from 'fastify';
import { ApiError, prepareError, sendError, toApiError } from '../errors.ts';
import type { AuthContext, Surface } from './auth.ts';
import { INIT } from '../metering/scripts.ts';
import { Turns } from '../metering/turns.ts';
import { UsageFlush, bucketOf } from '../metering/usage-flush.ts';
import { meteringMetrics } from '../metering/metrics.ts';
import { setRateLimitHeaders } from '../metering/headers.ts';
import { inFlightCap, slotHolder } from '../metering/in-flight.ts';
import { isHeavy } from '../db/heavy.ts';
import { calendar, periodOf, secondsToNextPeriod } from '../metering/periods.ts';

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
    /**
     * onError hook for a route that admits after parsing the body (MCP): a known client's request that failed before
     * it was admitted (a body that is not JSON, too large, of another type) still counts against the per-minute
     * limit, free, and its answer carries the rate-limit headers.
     */
    meterError: (surface: Surface) => onErrorAsyncHookHandler;
    /** onSend hook: waits for an admission running alongside the handler; a refusal replaces the handler's answer. */
    awaitAdmission: onSendAsyncHookHandler;
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
/** How long a request waits for Redis before it is allowed without it (fail open). */
const FAIL_OPEN_MS = 1000;
/** Subjects remembered as refused last (see `speculates`); the set is cleared when it reaches this size. */
const REFUSED_MAX = 100_000;
/**
 * A balance rebuilt from Postgres leaves out the usage batches Postgres has recorded among those Redis still lists:
 * the ones listed when the rebuild began, and any recorded since, found by the time of their recording in a window
 * this long (seconds); a rebuild that takes longer is done again with a window four times as long.
 */
const RECORDED_WINDOW_S = 2;

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

interface Balance {
  monthly: string;
  credits: string;
  overage: string;
  packs: { id: string; remaining: number; expires_ms: number }[];
  version: string;
  /** Usage batches Postgres has recorded that Redis may still hold (meter.recorded_batches). */
  recorded: string[];
}

export interface MeteringOptions {
  keyPrefix: string;
  /** How long settlements write into one usage batch before the next is opened; a batch is recorded after that. */
  usageBatchMs: number;
}

async function metering(app: import('fastify').FastifyInstance, opts: MeteringOptions) {
  const redis = app.redis;
  redis.defineCommand('meterInit', { numberOfKeys: 2, lua: INIT });
  const r = redis as typeof redis & { meterInit: (...args: (string | number)[]) => Promise<number> };
  let flushed = () => Date.now();
  const metrics = meteringMetrics(app.metrics, () => (Date.now() - flushed()) / 1000);
  const { timeScript } = metrics;
  const turns = new Turns(redis, opts.keyPrefix, opts.usageBatchMs * 1000, {
    onSettleError: (err, requests, final) => {
      if (final) app.log.error({ err: err.message, requests }, 'could not settle metering: the reaper refunds these');
      else app.log.warn({ err: err.message, requests }, 'could not settle metering yet: retrying every second');
    },
    onSettled: (tags) => {
      const counts = new Map<string, number>();
      for (const tag of tags) if (tag !== '') counts.set(tag, (counts.get(tag) ?? 0) + 1);
      for (const [tag, n] of counts) {
        const [surface, bucket] = tag.split('|');
        metrics.charged.inc({ surface, bucket }, n);
      }
    },
    timeScript,
    failover: app.redisFailover,
  });
  await turns.ready(FAIL_OPEN_MS);
  // With Sentinels, Redis has replicas: a usage batch is recorded only once one of them has its seal.
  const replicated = (redis.options.sentinels?.length ?? 0) > 0;
  let lastTimeoutLog = 0;
  const usage = new UsageFlush({
    redis,
    meterSql: app.meterSql,
    keyPrefix: opts.keyPrefix,
    sendTurn: turns.send,
    waitReplicas: replicated ? 1 : 0,
    onReplicationTimeout: (batches, recorded) => {
      metrics.replicationTimeouts.inc();
      if (!recorded || Date.now() - lastTimeoutLog < 60_000) return;
      lastTimeoutLog = Date.now();
      app.log.warn({ batches }, 'usage recorded without a Redis replica: none has answered for a minute');
    },
    timeScript,
    failover: app.redisFailover,
  });
  flushed = () => usage.lastSuccess;
  const stats = { failOpen: 0, speculative: 0, wasted: 0 };
  app.decorate('meterStats', stats);
  app.decorateRequest('meter', null);
  app.decorateRequest('admission', null);

  const keysOf = (subject: string) => ({ st: `st:${subject}`, pend: `pend:${subject}` });
  const subjectOf = (auth: AuthContext) => (auth.mode === 'test' ? `${auth.clientId}:test` : auth.clientId);

  /**
   * The client's durable balances, with the usage batches Postgres has recorded that Redis may still hold (as of the
   * same snapshot): those listed in Redis before the query, and those recorded since (see RECORDED_WINDOW_S).
   */
  async function balanceOf(auth: AuthContext, period: string): Promise<Balance> {
    for (let windowS = RECORDED_WINDOW_S; ; windowS *= 4) {
      const began = Date.now();
      const listed = await redis.lrange('usage:batches', 0, -1);
      const [b] = await app.primarySql<Balance[]>`
        SELECT monthly::text, credits::text, overage::text, packs, version::text,
               meter.recorded_batches(${listed}::text[], ${opts.keyPrefix}, ${windowS}) AS recorded
          FROM meter.client_balance(${auth.clientId}::uuid, ${auth.mode}, ${period})`;
      if (!b) throw new Error('client vanished');
      if (Date.now() - began < windowS * 1000) return b;
    }
  }

  /** Rebuilds the client's hot balance in Redis from Postgres; returns its version. */
  async function init(auth: AuthContext, subject: string, period: string): Promise<string> {
    const b = await balanceOf(auth, period);
    const { st, pend } = keysOf(subject);
    const packArgs = b.packs.flatMap((p) => [p.id, p.remaining, p.expires_ms]);
    const overage = auth.mode === 'live' && auth.overage ? 1 : 0;
    const done = timeScript('init');
    await r.meterInit(
      st,
      pend,
      b.version,
      period,
      b.monthly,
      b.credits,
      b.overage,
      overage,
      auth.clientId,
      auth.mode,
      b.recorded.length,
      ...b.recorded,
      ...packArgs,
    );
    done();
    return b.version;
  }

  /** One admission, batched with the others of this turn of the event loop (see Turns). */
  const admitOnce = (rid: string, a: AuthContext, version: string, now: number, period: string, free: boolean) =>
    turns.admit(
      `${subjectOf(a)}|${a.clientId}|${now}|${a.rpm}|${inFlightCap(a.rpm)}|${version}|${period}|${rid}|${a.mode === 'test' ? 't' : 'm'}|${free ? 1 : 0}`,
    );

  const holdSlot = slotHolder((request, clientId) => turns.release(request.id, clientId));

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
        await turns.send(); // every settlement so far has run (refunds lower what is pending)
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
      metrics.failOpen.inc({ surface });
      request.log.warn({ err: (err as Error).message }, 'metering unavailable: request allowed (fail open)');
      // Without Redis the key cache cannot be trusted to be current: check the key in Postgres.
      const refusal = await app.reauthenticate(request, reply, surface);
      if (refusal) return refusal;
      const auth = request.auth!;
      request.meter = free
        ? null
        : { field: null, period: periodOf(now), surface, subject: auth.clientId, failOpen: true };
      setRateLimitHeaders(reply, auth.rpm, auth.rpm - 1, 60000, now);
      return null;
    }
    const { result, subject, period, auth } = admitted;
    const [ok, field, count, resetMs, held] = result;
    const resetSeconds = setRateLimitHeaders(reply, auth.rpm, auth.rpm - count, resetMs, now);
    if (ok === 1) {
      refusedLast.delete(subject);
      holdSlot(request, reply, auth.clientId);
      // Admitted by a master a failover is replacing: its reservation will be lost, so the request is charged in
      // Postgres directly, as a fail-open one is (docs/metering.md#failover).
      request.meter = field === '' ? null : { field, period, surface, subject, failOpen: held };
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
    if (field === 'busy') {
      reply.header('Retry-After', 1);
      return new ApiError(
        429,
        'rate_limited',
        `Too many requests in flight: your plan allows ${inFlightCap(auth.rpm)} at a time; retry when one is answered.`,
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
  // A heavy request (src/db/heavy.ts) is admitted before its work too: a client over its in-flight cap is refused
  // before any of it starts.
  const speculates = (request: FastifyRequest, auth: AuthContext) =>
    !auth.trialCapDue && !refusedLast.has(subjectOf(auth)) && !isHeavy(request);
  app.decorate('meter', (surface: Surface): onRequestAsyncHookHandler => async (request, reply) => {
    if (!request.auth) return;
    const admission = admitRequest(request, reply, surface, isFree(request));
    if (speculates(request, request.auth)) {
      stats.speculative++;
      request.admission = admission;
      admission.catch(() => {}); // awaited in onSend; a handler that throws first must not leave it unhandled
      return;
    }
    const refusal = await admission;
    if (refusal) return sendError(reply, refusal);
  });
  app.decorate('meterError', (surface: Surface): onErrorAsyncHookHandler => async (request, reply) => {
    // every admission, whatever its outcome, sets the rate-limit headers: none means none was made
    if (request.auth && !reply.hasHeader('x-ratelimit-limit')) await admitRequest(request, reply, surface, true);
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
    const day = calendar(Date.now()).day;
    const usageArg = `${request.id}|${auth.clientId}|${auth.keyId}|${auth.mode}|${m.surface}|${m.period}|${day}`;
    if (m.failOpen) {
      // The admission may have reached Redis and reserved a credit after all (its answer lost or late, or the server
      // failed over after running it): give it back now rather than when the reaper finds it. Settling a reservation
      // that does not exist changes nothing.
      turns.settle(`0|${usageArg}`);
      if (charge) {
        const bucket = auth.mode === 'test' ? 'test' : 'unmetered';
        metrics.charged.inc({ surface: m.surface, bucket });
        usage.addUnmetered({
          client_id: auth.clientId,
          key_id: auth.keyId,
          mode: auth.mode,
          surface: m.surface,
          bucket,
          pack_id: null,
          period: m.period,
          day,
        });
      }
      return;
    }
    if (charge) turns.settle(`1|${usageArg}`, `${m.surface}|${bucketOf(m.field!)}`);
    else turns.settle(`0|${usageArg}`);
  }
  app.decorate('settleRequest', settle);
  // a callback hook, not an async one: no promise per request for work that never waits
  app.addHook('onResponse', (request, reply, done) => {
    settle(request, reply.statusCode >= 200 && reply.statusCode < 300);
    done();
  });

  // The Redis half of a usage read has the fail-open budget: past it, the count is Postgres's alone (requests not
  // flushed yet are missing from it; none is counted twice).
  app.decorate('withPendingUsage', async (auth, period, read) => {
    const deadline = Date.now() + FAIL_OPEN_MS;
    const gateOpen = async () => {
      if (turns.pendingSettlements > 0) await turns.send(); // this process's answers so far count
      await usage.gate.enter();
      return true;
    };
    const entering = gateOpen();
    if (!(await within(entering, deadline, false))) {
      void entering.then(() => usage.gate.leave()); // a late entry leaves at once
      return read(0);
    }
    try {
      const hget = redis.hget(keysOf(subjectOf(auth)).pend, `n:${period}`).then(Number, () => 0);
      return await read(await within(hget, deadline, 0));
    } finally {
      usage.gate.leave();
    }
  });

  app.decorate('reapOrphans', () => usage.reapOrphans());
  app.decorate('flushUsage', () => usage.flush(true));
  const timer = setInterval(() => {
    usage.flush(false).catch((err: Error) => {
      metrics.flushFailures.inc();
      app.log.warn({ err: err.message }, 'usage flush failed; will retry');
    });
  }, FLUSH_MS);
  timer.unref();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await usage.flush(true).catch((err: Error) => {
      metrics.flushFailures.inc();
      app.log.error({ err: err.message }, 'final usage flush failed');
    });
    turns.close();
    usage.close();
  });
}

export default fp(metering, { name: 'metering', dependencies: ['db', 'redis'] });
