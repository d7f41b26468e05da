// Parcels: the only TypeScript that calls api.parcel_search_hits / facet_parcels / get_parcel*.
// It turns request parameters into the functions' named arguments (parsing the comma-separated coordinates); the SQL
// checks every rule between values (ranges, near with radius_m, county slugs) and raises 22023.
import { badRequest } from '../errors.ts';
import type { Sql } from '../plugins/db.ts';
import { pageOf, splitList, type Paged } from '../schemas/common.ts';
import type {
  AutocompleteQuery,
  FacetCounts,
  ParcelHit,
  ParcelRoll,
  ParcelSearchQuery,
  Suggestion,
} from '../schemas/parcels.ts';

/** "a,b" as two finite numbers, or a 400 naming the parameter and the expected form. */
function numbers(value: string, name: string, count: number, form: string): number[] {
  const parts = value.split(',').map((p) => p.trim());
  const nums = parts.map((p) => (/^[-+]?(?:\d+(?:\.\d*)?|\.\d+)$/.test(p) ? Number(p) : NaN));
  if (parts.length !== count || nums.some((n) => !Number.isFinite(n))) {
    throw badRequest(`query parameter '${name}' must be ${form} (${count} comma-separated numbers)`);
  }
  return nums;
}

/** The named arguments shared by search, count and facets. */
export function filterArgs(q: ParcelSearchQuery) {
  const near = q.near === undefined ? undefined : numbers(q.near, 'near', 2, 'lat,lng');
  const point = q.point === undefined ? undefined : numbers(q.point, 'point', 2, 'lng,lat');
  const bbox = q.bbox === undefined ? undefined : numbers(q.bbox, 'bbox', 4, 'minLng,minLat,maxLng,maxLat');
  return {
    p_query: q.query ?? null,
    p_county: splitList(q.county) ?? null,
    p_use_code: splitList(q.use_code) ?? null,
    p_dor_use_code: splitList(q.dor_use_code) ?? null,
    p_city: q.city ?? null,
    p_zip: q.zip ?? null,
    p_just_value_min: q.just_value_min ?? null,
    p_just_value_max: q.just_value_max ?? null,
    p_assessed_min: q.assessed_min ?? null,
    p_assessed_max: q.assessed_max ?? null,
    p_sale_after: q.sale_after ?? null,
    p_sale_before: q.sale_before ?? null,
    p_sale_price_min: q.sale_price_min ?? null,
    p_sale_price_max: q.sale_price_max ?? null,
    p_near_lat: near?.[0] ?? null,
    p_near_lng: near?.[1] ?? null,
    p_radius_m: q.radius_m ?? null,
    p_bbox: bbox ?? null,
    p_point_lng: point?.[0] ?? null,
    p_point_lat: point?.[1] ?? null,
    p_owner_changed_since: q.owner_changed_since ?? null,
    p_just_value_change_min: q.just_value_change_min ?? null,
    p_just_value_change_max: q.just_value_change_max ?? null,
  };
}

const FILTER_CALL = `p_query => $1, p_county => $2, p_use_code => $3, p_dor_use_code => $4, p_city => $5, p_zip => $6,
  p_just_value_min => $7, p_just_value_max => $8, p_assessed_min => $9, p_assessed_max => $10,
  p_sale_after => $11::date, p_sale_before => $12::date, p_sale_price_min => $13, p_sale_price_max => $14,
  p_near_lat => $15, p_near_lng => $16, p_radius_m => $17, p_bbox => $18::float8[], p_point_lng => $19, p_point_lat => $20,
  p_owner_changed_since => $21, p_just_value_change_min => $22, p_just_value_change_max => $23`;

export interface ParcelSearch extends Paged<ParcelHit> {
  facets?: FacetCounts;
}

/**
 * One page and its exact total in one call (api.parcel_search_hits: the page's rows as JSON, the total counted from
 * the same matches) and, when asked, facets alongside on another connection. With facets, the query's reading (its
 * words and their vocabulary terms, a few milliseconds of typo and prefix lookups at full scale) is computed once,
 * first, and handed to both as text. The statements are prepared (their text is constant), so a call with two dozen
 * named arguments is not parsed and planned again each time.
 */
export async function searchParcels(sql: Sql, q: ParcelSearchQuery): Promise<ParcelSearch> {
  const args = Object.values(filterArgs(q)) as never[];
  const facets = splitList(q.facets as string | string[] | undefined);
  const [reading] =
    q.query === undefined || !facets
      ? [undefined]
      : await sql<{ words: string }[]>`SELECT api.parcel_query_words(${q.query})::text AS words`;
  const words = (reading?.words ?? null) as never;
  const [[page], facetRows] = await Promise.all([
    sql.unsafe<{ total: number; hits: ParcelHit[] }[]>(
      `SELECT total, hits FROM api.parcel_search_hits(${FILTER_CALL}, p_sort => $24, p_limit => $25, p_offset => $26,
         p_words => $27::api.query_word[])`,
      [...args, (q.sort ?? null) as never, q.limit as never, q.offset as never, words],
      { prepare: true },
    ),
    facets
      ? sql.unsafe<{ facets: ParcelSearch['facets'] }[]>(
          `SELECT api.facet_parcels($24, ${FILTER_CALL}, p_words => $25::api.query_word[]) AS facets`,
          [...args, facets as never, words],
          { prepare: true },
        )
      : undefined,
  ]);
  const out: ParcelSearch = { data: page?.hits ?? [], pagination: pageOf(q.limit, q.offset, page?.total ?? 0) };
  if (facetRows) out.facets = facetRows[0]?.facets ?? {};
  return out;
}

export async function getParcel(sql: Sql, id: number): Promise<ParcelHit | undefined> {
  const [row] = await sql<ParcelHit[]>`SELECT * FROM api.get_parcel(p_id => ${id})`;
  return row;
}

export async function getParcelByParcelId(sql: Sql, county: string, parcelId: string): Promise<ParcelHit | undefined> {
  const [row] = await sql<
    ParcelHit[]
  >`SELECT * FROM api.get_parcel_by_parcel_id(p_county => ${county}, p_parcel_id => ${parcelId})`;
  return row;
}

export async function autocompleteParcels(sql: Sql, q: AutocompleteQuery): Promise<Suggestion[]> {
  return sql<Suggestion[]>`
    SELECT * FROM api.autocomplete_parcels(p_query => ${q.q}, p_county => ${splitList(q.county) ?? null},
                                           p_limit => ${q.limit})`;
}

/** The parcel's roll years, newest first; undefined when no parcel has the id (a parcel has a row per year on file). */
export async function getParcelHistory(sql: Sql, id: number): Promise<ParcelRoll[] | undefined> {
  const rows = await sql<ParcelRoll[]>`SELECT * FROM api.parcel_history(p_id => ${id})`;
  if (rows.length === 0 && !(await getParcel(sql, id))) return undefined;
  return [...rows];
}
