// Authentication: Bearer or X-API-Key, one identical 401 for every failure. Valid keys are cached in
// process; the cache is exact because every change to a client (key revoked, suspended, plan, credits) reaches every
// process twice: Postgres notifies them at commit (NOTIFY accounts_changed, from triggers, so plain SQL changes do
// too) and they drop the client's keys; and the service deletes the client's Redis balance, so metering
// re-authenticates from Postgres before admitting against it.
import { hash } from 'node:crypto';
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { ApiError, sendError } from '../errors.ts';
import { hashKey, isWellFormedKey } from '../accounts/keys.ts';
import { setRateLimitHeaders } from '../metering/headers.ts';

export interface AuthContext {
  keyId: string;
  clientId: string;
  mode: 'live' | 'test';
  plan: string;
  rest: boolean;
  mcp: boolean;
  /** Plan features beyond the surfaces (src/plan-features.ts). */
  csv: boolean;
  webhooks: 'no' | 'beta' | 'yes';
  /** The plan's (or contract's) monthly credits; 0 for the free trial, whose credits are one-time. */
  monthlyCredits: number;
  rpm: number;
  /** Paid Developer..Lead Feed with an active subscription: keeps serving past the grant. */
  overage: boolean;
  /** Changes whenever the client's credits change other than by usage; metering reloads on a change. */
  creditVersion: string;
  /** A free trial past day 7 that has not been capped yet. */
  trialCapDue: boolean;
}
export type Surface = 'rest' | 'mcp';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
  interface FastifyInstance {
    /** onRequest hook that authenticates a request for one surface (REST under /v1, or MCP). */
    authenticate: (surface: Surface) => onRequestAsyncHookHandler;
    /**
     * Looks the request's key up in Postgres again (bypassing the cache) and applies it: null when accepted, else
     * the refusal to give (401, 403, or 429 for a flooding address), not sent.
     */
    reauthenticate: (request: FastifyRequest, reply: FastifyReply, surface: Surface) => Promise<ApiError | null>;
    /** Reads the request's key from Postgres again and, while it is valid, puts what it says in `request.auth`. */
    refreshAuth: (request: FastifyRequest) => Promise<void>;
  }
}

/** Failed authentications allowed per address per minute before 429. */
export const AUTH_FAILURES_PER_MINUTE = 60;
/** Every failure waits until this many ms after arrival, so timing does not tell the cases apart. */
const FAILURE_FLOOR_MS = 25;
const TOUCH_FLUSH_MS = 5000;
/** A safety net only: entries are normally replaced as soon as metering sees the client changed. */
const CACHE_TTL_MS = 60_000;
const CACHE_MAX = 50_000;
const BEARER = /^bearer ([^\s]+)$/i;

export const unauthorized = () => new ApiError(401, 'unauthorized', 'Invalid API key.');

/**
 * Authorization or X-API-Key sent more than once. Node keeps the first Authorization and joins repeated X-API-Keys,
 * while a proxy in front may read the last: they would disagree about who is calling, so it is a failure.
 */
function repeatsKeyHeader(rawHeaders: string[]): boolean {
  let authorization = 0;
  let apiKey = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 13 && name.toLowerCase() === 'authorization') authorization++;
    else if (name.length === 9 && name.toLowerCase() === 'x-api-key') apiKey++;
  }
  return authorization > 1 || apiKey > 1;
}

/** The raw key the request presents, or null when it presents none, a repeated header, or a conflicting pair. */
export function presentedKey(request: FastifyRequest): string | null {
  if (repeatsKeyHeader(request.raw.rawHeaders)) return null;
  const authorization = request.headers.authorization;
  const xApiKey = request.headers['x-api-key'];
  if (Array.isArray(xApiKey)) return null;
  let bearer: string | undefined;
  if (authorization !== undefined) {
    const match = BEARER.exec(authorization);
    if (!match) return null;
    bearer = match[1];
  }
  if (bearer !== undefined && xApiKey !== undefined && bearer !== xApiKey) return null;
  const key = bearer ?? xApiKey;
  return key !== undefined && isWellFormedKey(key) ? key : null;
}

