// The rate-limit headers, on every answer to a known key (and on failed authentications, for the
// per-address limit): X-RateLimit-Limit / -Remaining / -Reset (Unix seconds) and RFC 9651's RateLimit.
import type { FastifyReply } from 'fastify';
import { serializeDictionary } from 'structured-headers';

/** Sets the headers; returns the seconds until the window frees a slot (at least 1), for Retry-After. */
export function setRateLimitHeaders(
  reply: FastifyReply,
  limit: number,
  remaining: number,
  resetMs: number,
  now: number,
) {
  const resetSeconds = Math.max(1, Math.ceil(resetMs / 1000));
  const left = Math.max(0, remaining);
  reply.header('X-RateLimit-Limit', limit);
  reply.header('X-RateLimit-Remaining', left);
  reply.header('X-RateLimit-Reset', Math.ceil(now / 1000) + resetSeconds);
  // RFC 9651 structured field, serialized by the library: `default;r=<remaining>;t=<seconds>`
  const field = new Map([
    ['r', left],
    ['t', resetSeconds],
  ]);
  reply.header('RateLimit', serializeDictionary({ default: [true, field] }));
  return resetSeconds;
}
