// Sales: the only TypeScript that calls api.list_parcel_sales / count_parcel_sales / search_sales / count_sales.
import type { Sql } from '../plugins/db.ts';
import { pageOf, splitList, type Paged } from '../schemas/common.ts';
import type { SaleHit, SaleSearchQuery } from '../schemas/sales.ts';
import { badRequest } from '../errors.ts';

type Sales = Paged<SaleHit>;

/** A parcel's sales, newest first; undefined when no parcel has that id. */
export async function listParcelSales(sql: Sql, id: number, limit: number, offset: number): Promise<Sales | undefined> {
  const [[count], rows] = await Promise.all([
    sql<{ total: number | null }[]>`SELECT api.count_parcel_sales(p_id => ${id}) AS total`,
    sql<SaleHit[]>`SELECT * FROM api.list_parcel_sales(p_id => ${id}, p_limit => ${limit}, p_offset => ${offset})`,
  ]);
  if (count?.total === null || count?.total === undefined) return undefined;
  return { data: rows, pagination: pageOf(limit, offset, count.total) };
}

export async function searchSales(sql: Sql, q: SaleSearchQuery): Promise<Sales> {
  const counties = splitList(q.county);
  if (counties?.some((c) => c.length > 40))
    throw badRequest("query parameter 'county': each slug must be at most 40 characters");
  const county = counties ?? null;
  const useCode = splitList(q.use_code) ?? null;
  const from = q.from ?? null;
  const to = q.to ?? null;
  const min = q.min_price ?? null;
  const max = q.max_price ?? null;
  const [rows, [count]] = await Promise.all([
    sql<SaleHit[]>`
      SELECT * FROM api.search_sales(p_county => ${county}, p_from => ${from}::date, p_to => ${to}::date, p_min_price => ${min},
        p_max_price => ${max}, p_use_code => ${useCode}, p_sort => ${q.sort ?? 'date_newest'}, p_limit => ${q.limit}, p_offset => ${q.offset})`,
    sql<{ total: number }[]>`
      SELECT api.count_sales(p_county => ${county}, p_from => ${from}::date, p_to => ${to}::date, p_min_price => ${min},
        p_max_price => ${max}, p_use_code => ${useCode}) AS total`,
  ]);
  return { data: rows, pagination: pageOf(q.limit, q.offset, count?.total ?? 0) };
}
