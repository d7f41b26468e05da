// Clients and keys for tests, made through the same service the operator CLI uses.
import type postgres from 'postgres';
import { accounts } from '../../src/accounts/service.ts';

export const TEST_KEY_SECRET = 'test-secret-0123456789-abcdefghijklmnopqrstuvwxyz';

export async function clientWithKey(
  sql: postgres.Sql,
  plan = 'growth',
  opts: { mode?: 'live' | 'test'; signupAt?: Date } = {},
) {
  const svc = accounts(sql, TEST_KEY_SECRET);
  const client = await svc.createClient({
    name: `Test ${plan}`,
    email: 'test@example.com',
    plan,
    signupAt: opts.signupAt,
  });
  const { key, row } = await svc.createKey(client.id, opts.mode ?? 'live');
  return { svc, client, key, keyId: row.id, headers: { authorization: `Bearer ${key}` } };
}
