// The account site's only SQL: one call per site.* function (sql/site/), over the api_site connection. Sessions
// and links are passed as the SHA-256 of their tokens (sessions.ts); numbers are cast in SQL.
import type { Sql } from '../plugins/db.ts';

type Hash = Buffer;
/** A Redis hash of credits spent but not flushed yet (pend:<client>), as meter.credits_left reads it. */
export type Pending = Record<string, string>;

export interface SessionRow {
  user_id: string;
  client_id: string;
  email: string;
  name: string;
  plan: string;
  client_status: string;
}

export const touchSession = async (sql: Sql, session: Hash) =>
  (await sql<SessionRow[]>`SELECT * FROM site.touch_session(${session})`)[0];

export const createSession = (sql: Sql, userId: string, session: Hash) =>
  sql`SELECT site.create_session(${userId}::uuid, ${session})`;

export const endSession = (sql: Sql, session: Hash) => sql`SELECT site.end_session(${session})`;

export const endAllSessions = (sql: Sql, session: Hash) => sql`SELECT site.end_all_sessions(${session})`;

export const login = async (sql: Sql, email: string) =>
  (await sql<{ user_id: string; password_hash: string | null }[]>`SELECT * FROM site.login(${email})`)[0];

export const passwordHashOf = async (sql: Sql, session: Hash) =>
  (await sql<{ h: string | null }[]>`SELECT site.password_hash(${session}) AS h`)[0]!.h;

export const changePassword = (sql: Sql, session: Hash, passwordHash: string, newSession: Hash) =>
  sql`SELECT site.change_password(${session}, ${passwordHash}, ${newSession})`;

/** True when the email already has an account (nothing was kept). */
export const startSignup = async (sql: Sql, email: string, name: string, passwordHash: string, token: Hash) =>
  (
    await sql<{ exists: boolean }[]>`SELECT site.start_signup(${email}, ${name}, ${passwordHash}, ${token}) AS exists`
  )[0]!.exists;

export const checkLink = async (sql: Sql, token: Hash) =>
  (await sql<{ purpose: 'signup' | 'reset' | 'invite'; email: string }[]>`SELECT * FROM site.check_link(${token})`)[0];

export const finishSignup = async (sql: Sql, token: Hash, session: Hash) =>
  (await sql<{ id: string }[]>`SELECT site.finish_signup(${token}, ${session}) AS id`)[0]!.id;

/** The email to send the link to, or undefined when no account has that email. */
export const startReset = async (sql: Sql, email: string, token: Hash) =>
  (await sql<{ email: string }[]>`SELECT email FROM site.start_reset(${email}, ${token})`)[0]?.email;

export const finishReset = async (sql: Sql, token: Hash, passwordHash: string) =>
  (await sql<{ email: string }[]>`SELECT site.finish_reset(${token}, ${passwordHash}) AS email`)[0]!.email;

export interface AccountRow {
  client_id: string;
  name: string;
  email: string;
  client_status: string;
  signup_at: Date;
  trial_capped_at: Date | null;
  plan: string;
  plan_name: string;
  subscription_status: string;
  price_cents: number | null;
  rpm: number;
  rest: boolean;
  mcp: boolean;
  csv: boolean;
  webhooks: 'no' | 'beta' | 'yes';
  overage_allowed: boolean;
  events_count: number;
  monthly_quota: number;
  percent_used: number;
  reset_date: string;
  overage_credits: number;
  overage_cents: number;
  test_events: number;
  test_quota: number;
}

export const account = async (sql: Sql, session: Hash, pending: Pending, testPending: Pending) =>
  (
    await sql<AccountRow[]>`
      SELECT client_id, name, email, client_status, signup_at, trial_capped_at, plan, plan_name, subscription_status,
             price_cents, rpm, rest, mcp, csv, webhooks, overage_allowed, events_count::float8, monthly_quota::float8,
             percent_used, reset_date, overage_credits::float8, overage_cents, test_events::float8, test_quota::float8
        FROM site.account(${session}, ${sql.json(pending)}, ${sql.json(testPending)})`
  )[0]!;

export interface CreditRow {
  bucket: 'monthly' | 'pack' | 'credits';
  pack_id: string | null;
  pack: string | null;
  expires_at: Date | null;
  credits: number;
}

export const accountCredits = (sql: Sql, session: Hash, pending: Pending) =>
  sql<CreditRow[]>`
    SELECT bucket, pack_id, pack, expires_at, credits::float8
      FROM site.account_credits(${session}, ${sql.json(pending)}) ORDER BY spend_order`;

export interface KeyRow {
  id: string;
  mode: 'live' | 'test';
  display: string;
  status: 'active' | 'revoked';
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
  /** The name the customer gave the key, if any. */
  name: string | null;
}

export const listKeys = (sql: Sql, session: Hash) => sql<KeyRow[]>`SELECT * FROM site.list_keys(${session})`;

export const getKey = async (sql: Sql, session: Hash, keyId: string) =>
  (await sql<KeyRow[]>`SELECT * FROM site.get_key(${session}, ${keyId}::uuid)`)[0];

export const createKey = async (
  sql: Sql,
  session: Hash,
  mode: string,
  keyHash: Buffer,
  display: string,
  name: string | null = null,
) =>
  (
    await sql<KeyRow[]>`
      SELECT id, mode, display, status, created_at, NULL::timestamptz AS revoked_at, NULL::timestamptz AS last_used_at,
             name
        FROM site.create_key(${session}, ${mode}, ${keyHash}, ${display}, ${name})`
  )[0]!;

export const revokeKey = async (sql: Sql, session: Hash, keyId: string) =>
  (
    await sql<{ id: string; client_id: string; display: string }[]>`
      SELECT id, client_id, display FROM site.revoke_key(${session}, ${keyId}::uuid)`
  )[0];

export interface PlanRow {
  plan: string;
  display_name: string;
  monthly_credits: number;
  rpm: number;
  rest: boolean;
  mcp: boolean;
  csv: boolean;
  webhooks: 'no' | 'beta' | 'yes';
  overage: boolean;
  price_cents: number | null;
}

export const plans = (sql: Sql) =>
  sql<PlanRow[]>`
    SELECT plan, display_name, monthly_credits::float8, rpm, rest, mcp, csv, webhooks, overage, price_cents
      FROM site.plans()`;

export const packs = (sql: Sql) =>
  sql<{ pack: string; display_name: string; credits: number; price_cents: number }[]>`
    SELECT pack, display_name, credits::float8, price_cents FROM site.packs()`;

export interface UsageRow {
  day: string;
  key_id: string;
  key_display: string | null;
  mode: 'live' | 'test';
  surface: 'rest' | 'mcp';
  requests: number;
}

export const usageDaily = (sql: Sql, session: Hash, from: string, to: string) =>
  sql<UsageRow[]>`
    SELECT day::text, key_id, key_display, mode, surface, requests::float8
      FROM site.account_usage_daily(${session}, ${from}::date, ${to}::date)`;
