// The MCP tools: one per read of the REST API, calling the same src/queries/ (no SQL here), with input schemas
// from TypeBox and descriptions written for a model.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AuthContext } from '../plugins/auth.ts';
import { getCounty, listCounties } from '../queries/counties.ts';
import { getAccountUsage } from '../queries/account.ts';
import { CountySlug, ListEnvelope, ObjectEnvelope } from '../schemas/common.ts';
import { CountyRecord } from '../schemas/counties.ts';
import { AccountUsage } from '../schemas/account.ts';
import { periodOf } from '../metering/periods.ts';
import { badRequest, notFound } from '../errors.ts';
import { getParcel, getParcelByParcelId, searchParcels } from '../queries/parcels.ts';
import { listParcelSales, searchSales } from '../queries/sales.ts';
import { ParcelHit, ParcelSearchEnvelope, ParcelSearchQuery, ByParcelIdQuery } from '../schemas/parcels.ts';
import { SaleHit, SaleSearchQuery } from '../schemas/sales.ts';
import { Limit, Offset } from '../schemas/common.ts';
import {
  countTaxDelinquencies,
  getTaxDelinquenciesByParcel,
  getTaxDelinquencyFreshness,
  listTaxDelinquencySources,
  searchTaxDelinquencies,
} from '../queries/tax-delinquencies.ts';
import {
  ByParcelQuery,
  CountsQuery,
  DelinquencyCounts,
  DelinquencyFreshness,
  DelinquencyHit,
  SearchQuery,
  SourcesQuery,
  TaxDelinquencySource,
} from '../schemas/tax-delinquencies.ts';
import { historyTools } from './tools-history.ts';
import { certificateTools } from './tools-certificates.ts';
import { savedSearchTools } from './tools-saved.ts';

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
  /**
   * The REST route's 200 response schema: structured content is that answer without `meta`, and so is the tool's
   * outputSchema (src/mcp/server.ts).
   */
  output?: TSchema;
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
    output: ObjectEnvelope(Type.Array(CountyRecord)),
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
    output: ObjectEnvelope(CountyRecord),
    run: async ({ app }, { county }) => {
      const data = await getCounty(app.sql, county);
      if (!data) throw notFound(`No county with slug '${county}'. Call list_counties for the slugs.`);
      return { structured: { data }, summary: `${data.countyName} County: ${data.parcelCount} parcels loaded.` };
    },
  }),
];

const describeParcel = (p: {
  parcel_id: string;
  county_name: string;
  owner_name: string | null;
  site_address_full: string | null;
  just_value: number | null;
}) =>
  `${p.parcel_id} (${p.county_name}): ${p.owner_name ?? 'owner unknown'}, ${p.site_address_full ?? 'no site address'}, just value ${p.just_value === null ? 'unknown' : `$${p.just_value.toLocaleString('en-US')}`}`;

