// A saved search's parameters, checked as its GET endpoint checks them: the endpoint's own querystring schema (the
// same validator options, so the same 400 messages), then the endpoint's own mapping to the SQL filter builder's
// named arguments; the builder's checks run in SQL (saved.where_of). A filter added to an endpoint works here as is.
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { TObject } from '@sinclair/typebox';
import { badRequest, toApiError } from '../errors.ts';
import { filterArgs } from '../queries/parcels.ts';
import { splitList } from '../schemas/common.ts';
import { ParcelSearchQuery } from '../schemas/parcels.ts';
import { SearchQuery } from '../schemas/tax-delinquencies.ts';

export type Resource = 'parcels' | 'tax_delinquencies';

/** The paging and presentation parameters of the search endpoints: not filters, so left out of a saved search. */
const NOT_FILTERS = new Set(['limit', 'offset', 'sort', 'facets', 'format']);

/** As app.ts configures Fastify's validator: the querystring is coerced the same way, and `finite` is known. */
const ajv = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: false, allErrors: false });
addFormats.default(ajv);
ajv.addKeyword({
  keyword: 'finite',
  schemaType: 'boolean',
  validate: (on: boolean, n: unknown) => !on || typeof n !== 'number' || Number.isFinite(n),
  errors: false,
});

/** The delinquency endpoint's arguments: each parameter as p_<name>, the county list split as the endpoint does. */
const delinquencyArgs = (q: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(q).map(([k, v]) => [`p_${k}`, k === 'county' ? splitList(v as string | string[]) : v]),
  );

const RESOURCES: Record<Resource, { schema: TObject; args: (q: Record<string, unknown>) => object }> = {
  parcels: { schema: ParcelSearchQuery, args: (q) => filterArgs(q as ParcelSearchQuery) },
  tax_delinquencies: { schema: SearchQuery, args: delinquencyArgs },
};
const validators = new Map(Object.entries(RESOURCES).map(([name, r]) => [name, ajv.compile(r.schema)]));

/** A value as a query string carries it: text, lists joined with commas. */
function asQueryValue(name: string, v: unknown): string {
  if (Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number')) return v.join(',');
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw badRequest(`params: '${name}' must be a string, a number, a boolean or a list of strings`);
}

export interface CheckedParams {
  /** The filter parameters as a search URL carries them (shown back). */
  params: Record<string, string>;
  /** The SQL builder's named arguments (nulls left out). */
  args: Record<string, unknown>;
}

/** Checks a saved search's params for the resource; a 400 names the first problem, as the GET endpoint would. */
export function checkParams(resource: Resource, raw: unknown): CheckedParams {
  const r = RESOURCES[resource];
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('params: must be a JSON object');
  const known = Object.keys(r.schema.properties).filter((k) => !NOT_FILTERS.has(k));
  const params: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (NOT_FILTERS.has(k)) continue;
    if (!known.includes(k)) throw badRequest(`params: unknown parameter '${k}' (the filters are ${known.join(', ')})`);
    params[k] = asQueryValue(k, v);
  }
  const q: Record<string, unknown> = { ...params };
  const validate = validators.get(resource)!;
  if (!validate(q)) {
    throw toApiError(
      Object.assign(new Error('bad params'), {
        validation: validate.errors,
        validationContext: 'querystring',
        statusCode: 400,
      }),
    );
  }
  for (const k of NOT_FILTERS) delete q[k];
  const args = Object.fromEntries(Object.entries(r.args(q)).filter(([, v]) => v !== null && v !== undefined));
  return { params, args };
}

/** The filter parameters of a search URL (or of its query string alone), for the site's form. */
export function paramsOfUrl(url: string): { resource: Resource; params: Record<string, string> } {
  let u: URL;
  try {
    u = new URL(url, 'http://localhost');
  } catch {
    throw badRequest('url: must be a search URL such as /v1/tax-delinquencies/search?county=broward&min_due=3000');
  }
  const resource: Resource | undefined = u.pathname.endsWith('/parcels/search')
    ? 'parcels'
    : u.pathname.endsWith('/tax-delinquencies/search')
      ? 'tax_delinquencies'
      : undefined;
  if (!resource) throw badRequest('url: must be a /v1/parcels/search or /v1/tax-delinquencies/search URL');
  const params: Record<string, string> = {};
  for (const [k, v] of u.searchParams) params[k] = k in params ? `${params[k]},${v}` : v;
  return { resource, params };
}