export default fp<{ secret: string }>(
  async (app, opts) => {
    app.decorateRequest('auth', null);
    /**
     * The key cache is indexed by a plain SHA-256 of the key (one-shot), not by the stored HMAC (several times dearer,
     * and an object per call): the HMAC is computed only to look a key up in Postgres. A key carries 190 random bits, so
     * its SHA-256 names it as surely as the HMAC and reveals it no more.
     */
    const cacheKeyOf = (key: string) => hash('sha256', key, 'base64');
    /** Key id -> when it was last used (ms), written to Postgres every TOUCH_FLUSH_MS. */
    const seen = new Map<string, number>();
    const cache = new Map<string, { auth: AuthContext; at: number }>();

    const flushTouches = async () => {
      if (seen.size === 0) return;
      const ids = [...seen.keys()];
      let latestMs = 0;
      for (const at of seen.values()) if (at > latestMs) latestMs = at;
      const latest = new Date(latestMs);
      seen.clear();
      try {
        await app.meterSql`SELECT accounts.touch_keys(${ids}::uuid[], ${latest})`;
      } catch (err) {
        app.log.warn({ err: (err as Error).message }, 'could not record key last_used_at');
      }
    };
    /** When each client last changed, and when every client may have (the listening session reconnected). */
    const changedAt = new Map<string, number>();
    let allChangedAt = Date.now();
    let listening = false;
    /** A client's keys or credits changed (NOTIFY accounts_changed, migration 33): its cached keys are read again. */
    const forget = (clientId: string) => {
      for (const [id, entry] of cache) if (entry.auth.clientId === clientId) cache.delete(id);
      if (changedAt.size >= CACHE_MAX) {
        changedAt.clear();
        allChangedAt = Date.now();
      }
      changedAt.set(clientId, Date.now());
    };
    // On every (re)connect of the listening session the whole cache goes: a change made while it was down went unheard.
    // The session is on the primary, which notifies at commit.
    await app.primarySql
      .listen('accounts_changed', forget, () => {
        cache.clear();
        allChangedAt = Date.now();
        listening = true;
      })
      .catch((err: Error) => {
        app.log.warn({ err: err.message }, 'cannot listen for account changes: cached keys expire after 60 s');
      });
    const timer = setInterval(flushTouches, TOUCH_FLUSH_MS);
    timer.unref();
    app.addHook('onClose', async () => {
      clearInterval(timer);
      await flushTouches();
    });

    /** Reads the key from Postgres (by default the primary) and caches the answer under `id`, its cache key. */
    async function lookup(key: string, id: string, sql = app.primarySql): Promise<AuthContext | undefined> {
      const [row] = await sql<AuthContext[]>`
      SELECT key_id AS "keyId", client_id AS "clientId", mode, plan, rest, mcp, csv, webhooks, monthly_credits::float8 AS "monthlyCredits",
             rpm, overage, credit_version::text AS "creditVersion", trial_cap_due AS "trialCapDue"
        FROM accounts.authenticate(${hashKey(opts.secret, key)})`;
      if (!row) {
        cache.delete(id);
        return undefined;
      }
      if (cache.size >= CACHE_MAX) cache.clear();
      cache.set(id, { auth: row, at: Date.now() });
      return row;
    }

    /**
     * Counts a failed authentication from an address in the current UTC minute (in Redis, shared by every process)
     * and sets that limit's headers: the 429 to give once the address floods, else null. Without Redis: null.
     */
    async function limitFailures(request: FastifyRequest, reply: FastifyReply): Promise<ApiError | null> {
      const now = Date.now();
      const minute = Math.floor(now / 60000);
      let count = 0;
      try {
        const key = `authfail:${request.ip}:${minute}`;
        const [[, n]] = (await app.redis.multi().incr(key).expire(key, 120).exec()) as [[null, number]];
        count = n;
      } catch {
        return null; // fail open
      }
      const resetMs = (minute + 1) * 60000 - now;
      const limit = AUTH_FAILURES_PER_MINUTE;
      const resetSeconds = setRateLimitHeaders(reply, limit, limit - count, resetMs, now);
      if (count <= limit) return null;
      reply.header('Retry-After', resetSeconds);
      return new ApiError(
        429,
        'rate_limited',
        `Too many failed authentications from this address; retry in ${resetSeconds} seconds.`,
      );
    }

    /**
     * The key of a request the cache cannot answer. With read replicas it is read from one first, and that answer is
     * kept only when it accepts the key on the surface and the client has not changed (no notice, no reconnect of the
     * listening session) for as long as a replica in rotation may be behind the primary. Anything else is read again
     * from the primary: a key created or upgraded a moment ago is never refused, nor a key revoked a moment ago
     * served, because of a replica's lag.
     */
    async function lookupForRequest(key: string, id: string, surface: Surface) {
      if (app.sql !== app.primarySql && listening) {
        const auth = await lookup(key, id, app.sql);
        const since = Date.now() - app.replicaMaxStaleMs;
        const changed = allChangedAt > since || (auth !== undefined && (changedAt.get(auth.clientId) ?? 0) > since);
        if (auth && (surface === 'rest' ? auth.rest : auth.mcp) && !changed) return auth;
      }
      return lookup(key, id);
    }

    /** The refusal of a failed authentication, after the failure floor; the 429 once an address floods. */
    const failure = async (request: FastifyRequest, reply: FastifyReply): Promise<ApiError> => {
      const flood = await limitFailures(request, reply);
      if (flood) return flood;
      // timers count whole, coarse milliseconds and may fire a little early: wait until the floor has passed
      for (let wait = FAILURE_FLOOR_MS - reply.elapsedTime; wait > 0; wait = FAILURE_FLOOR_MS - reply.elapsedTime) {
        await new Promise((resolve) => setTimeout(resolve, Math.ceil(wait)));
      }
      return unauthorized();
    };

    /** Applies a looked-up key to the request: null when accepted, else the refusal (not sent). */
    async function check(
      request: FastifyRequest,
      reply: FastifyReply,
      surface: Surface,
      auth: AuthContext | undefined,
    ) {
      if (!auth) return failure(request, reply);
      if (surface === 'rest' && !auth.rest) {
        return new ApiError(
          403,
          'rest_disabled',
          'This plan serves the MCP endpoint only; REST needs a Developer plan or higher.',
        );
      }
      if (surface === 'mcp' && !auth.mcp) {
        return new ApiError(
          403,
          'mcp_disabled',
          'This plan does not include the MCP endpoint; upgrade to Developer or higher.',
        );
      }
      accept(request, auth);
      return null;
    }
    function accept(request: FastifyRequest, auth: AuthContext) {
      seen.set(auth.keyId, Date.now());
      request.auth = auth;
    }

    app.decorate('reauthenticate', async (request: FastifyRequest, reply: FastifyReply, surface: Surface) => {
      const key = presentedKey(request);
      return check(request, reply, surface, key ? await lookup(key, cacheKeyOf(key)) : undefined);
    });

    app.decorate('refreshAuth', async (request: FastifyRequest) => {
      const key = presentedKey(request);
      const auth = key ? await lookup(key, cacheKeyOf(key)) : undefined;
      if (auth) request.auth = auth;
    });

    app.decorate('authenticate', (surface: Surface): onRequestAsyncHookHandler => async (request, reply) => {
      const key = presentedKey(request);
      if (key === null) return sendError(reply, await failure(request, reply));
      const id = cacheKeyOf(key);
      const cached = cache.get(id);
      const fresh = cached && Date.now() - cached.at < CACHE_TTL_MS ? cached.auth : undefined;
      // the common case, a cached key allowed on this surface, is decided without awaiting anything
      if (fresh && (surface === 'rest' ? fresh.rest : fresh.mcp)) {
        accept(request, fresh);
        return;
      }
      // anything else is read from Postgres: a refusal must be as current as the data (a client upgraded a moment
      // ago, whose change notice has not arrived yet, is served on its next request)
      const auth = await lookupForRequest(key, id, surface);
      const refusal = await check(request, reply, surface, auth);
      if (refusal?.statusCode === 403)
        return sendError(reply, (await countRefused(request, reply, surface, auth!)) ?? refusal);
      if (refusal) return sendError(reply, refusal);
    });

    /**
     * A key its plan does not allow on this surface still counts against the client's per-minute limit, free, and its
     * 403 carries the rate-limit headers like every answer to a known client: the 429 when the limit is reached, else
     * null. (Not from `check`: metering calls that back to re-authenticate.)
     */
    async function countRefused(request: FastifyRequest, reply: FastifyReply, surface: Surface, auth: AuthContext) {
      request.auth = { ...auth, trialCapDue: false };
      try {
        return await app.admitRequest(request, reply, surface, true);
      } finally {
        request.auth = null;
      }
    }
  },
  { name: 'auth', dependencies: ['db', 'redis', 'metering'] },
);
