// The limit on test events (docs/webhooks.md#plans-and-limits). They are free, and each one sent to a receiver that
// never answers holds a delivery slot until the timeout, so each endpoint may be sent at most TEST_EVENTS_PER_MINUTE,
// counted in Redis (shared by every API process) in fixed one-minute windows.
import type { Redis } from 'ioredis';
import { ApiError } from '../errors.ts';

export const TEST_EVENTS_PER_MINUTE = 5;
const WINDOW_SECONDS = 60;

/**
 * Counts a test event for the client's endpoint before anything is written, atomically (N concurrent requests count
 * N); throws 429 with Retry-After (the seconds left in the window) past the limit. Without Redis it is allowed, as
 * the API fails open; `warn` is told.
 */
export async function countTestEvent(
  redis: Redis,
  clientId: string,
  endpointId: string,
  warn: (message: string) => void,
  now = Date.now(),
): Promise<void> {
  const second = Math.floor(now / 1000);
  const start = second - (second % WINDOW_SECONDS);
  const key = `wh:test:${clientId}:${endpointId}:${start}`;
  let count: number;
  try {
    const replies = (await redis.multi().incr(key).expire(key, WINDOW_SECONDS).exec()) as [Error | null, number][];
    if (replies[0]![0]) throw replies[0]![0];
    count = replies[0]![1];
  } catch (err) {
    warn(`test event limit unavailable (${(err as Error).message}): test event allowed`);
    return;
  }
  if (count <= TEST_EVENTS_PER_MINUTE) return;
  const wait = start + WINDOW_SECONDS - second;
  throw new ApiError(
    429,
    'rate_limited',
    `too many test events: at most ${TEST_EVENTS_PER_MINUTE} a minute per endpoint; retry in ${wait} s`,
    { 'Retry-After': wait },
  );
}
