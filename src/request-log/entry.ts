// One request as the account's request log keeps it: when, which key (its id: the dashboard shows its display form and
// name, never the key), method, path with query secrets removed, the route matched, status, error code, duration.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { loggableUrl } from '../http-edge.ts';

/** A row of meter.record_requests. */
export interface RequestLogRow {
  client_id: string;
  key_id: string;
  /** When the request arrived (ms since the epoch). */
  at_ms: number;
  method: string;
  path: string;
  /** "GET /v1/parcels/:id": the route matched (null when none was). */
  endpoint: string | null;
  status: number;
  error_code: string | null;
  duration_ms: number;
}

/**
 * Query parameters whose value may be a secret, by name: keys, tokens, passwords, signatures, sessions, credentials.
 * Their values become [REDACTED]; one of our keys anywhere in the URL is removed by loggableUrl.
 */
const SECRET_NAME = /key|token|secret|passw|sig|auth|session|credential/i;

const redactParam = (pair: string) => {
  const eq = pair.indexOf('=');
  return eq > 0 && SECRET_NAME.test(pair.slice(0, eq)) ? `${pair.slice(0, eq)}=[REDACTED]` : pair;
};

/** The path and query as the log shows them: secret values removed, at most 1,024 characters. */
export function loggedPath(url: string): string {
  const q = url.indexOf('?');
  const cleaned =
    q < 0
      ? url
      : `${url.slice(0, q + 1)}${url
          .slice(q + 1)
          .split('&')
          .map(redactParam)
          .join('&')}`;
  return loggableUrl(cleaned);
}

/** The error envelope's code, read from the start of a serialized answer (every error answer begins with it). */
const ERROR_CODE = /^\{"error":\{"code":"([a-z0-9_]{1,64})"/;
export function errorCodeOf(payload: unknown): string | null {
  if (typeof payload !== 'string') return null;
  return ERROR_CODE.exec(payload.slice(0, 96))?.[1] ?? null;
}

/** The log's row for an answered request of a known key; null for one without (401s have no account to log in). */
export function rowOf(request: FastifyRequest, reply: FastifyReply, errorCode: string | null): RequestLogRow | null {
  const auth = request.auth;
  if (!auth) return null;
  const duration = reply.elapsedTime;
  const route = request.routeOptions.url;
  return {
    client_id: auth.clientId,
    key_id: auth.keyId,
    at_ms: Math.round(Date.now() - duration),
    method: request.method,
    path: loggedPath(request.url),
    endpoint: route ? `${request.method} ${route}` : null,
    status: reply.statusCode,
    error_code: errorCode,
    duration_ms: Math.round(duration * 10) / 10,
  };
}
