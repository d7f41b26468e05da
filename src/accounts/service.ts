// Clients and keys: what the operator CLI and the web account page do, over the owner connection.
import type postgres from 'postgres';
import type { Redis } from 'ioredis';
import { displayKey, generateKey, hashKey, type KeyMode } from './keys.ts';
import { newToken, tokenHash } from '../site/tokens.ts';
import { whenReady } from '../plugins/redis.ts';

export const PLANS = ['free', 'developer', 'pro', 'growth', 'lead_feed', 'enterprise', 'mcp_starter'] as const;
export type Plan = (typeof PLANS)[number];

/** A client's pending counts in Redis (pend:<client>) and the usage batches not yet acknowledged, read in one instant. */
interface Pending {
  counts: Record<string, string>;
  batches: string[];
}

export const PACKS = ['starter', 'investigator', 'bulk', 'power'] as const;

export class AccountError extends Error {}

/** How long a command waits for a Redis connection still being made before it goes on without Redis. */
const REDIS_READY_MS = 5000;

export interface PackRow {
  id: string;
  client_id: string;
  pack: string;
  credits: number;
  purchased_at: Date;
  expires_at: Date;
}

export interface ClientRow {
  id: string;
  name: string;
  email: string;
  status: string;
  plan: string;
  subscription_status: string;
  signup_at: Date;
}

export const CLIENT_STATUSES = ['active', 'suspended'] as const;
type ClientStatus = (typeof CLIENT_STATUSES)[number];

/** What `client list` narrows by; every field optional. */
export interface ClientFilter {
  plan?: string;
  status?: string;
  /** A fragment of the email, matched in any case. */
  email?: string;
  /** At most this many clients (default 100). */
  limit?: number;
}

export interface KeyRow {
  id: string;
  client_id: string;
  mode: string;
  display: string;
  status: string;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
  /** The name given to the key (on the site, or `createKey`'s), if any. */
  name: string | null;
}

const one = <T>(rows: T[], what: string): T => {
  const [row] = rows;
  if (!row) throw new AccountError(`${what} not found`);
  return row;
};

/**
 * `redis`: the API's Redis (same key prefix). Every change to a client deletes its hot balance there, which makes
 * every API process re-read the client and its keys from Postgres on its next request: that is what makes
 * revocation and suspension take effect on the very next request although processes cache valid keys.
 */