const parcelTools = [
  defineTool({
    name: 'search_parcels',
    title: 'Search Florida parcels',
    description:
      'Find parcels (properties on the county assessment roll) statewide. `query` matches owner names and site ' +
      'addresses, typo-tolerant ("SMITH JOHN" also finds "JOHN SMITH"; "123 OAK DRIVE" finds "123 OAK DR"). Narrow with ' +
      '`county` (slugs from list_counties), `dor_use_code` (statewide land use: 01 single family, 04 condominium, 00 ' +
      'vacant residential, 11 stores, 17 offices, 48 warehouses …), city, zip, value bounds in dollars (just value = ' +
      'market value; assessed = after caps; taxable = after exemptions), last-sale dates and prices, or place: `near` ' +
      '"lat,lng" with `radius_m` in metres (≤ 50000), `bbox` "minLng,minLat,maxLng,maxLat", `point` "lng,lat" (the parcel ' +
      'containing it). `facets` (county, dor_use_code, property_use_code, city, zip) counts values over all matches. ' +
      'Results have no polygon: call get_parcel with a result `id` for the polygon and get_parcel_sales for its sales.',
    input: ParcelSearchQuery,
    output: ParcelSearchEnvelope,
    run: async ({ app }, args) => {
      const result = await searchParcels(app.sql, args);
      const first = result.data[0];
      return {
        structured: { ...result },
        summary: `${result.pagination.total} parcels match; showing ${result.data.length}${first ? `, first: ${describeParcel(first)}` : ''}.`,
      };
    },
  }),
  defineTool({
    name: 'get_parcel',
    title: 'Get one parcel with its polygon',
    description:
      'One parcel with every roll field and its polygon (GeoJSON in `geometry`, WGS 84). Give either `id` (from ' +
      "search_parcels) or `county` + `parcel_id` (the county's folio / PIN; punctuation does not matter: " +
      '01-3132-035-0010 = 0131320350010).',
    input: Type.Object({
      id: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 2147483647, description: 'Internal parcel id from search_parcels.' }),
      ),
      county: Type.Optional(ByParcelIdQuery.properties.county),
      parcel_id: Type.Optional(ByParcelIdQuery.properties.parcel_id),
    }),
    output: ObjectEnvelope(ParcelHit),
    run: async ({ app }, { id, county, parcel_id }) => {
      let parcel;
      if (id !== undefined) parcel = await getParcel(app.sql, id);
      else if (county !== undefined && parcel_id !== undefined)
        parcel = await getParcelByParcelId(app.sql, county, parcel_id);
      else throw badRequest("Give 'id', or both 'county' and 'parcel_id'.");
      if (!parcel) throw notFound('No such parcel.');
      return { structured: { data: parcel }, summary: describeParcel(parcel) };
    },
  }),
  defineTool({
    name: 'get_parcel_sales',
    title: "A parcel's sale history",
    description:
      'Recorded sales (deed transfers) of one parcel by its `id`, newest first: date, price in dollars, deed book/page, ' +
      'instrument number, deed code (WD warranty deed, QCD quit-claim …) and FDOR qualification code (01 = qualified ' +
      "arm's-length sale). FDOR sale dates have month precision (the 1st of the month).",
    input: Type.Object({
      id: Type.Integer({ minimum: 1, maximum: 2147483647, description: 'Internal parcel id.' }),
      limit: Limit(),
      offset: Offset,
    }),
    output: ListEnvelope(SaleHit),
    run: async ({ app }, { id, limit, offset }) => {
      const sales = await listParcelSales(app.sql, id, limit, offset);
      if (!sales) throw notFound(`No parcel with id ${id}.`);
      const last = sales.data[0];
      return {
        structured: { ...sales },
        summary: `${sales.pagination.total} recorded sales${last ? `; latest ${last.sale_date} for $${(last.sale_price ?? 0).toLocaleString('en-US')}` : ''}.`,
      };
    },
  }),
  defineTool({
    name: 'search_sales',
    title: 'Search recorded sales',
    description:
      'Recorded sales statewide by county slugs, date range (`from`/`to`, YYYY-MM-DD), price bounds in dollars and DOR ' +
      'use codes; sort date_newest (default), date_oldest, price_desc, price_asc. Counties whose sales are not loaded ' +
      'return an empty list.',
    input: SaleSearchQuery,
    output: ListEnvelope(SaleHit),
    run: async ({ app }, args) => {
      const result = await searchSales(app.sql, args);
      return {
        structured: { ...result },
        summary: `${result.pagination.total} sales match; showing ${result.data.length}.`,
      };
    },
  }),
];

const money = (n: number | null) => (n === null ? 'unknown' : `$${n.toLocaleString('en-US')}`);
const CERTIFICATES =
  'A delinquency is real-property tax for year N still unpaid on April 1 of N+1; at the county certificate sale ' +
  '(by June 1) investors buy a tax certificate: a lien on the parcel that earns interest at the winning bid rate ' +
  '(bid down from 18%), NOT ownership. A certificate nobody bids on is struck to the county at 18%. Statuses: ' +
  'delinquent (unpaid, no certificate yet), open, certificate_sold, struck (county held), redeemed (paid off), ' +
  'unknown (no status in the feed). Amounts are dollars: delinquent_amount (the unpaid tax), total_due (with ' +
  'interest and costs), face_amount (the certificate principal).';

