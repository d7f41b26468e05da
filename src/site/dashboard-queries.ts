// The dashboard's SQL: one call per site.* function of sql/site/dashboard.sql, over the api_site connection, with
// the session's SHA-256 (as in queries.ts); numbers cast in SQL.
import type { Sql } from '../plugins/db.ts';

type Hash = Buffer;

export interface LoggedRequest {
  at: Date;
  key_id: string;
  key_display: string | null;
  key_name: string | null;
  method: string;
  path: string;
  endpoint: string | null;
  status: number;
  error_code: string | null;
  duration_ms: number;
  total: number;
}

export const requestLog = (sql: Sql, session: Hash, status: string, search: string, limit: number, offset: number) =>
  sql<LoggedRequest[]>`
    SELECT at, key_id, key_display, key_name, method, path, endpoint, status, error_code, duration_ms, total::float8
      FROM site.account_request_log(${session}, ${status}, ${search}, ${limit}, ${offset})`;

export interface EndpointUsageRow {
  endpoint: string;
  key_id: string;
  key_display: string | null;
  key_name: string | null;
  mode: 'live' | 'test' | null;
  ok: number;
  failed: number;
}

export const endpointUsage = (sql: Sql, session: Hash, from: string, to: string) =>
  sql<EndpointUsageRow[]>`
    SELECT endpoint, key_id, key_display, key_name, mode, ok::float8, failed::float8
      FROM site.account_endpoint_usage(${session}, ${from}::date, ${to}::date)`;

export const renameKey = async (sql: Sql, session: Hash, keyId: string, name: string) =>
  (
    await sql<{ id: string; display: string; name: string | null }[]>`
    SELECT id, display, name FROM site.rename_key(${session}, ${keyId}::uuid, ${name})`
  )[0];

export interface CreditAlert {
  threshold: number;
  last_sent_period: string | null;
  last_sent_at: Date | null;
}

export const creditAlert = async (sql: Sql, session: Hash) =>
  (
    await sql<CreditAlert[]>`
    SELECT threshold::float8, last_sent_period, last_sent_at FROM site.credit_alert(${session})`
  )[0] ?? null;

export const setCreditAlert = (sql: Sql, session: Hash, threshold: number | null) =>
  sql`SELECT site.set_credit_alert(${session}, ${threshold}::bigint)`;

export interface LowCredit {
  client_id: string;
  email: string;
  name: string;
  threshold: number;
  credits_left: number;
  period: string;
}

/** On the metering's api_meter connection (app.meterSql): it reads every client with a threshold. */
export const claimLowCreditAlerts = (meterSql: Sql, now: Date) =>
  meterSql<LowCredit[]>`
    SELECT client_id, email, name, threshold::float8, credits_left::float8, period
      FROM meter.claim_low_credit_alerts(${now})`;