export function accounts(sql: postgres.Sql, secret: string, redis?: Redis, warn: (m: string) => void = () => {}) {
  /**
   * The connection, once ready: a client that does not queue commands (createRedis) refuses them while it connects,
   * which a freshly started CLI on a loaded machine would otherwise take for Redis being down.
   */
  let ready: Promise<boolean> | null = null;
  const connected = async (r: Redis) => {
    if (!(await (ready ??= whenReady(r, REDIS_READY_MS)))) {
      throw new Error(`no connection within ${REDIS_READY_MS / 1000} s`);
    }
    return r;
  };
  const invalidate = async <T extends { id?: string; client_id?: string }>(row: T): Promise<T> => {
    const clientId = row.client_id ?? row.id;
    if (!redis || !clientId) return row;
    try {
      await (await connected(redis)).del(`st:${clientId}`, `st:${clientId}:test`);
    } catch (err) {
      warn(`Redis not reachable (${(err as Error).message}): API processes will see this change within 60 seconds`);
    }
    return row;
  };
  /**
   * The client's credits spent but not flushed to Postgres yet (its Redis hash pend:<client>), so that what is shown
   * and debited matches what the API admits against, and the usage batches not yet acknowledged, read in the same
   * instant: every pending count is in one of them. Nothing without Redis.
   */
  const pending = async (clientId: string): Promise<Pending> => {
    if (!redis) return { counts: {}, batches: [] };
    try {
      const r = await connected(redis);
      const replies = await r.multi().lrange('usage:batches', 0, -1).hgetall(`pend:${clientId}`).exec();
      const [[listErr, batches], [pendErr, counts]] = replies as [[Error | null, string[]], [Error | null, never]];
      if (listErr ?? pendErr) throw listErr ?? pendErr;
      return { counts, batches };
    } catch (err) {
      warn(`Redis not reachable (${(err as Error).message}): requests of the last seconds are not counted`);
      return { counts: {}, batches: [] };
    }
  };
  /** Our SQL's refusals as one-line errors: an unknown client, bad input, an email already taken, a race lost. */
  const refusal = (err: unknown, what: string) => {
    const e = err as { code?: string; message: string };
    if (e.code === 'P0002') return new AccountError(`${what} not found`);
    if (e.code === '22023' || e.code === '23505' || e.code === '40001') return new AccountError(e.message);
    return err;
  };
  /**
   * Runs `read` on Postgres with the client's pending counts until meter.refuse_recorded lets it through: refused with
   * 40001, a flush recorded one of the batches those counts are in meanwhile, so Redis and Postgres are read again
   * (five tries at most).
   */
  const withPending = async <T>(clientId: string, read: (p: Pending) => Promise<T>): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await read(await pending(clientId));
      } catch (err) {
        if ((err as { code?: string }).code !== '40001' || attempt === 5) throw refusal(err, `client ${clientId}`);
      }
    }
  };
  return {
    async createClient(input: { name: string; email: string; plan: string; signupAt?: Date }): Promise<ClientRow> {
      if (!PLANS.includes(input.plan as Plan))
        throw new AccountError(`unknown plan '${input.plan}' (one of ${PLANS.join(', ')})`);
      const [row] = await sql<ClientRow[]>`
        INSERT INTO accounts.clients (name, email, plan, signup_at)
        VALUES (${input.name}, ${input.email}, ${input.plan}, ${input.signupAt ?? new Date()})
        RETURNING id, name, email, status, plan, subscription_status, signup_at`;
      return row!;
    },

    async setStatus(clientId: string, status: 'active' | 'suspended'): Promise<ClientRow> {
      return invalidate(
        one(
          await sql<ClientRow[]>`
          UPDATE accounts.clients SET status = ${status}, updated_at = now() WHERE id = ${clientId}
          RETURNING id, name, email, status, plan, subscription_status, signup_at`,
          `client ${clientId}`,
        ),
      );
    },

    async setPlan(clientId: string, plan: string, subscriptionStatus?: string): Promise<ClientRow> {
      if (!PLANS.includes(plan as Plan)) throw new AccountError(`unknown plan '${plan}' (one of ${PLANS.join(', ')})`);
      return invalidate(
        one(
          await sql<ClientRow[]>`
          UPDATE accounts.clients
             SET plan = ${plan}, subscription_status = coalesce(${subscriptionStatus ?? null}, subscription_status), updated_at = now()
           WHERE id = ${clientId}
          RETURNING id, name, email, status, plan, subscription_status, signup_at`,
          `client ${clientId}`,
        ),
      );
    },

    /** Creates a key and returns the raw value: the only time it exists outside the client's hands. */
    async createKey(
      clientId: string,
      mode: KeyMode = 'live',
      name: string | null = null,
    ): Promise<{ key: string; row: KeyRow }> {
      const key = generateKey(mode);
      const rows = await sql<KeyRow[]>`
        INSERT INTO accounts.api_keys (client_id, mode, key_hash, display, name)
        SELECT id, ${mode}, ${hashKey(secret, key)}, ${displayKey(key)}, site.key_name(${name})
          FROM accounts.clients WHERE id = ${clientId}
        RETURNING id, client_id, mode, display, status, created_at, revoked_at, last_used_at, name`;
      return { key, row: one(rows, `client ${clientId}`) };
    },

    async listKeys(clientId: string): Promise<KeyRow[]> {
      return sql<KeyRow[]>`
        SELECT id, client_id, mode, display, status, created_at, revoked_at, last_used_at, name
          FROM accounts.api_keys WHERE client_id = ${clientId} ORDER BY created_at, id`;
    },

    async revokeKey(keyId: string): Promise<KeyRow> {
      return invalidate(
        one(
          await sql<KeyRow[]>`
          UPDATE accounts.api_keys SET status = 'revoked', revoked_at = coalesce(revoked_at, now())
           WHERE id = ${keyId}
          RETURNING id, client_id, mode, display, status, created_at, revoked_at, last_used_at, name`,
          `key ${keyId}`,
        ),
      );
    },

    /** Records a one-time credit pack; it expires 12 months after purchase. */
    async grantPack(clientId: string, pack: string, purchasedAt: Date = new Date()): Promise<PackRow> {
      if (!PACKS.includes(pack as (typeof PACKS)[number]))
        throw new AccountError(`unknown pack '${pack}' (one of ${PACKS.join(', ')})`);
      return one(
        await sql<PackRow[]>`
          INSERT INTO accounts.credit_packs (client_id, pack, credits, purchased_at, expires_at)
          SELECT c.id, t.pack, t.credits, ${purchasedAt}, ${purchasedAt}::timestamptz + interval '12 months'
            FROM accounts.clients c, accounts.pack_types t
           WHERE c.id = ${clientId} AND t.pack = ${pack}
          RETURNING id, client_id, pack, credits::int, purchased_at, expires_at`,
        `client ${clientId}`,
      );
    },

    /** An enterprise contract's own numbers; null restores the plan's. */
    async setLimits(
      clientId: string,
      limits: { rpm?: number | null; monthlyCredits?: number | null },
    ): Promise<ClientRow> {
      return one(
        await sql<ClientRow[]>`
          UPDATE accounts.clients
             SET custom_rpm = CASE WHEN ${limits.rpm !== undefined} THEN ${limits.rpm ?? null}::int ELSE custom_rpm END,
                 custom_monthly_credits = CASE WHEN ${limits.monthlyCredits !== undefined} THEN ${limits.monthlyCredits ?? null}::bigint
                                               ELSE custom_monthly_credits END,
                 updated_at = now()
           WHERE id = ${clientId}
          RETURNING id, name, email, status, plan, subscription_status, signup_at`,
        `client ${clientId}`,
      );
    },

    /**
     * A credit adjustment (refund, goodwill, correction), recorded in the ledger by meter.adjust_credits: a positive
     * one adds one-time credits; a negative one is debited in spending order (monthly grant, packs, one-time
     * credits), one ledger row per bucket (`parts`), and refused beyond what the client has left.
     */
    async adjustCredits(clientId: string, credits: number, reason: string) {
      if (!Number.isInteger(credits) || credits === 0)
        throw new AccountError('--credits must be a non-zero whole number');
      if (reason.trim() === '') throw new AccountError('--reason must say why');
      type Part = { id: string; bucket: string; pack_id: string | null; period: string | null; delta: number };
      const parts = await withPending(
        clientId,
        ({ counts, batches }) => sql<(Part & { created_at: Date })[]>`
          SELECT id::text, bucket, pack_id, period, delta::int, created_at
            FROM meter.adjust_credits(${clientId}::uuid, ${credits}, ${reason}, ${sql.json(counts)}, ${batches}::text[])`,
      );
      const first = one(parts, `client ${clientId}`);
      return invalidate({
        id: first.id,
        client_id: clientId,
        delta: credits,
        reason,
        created_at: first.created_at,
        parts,
      });
    },

    /**
     * An invitation to the account site for a client made here: its sign-in (with the client's email) and a link to
     * set its password, valid 7 days. Returns the email and the link (the caller mails or prints it).
     */
    async invite(clientId: string, siteUrl: string): Promise<{ email: string; name: string; link: string }> {
      const token = newToken();
      let rows;
      try {
        rows = await sql<
          { email: string; name: string }[]
        >`SELECT * FROM site.start_invite(${clientId}::uuid, ${tokenHash(token)})`;
      } catch (err) {
        throw refusal(err, `client ${clientId}`);
      }
      const row = one(rows, `client ${clientId}`);
      return { ...row, link: `${siteUrl}/account/reset/confirm?token=${token}` };
    },

    /** Everything an operator asks about a client: plan, balances by bucket, this month's usage, ledger, overage. */
    async showClient(clientId: string) {
      const client = one(
        await sql<
          (ClientRow & {
            custom_rpm: number | null;
            custom_monthly_credits: number | null;
            trial_capped_at: Date | null;
          })[]
        >`
          SELECT id, name, email, status, plan, subscription_status, signup_at, custom_rpm,
                 custom_monthly_credits::float8 AS custom_monthly_credits, trial_capped_at
            FROM accounts.clients WHERE id = ${clientId}`,
        `client ${clientId}`,
      );
      // the account site's figures (meter.credits_left and the usage read, with what Redis has not flushed yet)
      const period = new Date().toISOString().slice(0, 7);
      const { balances, usage } = await withPending(clientId, async ({ counts, batches }) => {
        const [balances] = await sql`
          WITH b AS (SELECT * FROM meter.credits_left(${clientId}::uuid, ${sql.json(counts)}))
          SELECT (SELECT credits FROM b WHERE bucket = 'monthly')::float8 AS monthly,
                 (SELECT credits FROM b WHERE bucket = 'credits')::float8 AS credits,
                 (overage + ${Number(counts[`o:${period}`] ?? 0)})::float8 AS overage_used,
                 coalesce((SELECT jsonb_agg(jsonb_build_object('id', pack_id, 'pack', pack, 'remaining', credits,
                                                               'expires_at', expires_at) ORDER BY spend_order)
                             FROM b WHERE bucket = 'pack'), '[]') AS packs
            FROM meter.client_balance(${clientId}::uuid, 'live', ${period})`;
        const [usage] = await sql`
          SELECT events_count::float8, monthly_quota::float8, percent_used, reset_date, plan
            FROM api.get_account_usage(p_client_id => ${clientId}::uuid,
                                       p_pending => ${Number(counts[`n:${period}`] ?? 0)})`;
        await sql`SELECT meter.refuse_recorded(${batches}::text[])`;
        return { balances, usage };
      });
      const ledger = await sql`
        SELECT id::int, bucket, pack_id, period, delta::int, reason, created_at
          FROM meter.ledger WHERE client_id = ${clientId} ORDER BY id DESC LIMIT 50`;
      const overage = await sql`
        SELECT day::text, credits::int, amount_cents FROM meter.overage_invoice_lines
         WHERE client_id = ${clientId} ORDER BY day DESC LIMIT 62`;
      return { client, balances, usage, ledger, overage };
    },

    /**
     * Clients newest first (by sign-up), narrowed by plan, status and a fragment of the email (any case; `%` and `_`
     * are plain characters). At most `limit`, and whether more matched.
     */
    async listClients(filter: ClientFilter = {}): Promise<{ clients: ClientRow[]; more: boolean }> {
      if (filter.plan !== undefined && !PLANS.includes(filter.plan as Plan))
        throw new AccountError(`unknown plan '${filter.plan}' (one of ${PLANS.join(', ')})`);
      if (filter.status !== undefined && !CLIENT_STATUSES.includes(filter.status as ClientStatus))
        throw new AccountError(`unknown status '${filter.status}' (one of ${CLIENT_STATUSES.join(', ')})`);
      const limit = filter.limit ?? 100;
      const fragment = filter.email === undefined ? null : `%${filter.email.replace(/[\\%_]/g, '\\$&')}%`;
      const rows = await sql<ClientRow[]>`
        SELECT id, name, email, status, plan, subscription_status, signup_at
          FROM accounts.clients
         WHERE (${filter.plan ?? null}::text IS NULL OR plan = ${filter.plan ?? null})
           AND (${filter.status ?? null}::text IS NULL OR status = ${filter.status ?? null})
           AND (${fragment}::text IS NULL OR email ILIKE ${fragment})
         ORDER BY signup_at DESC, id
         LIMIT ${limit + 1}`;
      return { clients: rows.slice(0, limit), more: rows.length > limit };
    },

    /** The clients whose email is `email`, in any case, newest first; refused when there is none. */
    async findClients(email: string): Promise<ClientRow[]> {
      const rows = await sql<ClientRow[]>`
        SELECT id, name, email, status, plan, subscription_status, signup_at
          FROM accounts.clients WHERE lower(email) = lower(${email.trim()})
         ORDER BY signup_at DESC, id`;
      if (rows.length === 0) throw new AccountError(`no client with the email ${email.trim()}`);
      return rows;
    },

    /** True when the raw key is active for an active client (the demo key's reuse check). */
    async isActiveKey(key: string): Promise<boolean> {
      const rows = await sql`SELECT 1 FROM accounts.authenticate(${hashKey(secret, key)})`;
      return rows.length > 0;
    },
  };
}
export type Accounts = ReturnType<typeof accounts>;