const delinquencyTools = [
  defineTool({
    name: 'search_tax_delinquencies',
    title: 'Search delinquent taxes and tax certificates',
    description:
      `Delinquent-tax and tax-certificate records in Florida counties that have a feed (see ` +
      `list_tax_delinquency_sources). ${CERTIFICATES} Filter by county slugs, tax_year, status, total_due bounds ` +
      '(min_due / max_due), owner (contains, case-insensitive), parcel_id (punctuation-insensitive), vendor, ' +
      'certificate_number; sort due_desc (default), due_asc, year_newest. A county without a feed returns an empty ' +
      'list, which does not mean its parcels are current: check the sources.',
    input: SearchQuery,
    output: ListEnvelope(DelinquencyHit),
    run: async ({ app }, args) => {
      const result = await searchTaxDelinquencies(app.sql, args);
      const first = result.data[0];
      return {
        structured: { ...result },
        summary:
          `${result.pagination.total} records match; showing ${result.data.length}` +
          (first
            ? `, first: ${first.county_parcel_id} (${first.county_slug}) ${first.tax_year ?? ''} ${first.status ?? 'unknown'}, total due ${money(first.total_due)}.`
            : '.'),
      };
    },
  }),
  defineTool({
    name: 'get_parcel_tax_delinquencies',
    title: "A parcel's delinquencies and certificates",
    description:
      "Every delinquency and tax-certificate record of one parcel, newest tax year first. Give the county's parcel " +
      'id (folio / PIN; punctuation does not matter) and, recommended, its county slug. Use it to check a parcel ' +
      `before lending or buying: an empty list means no record in a loaded feed. ${CERTIFICATES}`,
    input: ByParcelQuery,
    output: ListEnvelope(DelinquencyHit),
    run: async ({ app }, args) => {
      const result = await getTaxDelinquenciesByParcel(app.sql, args);
      const open = result.data.filter((d) => d.status !== 'redeemed').length;
      return {
        structured: { ...result },
        summary:
          result.pagination.total === 0
            ? `No delinquency records for ${args.parcel_id}${args.county ? ` in ${args.county}` : ''}.`
            : `${result.pagination.total} records for ${args.parcel_id}; ${open} of those shown are not redeemed.`,
      };
    },
  }),
  defineTool({
    name: 'count_tax_delinquencies',
    title: 'Delinquency records per status',
    description:
      'How many delinquency / certificate records there are per status, most frequent first, statewide or for one ' +
      'county slug and/or tax year. Cheap way to size a county before searching it. A county without a feed has no ' +
      'counts.',
    input: CountsQuery,
    output: ObjectEnvelope(DelinquencyCounts),
    run: async ({ app }, args) => {
      const data = await countTaxDelinquencies(app.sql, args);
      const { counts } = data;
      const total = counts.reduce((n, c) => n + c.count, 0);
      return {
        structured: { data },
        summary: `${total} records${args.county ? ` in ${args.county}` : ' statewide'}${args.tax_year ? ` for ${args.tax_year}` : ''}: ${counts.map((c) => `${c.status} ${c.count}`).join(', ') || 'none'}.`,
      };
    },
  }),
  defineTool({
    name: 'list_tax_delinquency_sources',
    title: 'Delinquency feeds: which counties and years are covered',
    description:
      'The delinquency / certificate feeds we load, one per county and tax year: vendor (certificate-sale portal such ' +
      'as LienHub or RealTaxLien), portal address, source_kind (cert_sale_portal, bulk_download), whether it needs a ' +
      'login, when it was last checked and last succeeded, the last error, and whether it is active. Counties without ' +
      'a row have no feed. Filter by county slug, vendor (contains), source_kind, active.',
    input: SourcesQuery,
    output: ListEnvelope(TaxDelinquencySource),
    run: async ({ app }, args) => {
      const result = await listTaxDelinquencySources(app.sql, args);
      const counties = new Set(result.data.map((s) => s.countySlug)).size;
      return {
        structured: { ...result },
        summary: `${result.pagination.total} feed sources; the ${result.data.length} shown cover ${counties} counties.`,
      };
    },
  }),
  defineTool({
    name: 'get_tax_delinquency_freshness',
    title: 'How current the delinquency data is',
    description:
      'Total delinquency records, the newest tax year loaded, when records were last ingested and when a feed last ' +
      'succeeded (ISO 8601 UTC).',
    input: Type.Object({}),
    output: ObjectEnvelope(DelinquencyFreshness),
    run: async ({ app }) => {
      const data = await getTaxDelinquencyFreshness(app.sql);
      return {
        structured: { data },
        summary: `${data.total} records, newest tax year ${data.latest_tax_year ?? 'none'}, last ingested ${data.last_ingested_at ?? 'never'}.`,
      };
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
    output: ObjectEnvelope(AccountUsage),
    run: async ({ app, auth }) => {
      const data = await app.withPendingUsage(auth, periodOf(Date.now()), (pending) =>
        getAccountUsage(app.primarySql, auth.clientId, auth.mode, pending),
      );
      return {
        structured: { data },
        summary: `${data.events_count} of ${data.monthly_quota} credits used (${data.percent_used}%) on the ${data.plan_name} plan; resets ${data.reset_date}.`,
      };
    },
  }),
];

export const TOOLS: Tool[] = [
  ...parcelTools,
  ...delinquencyTools,
  ...countyTools,
  ...accountTools,
  ...historyTools,
  ...certificateTools,
  ...savedSearchTools,
];
