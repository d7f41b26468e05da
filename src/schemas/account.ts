// Account usage.
import { Type, type Static } from '@sinclair/typebox';

export const AccountUsage = Type.Object(
  {
    events_count: Type.Integer({
      description: 'Charged (2xx) requests this UTC calendar month, REST and MCP together.',
    }),
    monthly_quota: Type.Integer({
      description: "The plan's monthly credits (free trial: 500, or 100 once capped; test keys: 100).",
    }),
    percent_used: Type.Number({
      description: 'events_count / monthly_quota * 100, 2 decimals; 0 when the quota is 0.',
    }),
    reset_date: Type.String({ description: 'ISO 8601 UTC start of the next calendar month.' }),
    plan: Type.String({
      description:
        "The plan's id: free, developer, pro, growth, lead_feed, enterprise or mcp_starter (free is the Free Trial).",
    }),
    plan_name: Type.String({
      description: "The plan's name as the site and its price list show it: Free Trial, Developer, Pro, Growth …",
    }),
  },
  { $id: 'AccountUsage' },
);
export type AccountUsage = Static<typeof AccountUsage>;
