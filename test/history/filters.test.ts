// Parcel search's history filters (owner_changed_since, just_value_change_min / _max) against an exhaustive check
// written straight over core.parcel_rolls (the previous roll year on file, owner names compared normalized): every
// combination of a grid of values, alone and with a county and a query, gives the same total and first page through
// REST as the check; bad values are a 400.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';

const { app, db, newClient } = await buildTestApp(t);
const sql = db.sql;
const client = await newClient('enterprise'); // a few hundred searches inside one minute

/** Every parcel a query alone matches (the search's own reading of words, typos included), for the check. */
async function queryMatches(query: string): Promise<number[]> {
  const ids: number[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await sql<{ id: number }[]>`
      SELECT id FROM api.search_parcels(p_query => ${query}, p_sort => 'id', p_limit => 100, p_offset => ${offset})`;
    ids.push(...page.map((r) => r.id));
    if (page.length < 100) return ids;
  }
}
const SMITH = await queryMatches('smith');

/** The check: ids of current parcels matching the filters, from the history rows alone. */
async function expected(f: { since?: number; min?: number; max?: number; county?: number; query?: number[] }) {
  const rows = await sql<{ id: number }[]>`
    WITH h AS (
      SELECT r.county_id, r.parcel_id, r.roll_year, r.just_value,
             lag(r.just_value) OVER w AS prev_jv, lag(r.roll_year) OVER w AS prev_year,
             core.normalize_text(r.owner_name) IS DISTINCT FROM core.normalize_text(lag(r.owner_name) OVER w) AS owner_differs
        FROM core.parcel_rolls r
      WINDOW w AS (PARTITION BY r.county_id, r.parcel_id ORDER BY r.roll_year))
    SELECT p.id::int FROM core.parcels p
     WHERE (${f.county ?? null}::int IS NULL OR p.county_id = ${f.county ?? null})
       AND (${f.query ?? null}::int[] IS NULL OR p.id = ANY (${f.query ?? null}::int[]))
       AND (${f.since ?? null}::int IS NULL OR EXISTS (
             SELECT 1 FROM h WHERE h.county_id = p.county_id AND h.parcel_id = p.parcel_id AND h.prev_year IS NOT NULL
                AND h.owner_differs AND h.roll_year >= ${f.since ?? null}))
       AND (${f.min ?? null}::float8 IS NULL AND ${f.max ?? null}::float8 IS NULL OR EXISTS (
             SELECT 1 FROM h WHERE h.county_id = p.county_id AND h.parcel_id = p.parcel_id AND h.roll_year = p.roll_year
                AND h.prev_jv > 0
                AND (${f.min ?? null}::float8 IS NULL OR round((h.just_value - h.prev_jv) * 100.0 / h.prev_jv, 2) >= ${f.min ?? null})
                AND (${f.max ?? null}::float8 IS NULL OR round((h.just_value - h.prev_jv) * 100.0 / h.prev_jv, 2) <= ${f.max ?? null})))
     ORDER BY p.id`;
  return rows.map((r) => r.id);
}

const search = async (params: Record<string, string | number>) => {
  const qs = new URLSearchParams(Object.entries({ ...params, limit: 100, sort: 'id' }).map(([k, v]) => [k, String(v)]));
  const res = await app.inject({ url: `/v1/parcels/search?${qs}`, headers: client.headers });
  t.equal(res.statusCode, 200, `200 for ${qs}`);
  const body = res.json() as { data: { id: number }[]; pagination: { total: number } };
  return { ids: body.data.map((d) => d.id), total: body.pagination.total };
};

t.test('every combination of the grid agrees with the check', async (t) => {
  const sinces = [undefined, 2024, 2025, 2026];
  const bounds = [undefined, -3, 0, 4, 10, 29.99, 30];
  let compared = 0;
  let nonEmpty = 0;
  for (const since of sinces)
    for (const min of bounds)
      for (const max of bounds) {
        if (since === undefined && min === undefined && max === undefined) continue;
        if (min !== undefined && max !== undefined && min > max) continue;
        for (const extra of [{}, { county: 'broward' }, { query: 'smith' }] as Record<string, string>[]) {
          const params: Record<string, string | number> = { ...extra };
          if (since !== undefined) params.owner_changed_since = since;
          if (min !== undefined) params.just_value_change_min = min;
          if (max !== undefined) params.just_value_change_max = max;
          const want = await expected({
            since,
            min,
            max,
            county: 'county' in extra ? 6 : undefined,
            query: 'query' in extra ? SMITH : undefined,
          });
          const got = await search(params);
          if (got.total !== want.length || got.ids.join() !== want.slice(0, 100).join()) {
            t.fail(`disagrees for ${JSON.stringify(params)}: ${got.total} vs ${want.length}`);
          }
          compared++;
          if (want.length) nonEmpty++;
        }
      }
  t.ok(compared > 150, `${compared} combinations compared`);
  t.ok(nonEmpty > 50, `${nonEmpty} of them match parcels`);
  t.ok(SMITH.length > 10, 'the query matches parcels');
  const since2025 = await expected({ since: 2025 });
  t.ok(since2025.length > 0 && since2025.includes(2), 'parcel 2 (owner changed in 2025) is "recently sold"');
  t.notOk((await expected({ since: 2026 })).length, 'nothing changed owner in 2026');
});

t.test('bad values are a 400 that names the parameter', async (t) => {
  for (const [qs, pattern] of [
    ['owner_changed_since=25', /owner_changed_since/],
    ['owner_changed_since=soon', /owner_changed_since/],
    ['just_value_change_min=abc', /just_value_change_min/],
    ['just_value_change_min=-101', /just_value_change_min/],
    ['just_value_change_min=10&just_value_change_max=5', /just_value_change_min: must not be greater/],
  ] as const) {
    const res = await app.inject({ url: `/v1/parcels/search?${qs}`, headers: client.headers });
    t.equal(res.statusCode, 400, qs);
    t.match(res.json().error.message, pattern, qs);
  }
});
