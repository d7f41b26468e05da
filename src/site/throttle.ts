// Sign-up, sign-in and password-reset attempts limited per address and per email, in Redis (shared by every API
// process), in fixed 15-minute windows. The email is counted under its SHA-256, lower-cased, so Redis holds no
// address; an unknown email is counted exactly like a known one, so a refusal says nothing about which exist.
// An attempt is taken from both budgets in one Redis script before any work is done for it, so N attempts sent at
// once take N: none of them can slip between a check and a count.
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

/**
 * KEYS: the address's and the email's counters; ARGV: their limits and the window's length. Takes one attempt from
 * both, or from neither when either is spent (a refused attempt costs nothing, so one spent email does not spend its
 * address's budget too): 1 taken, 0 refused.
 */
const TAKE = `
local a = tonumber(redis.call('GET', KEYS[1]) or '0')
local e = tonumber(redis.call('GET', KEYS[2]) or '0')
if a >= tonumber(ARGV[1]) or e >= tonumber(ARGV[2]) then return 0 end
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return 1`;

/** KEYS as TAKE's: gives one attempt back to both (never below 0). */
const GIVE_BACK = `
for _, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') > 0 then redis.call('DECR', key) end
end
return 1`;

export interface Throttle {
  /** Takes an attempt: 0 when it may go ahead, else the seconds until the window ends (nothing is taken then). */
  take: (action: Action, address: string, email: string) => Promise<number>;
  /**
   * Takes an attempt, then runs `work` (the password check) and gives `ok`, its result; refused, `wait` is the seconds
   * until the window ends and `work` does not run. The attempt is given back when the password was right (sign-in
   * counts failures only); one whose check was refused as busy stays taken, so a burst cannot retry it for free.
   */
  guard: (
    action: Action,
    address: string,
    email: string,
    work: () => Promise<boolean>,
  ) => Promise<{ wait: number; ok: boolean }>;
}

const emailKey = (email: string) => createHash('sha256').update(email.trim().toLowerCase()).digest('base64url');

type Scripts = Redis & {
  siteTake: (a: string, e: string, ...limits: number[]) => Promise<number>;
  siteGiveBack: (a: string, e: string) => Promise<number>;
};

/** `warn` is told when Redis does not answer: the attempt is then allowed (as the API fails open). */
export function throttle(redis: Redis, warn: (message: string) => void): Throttle {
  redis.defineCommand('siteTake', { numberOfKeys: 2, lua: TAKE });
  redis.defineCommand('siteGiveBack', { numberOfKeys: 2, lua: GIVE_BACK });
  const r = redis as Scripts;
  const unavailable = (err: unknown) => warn(`sign-in limits unavailable (${(err as Error).message}): attempt allowed`);
  const window = () => {
    const now = Math.floor(Date.now() / 1000);
    const start = now - (now % WINDOW_SECONDS);
    return { id: start / WINDOW_SECONDS, wait: start + WINDOW_SECONDS - now };
  };
  const keysOf = (action: Action, address: string, email: string, id: number) =>
    [`site:throttle:${action}:a:${address}:${id}`, `site:throttle:${action}:e:${emailKey(email)}:${id}`] as const;

  /** The attempt's keys, and the wait when it was refused (0: taken). */
  const takeOne = async (action: Action, address: string, email: string) => {
    const w = window();
    const keys = keysOf(action, address, email, w.id);
    const limit = LIMITS[action];
    try {
      const taken = await r.siteTake(...keys, limit.perAddress, limit.perEmail, WINDOW_SECONDS);
      return { keys, wait: taken === 1 ? 0 : w.wait };
    } catch (err) {
      unavailable(err);
      return { keys, wait: 0 };
    }
  };
  return {
    take: async (action, address, email) => (await takeOne(action, address, email)).wait,
    async guard(action, address, email, work) {
      const { keys, wait } = await takeOne(action, address, email);
      if (wait > 0) return { wait, ok: false };
      const ok = await work();
      if (ok) await r.siteGiveBack(...keys).catch(unavailable);
      return { wait: 0, ok };
    },
  };
}

/** "12 minutes", "1 minute", "40 seconds". */
export function waitText(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}
