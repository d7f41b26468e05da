// The MCP tools: one per read of the REST API, calling the same src/queries/ (no SQL here), with input schemas
// from TypeBox and descriptions written for a model.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AuthContext } from '../plugins/auth.ts';
import { getCounty, listCounties } from '../queries/counties.ts';
import { getAccountUsage } from '../queries/account.ts';
import { CountySlug } from '../schemas/common.ts';
import { periodOf } from '../plugins/metering.ts';
import { badRequest, notFound } from '../errors.ts';

export interface ToolContext {
  app: FastifyInstance;
  auth: AuthContext;
}

export interface ToolResult {
  /** The structured content: the REST response's `data` (and `pagination` / `facets` where REST has them). */
  structured: Record<string, unknown>;
  /** One or two sentences for the model. */
  summary: string;
}

export interface Tool<S extends TSchema = TSchema> {
  name: string;
  title: string;
  description: string;
  input: S;
  /** Free tools cost no credit (they still count against the per-minute limit). */
  free?: boolean;
  run: (ctx: ToolContext, args: Static<S>) => Promise<ToolResult>;
}

export const defineTool = <S extends TSchema>(tool: Tool<S>) => tool as unknown as Tool;

export { badRequest, notFound };

const countyTools = [
  defineTool({
    name: 'list_counties',
    title: 'List Florida counties',
    description:
      'All 67 Florida counties with their slug (use it as `county` in every other tool), FIPS code, revenue-department ' +
      'number, property-appraiser / tax-collector / certificate-sale sites, certificate-sale vendor, how many parcels ' +
      'are loaded (parcelCount; 0 means no parcel data yet) and when they were last imported. Call this first when you ' +
      'need a county slug or want to know which counties have data.',
    input: Type.Object({}),
    run: async ({ app }) => {
      const data = await listCounties(app.sql);
      const loaded = data.filter((c) => c.parcelCount > 0).length;
      return { structured: { data }, summary: `67 counties; ${loaded} have parcel data loaded.` };
    },
  }),
  defineTool({
    name: 'get_county',
    title: 'Get one county',
    description:
      'One county by slug (for example miami-dade, palm-beach, st-johns): offices, certificate-sale vendor, parcel count, last import time.',
    input: Type.Object({ county: CountySlug }),
    run: async ({ app }, { county }) => {
      const data = await getCounty(app.sql, county);
      if (!data) throw notFound(`No county with slug '${county}'. Call list_counties for the slugs.`);
      return { structured: { data }, summary: `${data.countyName} County: ${data.parcelCount} parcels loaded.` };
    },
  }),
];

const accountTools = [
  defineTool({
    name: 'get_account_usage',
    title: 'Credit usage this month',
    description:
      "How many credits your key's account used this UTC month (REST requests and MCP tool calls together; each " +
      'successful call costs 1 credit, errors are free), the monthly quota of its plan, percent used, and when it ' +
      'resets. This tool is free.',
    input: Type.Object({}),
    free: true,
    run: async ({ app, auth }) => {
      const pending = await app.pendingUsage(auth, periodOf(Date.now()));
      const data = await getAccountUsage(app.sql, auth.clientId, auth.mode, pending);
      return {
        structured: { data },
        summary: `${data.events_count} of ${data.monthly_quota} credits used (${data.percent_used}%) on the ${data.plan} plan; resets ${data.reset_date}.`,
      };
    },
  }),
];

export const TOOLS: Tool[] = [...countyTools, ...accountTools];
