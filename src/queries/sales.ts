// Sales: the only TypeScript that calls api.parcel_sale_hits and api.sale_search_hits (a page and its total in one call).
import type { Sql } from '../plugins/db.ts';
import { pageOf, splitList, type Paged } from '../schemas/common.ts';
import type { SaleHit, SaleSearchQuery } from '../schemas/sales.ts';

type Sales = Paged<SaleHit>;

/** A parcel's sales, newest first, and their number in one call; undefined when no parcel has that id. */
export async function listParcelSales(sql: Sql, id: number, limit: number, offset: number): Promise<Sales | undefined> {
  const [page] = await sql<{ total: number | null; hits: SaleHit[] | null }[]>`
    SELECT total, hits FROM api.parcel_sale_hits(p_id => ${id}, p_limit => ${limit}, p_offset => ${offset})`;
  if (page?.total === null || page?.total === undefined) return undefined;
  return { data: page.hits ?? [], pagination: pageOf(limit, offset, page.total) };
}

/** One page of sales and the exact total, both from the same filter, in one call. */
export async function searchSales(sql: Sql, q: SaleSearchQuery): Promise<Sales> {
  const [page] = await sql<{ total: number; hits: SaleHit[] }[]>`
    SELECT total, hits FROM api.sale_search_hits(p_county => ${splitList(q.county) ?? null}, p_from => ${q.from ?? null}::date,
      p_to => ${q.to ?? null}::date, p_min_price => ${q.min_price ?? null}, p_max_price => ${q.max_price ?? null},
      p_use_code => ${splitList(q.use_code) ?? null}, p_sort => ${q.sort ?? 'date_newest'}, p_limit => ${q.limit},
      p_offset => ${q.offset})`;
  return { data: page!.hits, pagination: pageOf(q.limit, q.offset, page!.total) };
}
