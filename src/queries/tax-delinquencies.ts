// Tax delinquencies: the only TypeScript that calls the api.*tax_delinquenc* functions.
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

/** One page of search hits and the exact total, both from the same filters. */
export async function searchTaxDelinquencies(sql: Sql, q: SearchQuery): Promise<Paged<DelinquencyHit>> {
  const county = nul(splitList(q.county));
  const f = {
    county: county as string[] | null,
    taxYear: nul(q.tax_year),
    status: nul(q.status),
    minDue: nul(q.min_due),
    maxDue: nul(q.max_due),
    parcelId: nul(q.parcel_id),
    owner: nul(q.owner),
    vendor: nul(q.vendor),
    certificateNumber: nul(q.certificate_number),
  };
  const [[row], data] = await Promise.all([
    sql<{ total: number }[]>`
      SELECT api.count_tax_delinquencies_matching(
        p_county => ${f.county}::text[], p_tax_year => ${f.taxYear}::int, p_status => ${f.status}::text,
        p_min_due => ${f.minDue}::numeric, p_max_due => ${f.maxDue}::numeric, p_parcel_id => ${f.parcelId}::text,
        p_owner => ${f.owner}::text, p_vendor => ${f.vendor}::text,
        p_certificate_number => ${f.certificateNumber}::text) AS total`,
    sql<DelinquencyHit[]>`
      SELECT * FROM api.search_tax_delinquencies(
        p_county => ${f.county}::text[], p_tax_year => ${f.taxYear}::int, p_status => ${f.status}::text,
        p_min_due => ${f.minDue}::numeric, p_max_due => ${f.maxDue}::numeric, p_parcel_id => ${f.parcelId}::text,
        p_owner => ${f.owner}::text, p_vendor => ${f.vendor}::text,
        p_certificate_number => ${f.certificateNumber}::text, p_sort => ${nul(q.sort)}::text,
        p_limit => ${q.limit}::int, p_offset => ${q.offset}::int)`,
  ]);
  return { data, pagination: pageOf(q.limit, q.offset, row!.total) };
}

export async function getTaxDelinquenciesByParcel(
  sql: Sql,
  q: { parcel_id: string; county?: string; limit: number; offset: number },
): Promise<Paged<DelinquencyHit>> {
  const county = nul(q.county);
  const [[row], data] = await Promise.all([
    sql<{ total: number }[]>`
      SELECT api.count_tax_delinquencies_matching(
        p_county => CASE WHEN ${county}::text IS NULL THEN NULL ELSE ARRAY[${county}::text] END,
        p_parcel_id => ${q.parcel_id}::text) AS total`,
    sql<DelinquencyHit[]>`
      SELECT * FROM api.get_tax_delinquencies_by_parcel(
        p_parcel_id => ${q.parcel_id}::text, p_county => ${county}::text,
        p_limit => ${q.limit}::int, p_offset => ${q.offset}::int)`,
  ]);
  return { data, pagination: pageOf(q.limit, q.offset, row!.total) };
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
  const f = {
    county: nul(q.county),
    vendor: nul(q.vendor),
    kind: nul(q.source_kind),
    active: nul(q.active),
  };
  const [[row], data] = await Promise.all([
    sql<{ total: number }[]>`
      SELECT api.count_tax_delinquency_sources(
        p_county => ${f.county}::text, p_vendor => ${f.vendor}::text, p_source_kind => ${f.kind}::text,
        p_active => ${f.active}::boolean) AS total`,
    sql<TaxDelinquencySource[]>`
      SELECT * FROM api.list_tax_delinquency_sources(
        p_county => ${f.county}::text, p_vendor => ${f.vendor}::text, p_source_kind => ${f.kind}::text,
        p_active => ${f.active}::boolean, p_limit => ${q.limit}::int, p_offset => ${q.offset}::int)`,
  ]);
  return { data, pagination: pageOf(q.limit, q.offset, row!.total) };
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
