// Account usage: the only TypeScript that calls api.get_account_usage.
import type { Sql } from '../plugins/db.ts';
import type { AccountUsage } from '../schemas/account.ts';

export async function getAccountUsage(
  sql: Sql,
  clientId: string,
  mode: string,
  pending: number,
): Promise<AccountUsage> {
  const [row] = await sql<AccountUsage[]>`
    SELECT events_count::int, monthly_quota::float8, percent_used, reset_date, plan, plan_name
      FROM api.get_account_usage(p_client_id => ${clientId}::uuid, p_mode => ${mode}, p_pending => ${pending})`;
  return row!;
}
