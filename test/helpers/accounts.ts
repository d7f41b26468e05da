// Clients and keys for tests, made through the same service the operator CLI uses.
import type postgres from 'postgres';
import type { Redis } from 'ioredis';
import { accounts } from '../../src/accounts/service.ts';

export const TEST_KEY_SECRET = 'test-secret-0123456789-abcdefghijklmnopqrstuvwxyz';

export interface NewClientOptions {
  mode?: 'live' | 'test';
  signupAt?: Date;
  /** The app's Redis, so that changes made through `svc` reach running apps at once (as the CLI's do). */
  redis?: Redis;
}

export async function clientWithKey(sql: postgres.Sql, plan = 'growth', opts: NewClientOptions = {}) {
  const svc = accounts(sql, TEST_KEY_SECRET, opts.redis);
  const client = await svc.createClient({
    name: `Test ${plan}`,
    email: 'test@example.com',
    plan,
    signupAt: opts.signupAt,
  });
  const { key, row } = await svc.createKey(client.id, opts.mode ?? 'live');
  return { svc, client, key, keyId: row.id, headers: { authorization: `Bearer ${key}` } };
}
