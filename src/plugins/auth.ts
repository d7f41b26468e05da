// Authentication (Part 5): Bearer or X-API-Key, one indexed lookup per request (no cache, so revocation and
// suspension bite on the very next request in every process), one identical 401 for every failure.
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { ApiError, sendError } from '../errors.ts';
import { hashKey, isWellFormedKey } from '../accounts/keys.ts';

export interface AuthContext {
  keyId: string;
  clientId: string;
  mode: 'live' | 'test';
  plan: string;
  rest: boolean;
  mcp: boolean;
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
  }
}

/** Every failure waits until this many ms after arrival, so timing does not tell the cases apart. */
const FAILURE_FLOOR_MS = 25;
const TOUCH_FLUSH_MS = 5000;
const BEARER = /^bearer ([^\s]+)$/i;

export const unauthorized = () => new ApiError(401, 'unauthorized', 'Invalid API key.');

/** The raw key the request presents, or null when it presents none or a conflicting / malformed pair. */
export function presentedKey(request: FastifyRequest): string | null {
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

export default fp<{ secret: string }>(async (app, opts) => {
  app.decorateRequest('auth', null);
  const seen = new Map<string, Date>();

  const flushTouches = async () => {
    if (seen.size === 0) return;
    const ids = [...seen.keys()];
    const latest = new Date(Math.max(...[...seen.values()].map((d) => d.getTime())));
    seen.clear();
    try {
      await app.sql`SELECT accounts.touch_keys(${ids}::uuid[], ${latest})`;
    } catch (err) {
      app.log.warn({ err: (err as Error).message }, 'could not record key last_used_at');
    }
  };
  const timer = setInterval(flushTouches, TOUCH_FLUSH_MS);
  timer.unref();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await flushTouches();
  });

  const fail = async (request: FastifyRequest, reply: FastifyReply) => {
    if (await app.limitAuthFailures(request, reply)) return reply;
    const wait = FAILURE_FLOOR_MS - reply.elapsedTime;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    return sendError(reply, unauthorized());
  };

  app.decorate('authenticate', (surface: Surface): onRequestAsyncHookHandler => async (request, reply) => {
    const key = presentedKey(request);
    if (key === null) return fail(request, reply);
    const [row] = await app.sql<AuthContext[]>`
      SELECT key_id AS "keyId", client_id AS "clientId", mode, plan, rest, mcp, monthly_credits::float8 AS "monthlyCredits",
             rpm, overage, credit_version::text AS "creditVersion", trial_cap_due AS "trialCapDue"
        FROM accounts.authenticate(${hashKey(opts.secret, key)})`;
    if (!row) return fail(request, reply);
    if (surface === 'rest' && !row.rest) {
      return sendError(
        reply,
        new ApiError(
          403,
          'rest_disabled',
          'This plan serves the MCP endpoint only; REST needs a Developer plan or higher.',
        ),
      );
    }
    if (surface === 'mcp' && !row.mcp) {
      return sendError(
        reply,
        new ApiError(
          403,
          'mcp_disabled',
          'This plan does not include the MCP endpoint; upgrade to Developer or higher.',
        ),
      );
    }
    seen.set(row.keyId, new Date());
    request.auth = row;
  });
});
