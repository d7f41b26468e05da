// Envelopes, pagination, errors and shared parameter types, as TypeBox schemas.
import { FormatRegistry, Kind, Type, TypeRegistry, type TSchema, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';

/** What a pattern means, in words: a 400 says this instead of the regular expression (see validationMessage). */
export const PATTERN_RULES = new Map<string, string>();
const rule = (pattern: string, words: string) => (PATTERN_RULES.set(pattern, words), pattern);

export const Meta = Type.Object({
  request_id: Type.String({ pattern: '^req_[A-Za-z0-9]+$', description: 'Also sent as the X-Request-Id header.' }),
  dataset_status: Type.Literal('live'),
});

export const Pagination = Type.Object({
  limit: Type.Integer({ description: 'Page size applied.' }),
  offset: Type.Integer({ description: 'Offset applied.' }),
  total: Type.Integer({ description: 'Exact number of matching rows.' }),
  has_more: Type.Boolean({ description: 'True exactly when rows follow this page.' }),
});
export type Page = Static<typeof Pagination>;
/** What a list read returns: one page of items and its pagination (the list envelope without `meta`). */
export interface Paged<T> {
  data: T[];
  pagination: Page;
}

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      request_id: Type.String(),
    }),
  },
  { $id: 'ErrorEnvelope' },
);

export const ListEnvelope = <T extends TSchema>(item: T) =>
  Type.Object({ data: Type.Array(item), pagination: Pagination, meta: Meta });
export const ObjectEnvelope = <T extends TSchema>(data: T) => Type.Object({ data, meta: Meta });

/** Error responses every `/v1` route may give; merged into each route's `response`. */
export const commonErrors = {
  400: ErrorEnvelope,
  401: ErrorEnvelope,
  402: ErrorEnvelope,
  403: ErrorEnvelope,
  429: ErrorEnvelope,
  500: ErrorEnvelope,
};

/** The largest page of every list (SQL states the same bound: core.page_limit_max()). */
export const PAGE_LIMIT_MAX = 500;
export const Limit = (max = PAGE_LIMIT_MAX, dflt = 25) =>
  Type.Integer({ minimum: 1, maximum: max, default: dflt, description: `Page size, 1-${max} (default ${dflt}).` });
export const Offset = Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0, description: 'Rows to skip.' });
export const CountySlug = Type.String({
  minLength: 1,
  maxLength: 40,
  pattern: rule('^[A-Za-z0-9-]+$', "must be a county slug (letters, digits and '-'), for example miami-dade"),
  description: 'County slug, for example miami-dade, palm-beach, st-johns.',
});
/** A parameter given once, repeated, or comma-separated: all three forms mean the same list. */
export const ListParam = (item: TSchema, description: string) =>
  Type.Union([item, Type.Array(item, { maxItems: 100 })], {
    description: `${description} Repeat the key or separate values with commas.`,
  });

export function meta(request: FastifyRequest): Static<typeof Meta> {
  return { request_id: request.id, dataset_status: 'live' };
}

export function pageOf(limit: number, offset: number, total: number): Page {
  return { limit, offset, total, has_more: offset + limit < total };
}

/** Flattens `a,b` / `[a, b]` / `['a,b', 'c']` into a de-duplicated list; undefined when absent. */
export function splitList(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const items = (Array.isArray(value) ? value : [value])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
  return items.length > 0 ? [...new Set(items)] : undefined;
}

/** No NUL or other C0 control characters: PostgreSQL text cannot hold NUL, and none belongs in a parameter. */
export const NO_CONTROL = rule('^[^\\u0000-\\u001f]*$', 'must not contain control characters');
export const TextParam = (max: number, description: string) =>
  Type.String({ minLength: 1, maxLength: max, pattern: NO_CONTROL, description });
/** A list of values made of `chars` (and `extra`, placed last in the class: `-`): `,` alone is 400, not no filter. */
const listPattern = (chars: string, extra = '') => `^[, ${extra}]*[${chars}][${chars}, ${extra}]*$`;
const COUNTY_LIST = rule(
  listPattern('A-Za-z0-9', '-'),
  'must be one or more county slugs separated by commas, for example miami-dade,broward',
);
/** Counties as one slug, a repeated key or a comma-separated list; each slug is checked in SQL (unknown: 400). */
export const CountyList = Type.Union(
  [
    Type.String({ minLength: 1, maxLength: 1000, pattern: COUNTY_LIST }),
    Type.Array(Type.String({ minLength: 1, maxLength: 1000, pattern: COUNTY_LIST }), { maxItems: 100 }),
  ],
  { description: 'County slug(s), for example miami-dade. Repeat the key or separate values with commas.' },
);
const CODE_LIST = rule(
  listPattern('A-Za-z0-9'),
  'must be one or more codes (letters and digits) separated by commas, for example 0100,0400',
);
/** Codes as one value, a repeated key or a comma-separated list. */
export const CodeList = (description: string) =>
  Type.Union(
    [
      Type.String({ minLength: 1, maxLength: 400, pattern: CODE_LIST }),
      Type.Array(Type.String({ minLength: 1, maxLength: 400, pattern: CODE_LIST }), { maxItems: 100 }),
    ],
    { description: `${description} Repeat the key or separate values with commas.` },
  );
/** Money and other amounts: finite, non-negative, below a trillion. */
export const Amount = (description: string) => Type.Number({ minimum: 0, maximum: 1e12, finite: true, description });
/** One of a fixed list of strings; a wrong value gets a 400 that lists the allowed ones. */
/**
 * A string from a fixed list: `{ type: 'string', enum }` for ajv and the OpenAPI document, and a kind of its own so that
 * TypeBox's Value.Check (MCP tool arguments) checks the list too (it ignores `enum` on Type.String).
 */
TypeRegistry.Set<{ enum: string[] }>(
  'StringEnum',
  (schema, value) => typeof value === 'string' && schema.enum.includes(value),
);
export const StringEnum = <T extends string>(values: readonly T[], description: string) =>
  Type.Unsafe<T>({ [Kind]: 'StringEnum', type: 'string', enum: [...values], description });

/** What ajv's `date` format checks for REST, for TypeBox's Value.Check too (MCP tool arguments). */
FormatRegistry.Set('date', (value) => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const d = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === value;
});
export const DateParam = (description: string) =>
  Type.String({ format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: `${description} (YYYY-MM-DD).` });
