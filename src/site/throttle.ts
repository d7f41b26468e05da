// Sign-up, sign-in and password-reset attempts limited per address and per email, in Redis (shared by every API
// process), in fixed 15-minute windows. The email is counted under its SHA-256, lower-cased, so Redis holds no
// address; an unknown email is counted exactly like a known one, so a refusal says nothing about which exist.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

export type Action = 'signup' | 'login' | 'reset';

/** The length of the fixed windows attempts are counted in. */
export const WINDOW_SECONDS = 15 * 60;

/** Attempts allowed per window: sign-in counts failed attempts only, the others every attempt (each sends mail). */
export const LIMITS: Record<Action, { perEmail: number; perAddress: number }> = {
  login: { perEmail: 10, perAddress: 30 },
  signup: { perEmail: 5, perAddress: 10 },
  reset: { perEmail: 5, perAddress: 10 },
};

export interface Throttle {
  /** Seconds until the next attempt is allowed, or 0 when it is allowed now. Does not count the attempt. */
  check: (action: Action, address: string, email: string) => Promise<number>;
  /** Counts an attempt; returns the seconds to wait when this one went over the limit, else 0. */
  count: (action: Action, address: string, email: string) => Promise<number>;
}

const emailKey = (email: string) => createHash('sha256').update(email.trim().toLowerCase()).digest('base64url');

/** `warn` is told when Redis does not answer: the attempt is then allowed (as the API fails open). */
export function throttle(redis: Redis, warn: (message: string) => void): Throttle {
  const window = () => {
    const now = Math.floor(Date.now() / 1000);
    const start = now - (now % WINDOW_SECONDS);
    return { id: start / WINDOW_SECONDS, wait: start + WINDOW_SECONDS - now };
  };
  const keysOf = (action: Action, address: string, email: string, id: number) => [
    `site:throttle:${action}:a:${address}:${id}`,
    `site:throttle:${action}:e:${emailKey(email)}:${id}`,
  ];
  const over = (action: Action, [byAddress, byEmail]: number[]) =>
    byAddress! > LIMITS[action].perAddress || byEmail! > LIMITS[action].perEmail;

  return {
    async check(action, address, email) {
      const w = window();
      try {
        const counts = (await redis.mget(...keysOf(action, address, email, w.id))).map((v) => Number(v ?? 0));
        // the next attempt would be counted: refused once a count has reached its limit
        return over(action, [counts[0]! + 1, counts[1]! + 1]) ? w.wait : 0;
      } catch (err) {
        warn(`sign-in limits unavailable (${(err as Error).message}): attempt allowed`);
        return 0;
      }
    },
    async count(action, address, email) {
      const w = window();
      const [a, e] = keysOf(action, address, email, w.id);
      try {
        const replies = (await redis
          .multi()
          .incr(a!)
          .expire(a!, WINDOW_SECONDS)
          .incr(e!)
          .expire(e!, WINDOW_SECONDS)
          .exec()) as [Error | null, number][];
        return over(action, [replies[0]![1], replies[2]![1]]) ? w.wait : 0;
      } catch (err) {
        warn(`sign-in limits unavailable (${(err as Error).message}): attempt allowed`);
        return 0;
      }
    },
  };
}

/** "12 minutes", "1 minute", "40 seconds". */
export function waitText(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}
