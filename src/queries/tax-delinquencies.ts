// Tax delinquencies: the only TypeScript that calls the api.*tax_delinquenc* functions. Each list is one call that
// returns its page and its exact total (api.*_hits), as parcel search does.
import type { Sql } from '../plugins/db.ts';
import { pageOf, splitList, type Paged } from '../schemas/common.ts';
import {
  SOURCES_MAX_LIMIT,
  type DelinquencyFreshness,
  type DelinquencyHit,
  type SearchQuery,
  type StatusCount,
  type TaxDelinquencySource,
} from '../schemas/tax-delinquencies.ts';

const nul = <T>(v: T | undefined): T | null => (v === undefined ? null : v);

/** One page of search hits and the exact total, both from the same filter, in one call. */
export async function searchTaxDelinquencies(sql: Sql, q: SearchQuery): Promise<Paged<DelinquencyHit>> {
  const [page] = await sql<{ total: number; hits: DelinquencyHit[] }[]>`
    SELECT total, hits FROM api.tax_delinquency_search_hits(
      p_county => ${nul(splitList(q.county)) as string[] | null}::text[], p_tax_year => ${nul(q.tax_year)}::int,
      p_status => ${nul(q.status)}::text, p_min_due => ${nul(q.min_due)}::numeric, p_max_due => ${nul(q.max_due)}::numeric,
      p_parcel_id => ${nul(q.parcel_id)}::text, p_owner => ${nul(q.owner)}::text, p_vendor => ${nul(q.vendor)}::text,
      p_certificate_number => ${nul(q.certificate_number)}::text, p_deed_eligible => ${nul(q.deed_eligible)}::boolean,
      p_expires_before => ${nul(q.expires_before)}::date, p_expires_after => ${nul(q.expires_after)}::date,
      p_sort => ${nul(q.sort)}::text,
      p_limit => ${q.limit}::int, p_offset => ${q.offset}::int)`;
  return { data: page!.hits, pagination: pageOf(q.limit, q.offset, page!.total) };
}

/** A parcel's records, newest tax year first: the search's page and total with the parcel as its filter. */
export async function getTaxDelinquenciesByParcel(
  sql: Sql,
  q: { parcel_id: string; county?: string; limit: number; offset: number },
): Promise<Paged<DelinquencyHit>> {
  const county = q.county === undefined ? null : [q.county];
  const [page] = await sql<{ total: number; hits: DelinquencyHit[] }[]>`
    SELECT total, hits FROM api.tax_delinquency_search_hits(
      p_county => ${county}::text[], p_parcel_id => ${q.parcel_id}::text, p_sort => 'year_newest',
      p_limit => ${q.limit}::int, p_offset => ${q.offset}::int)`;
  return { data: page!.hits, pagination: pageOf(q.limit, q.offset, page!.total) };
}

/** The counts object of 2.8: the applied scope echoed (slug in lower case, null when absent) and the counts. */
export async function countTaxDelinquencies(sql: Sql, q: { county?: string; tax_year?: number }) {
  const counts = await sql<StatusCount[]>`
    SELECT status, count FROM api.count_tax_delinquencies(
      p_county => ${nul(q.county)}::text, p_tax_year => ${nul(q.tax_year)}::int)`;
  return { county: q.county?.toLowerCase() ?? null, tax_year: q.tax_year ?? null, counts: [...counts] };
}

export async function listTaxDelinquencySources(
  sql: Sql,
  q: { county?: string; vendor?: string; source_kind?: string; active?: boolean; limit: number; offset: number },
): Promise<Paged<TaxDelinquencySource>> {
  const [page] = await sql<{ total: number; hits: TaxDelinquencySource[] }[]>`
    SELECT total, hits FROM api.tax_delinquency_source_hits(
      p_county => ${nul(q.county)}::text, p_vendor => ${nul(q.vendor)}::text, p_source_kind => ${nul(q.source_kind)}::text,
      p_active => ${nul(q.active)}::boolean, p_limit => ${q.limit}::int, p_offset => ${q.offset}::int)`;
  return { data: page!.hits, pagination: pageOf(q.limit, q.offset, page!.total) };
}

/** Every source row of one county; undefined when no county has that slug (the route answers 404). */
export async function listTaxDelinquencySourcesByCounty(
  sql: Sql,
  county: string,
): Promise<Paged<TaxDelinquencySource> | undefined> {
  const [known] = await sql`SELECT 1 FROM api.get_county(p_county => ${county})`;
  if (!known) return undefined;
  const data = [
    ...(await sql<TaxDelinquencySource[]>`
      SELECT * FROM api.list_tax_delinquency_sources_by_county(p_county => ${county})`),
  ];
  return { data, pagination: pageOf(Math.max(SOURCES_MAX_LIMIT, data.length), 0, data.length) };
}

export async function getTaxDelinquencyFreshness(sql: Sql): Promise<DelinquencyFreshness> {
  const [row] = await sql<DelinquencyFreshness[]>`SELECT * FROM api.get_tax_delinquency_freshness()`;
  return row!;
}
