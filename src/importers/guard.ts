// The shrink guard: a replace-style load (NAL, polygons, a delinquency list) may not take away more than a share of
// what a county had, in rows deleted or in a key column emptied, unless the operator says so. It compares the
// county's scope (ingest.county_scope) before and after the merge, inside the load's transaction, so a refused load
// is rolled back. A county's first load of a kind is not limited.
import type postgres from 'postgres';

export const DEFAULT_MAX_DELETE_RATE = 0.05;

/** What a kind's merge takes away, for the refusal's wording: "would <verb> 191 of 310 <noun> in liberty". */
export interface Replaces {
  /** The merge result's count of rows taken away. */
  count: string;
  verb: string;
  noun: string;
}

export interface Scope {
  scope_rows: number;
  /** key column -> rows of the scope where it is filled */
  filled: Record<string, number>;
  loaded_before: boolean;
  /** A NAL load of a roll year older than the county's current one: that year (its history rows are the scope). */
  roll_year: number | null;
}

export async function countyScope(
  tx: postgres.TransactionSql,
  kind: string,
  loadId: number,
  countyId: number,
): Promise<Scope> {
  const [s] = await tx<Scope[]>`
    SELECT scope_rows::float8 AS scope_rows, filled, loaded_before, roll_year
      FROM ingest.county_scope(${kind}, ${loadId}, ${countyId}::smallint)`;
  return s!;
}

const n = (x: number) => x.toLocaleString('en-US');
const percent = (part: number, whole: number) => `${Math.round((part / whole) * 100)}%`;

/**
 * Why this county's merge must be refused, or null when it may go through. `taken` is the merge's count of rows
 * taken away (deleted, or polygons cleared).
 */
export function refusal(
  replaces: Replaces,
  county: string,
  before: Scope,
  after: Scope,
  taken: number,
  maxRate: number,
): string | null {
  if (!before.loaded_before) return null;
  const where = before.roll_year ? `${county}'s ${before.roll_year} roll` : county;
  const over = (lost: number, of: number) => of > 0 && lost / of > maxRate;
  let reason: string | null = null;
  let rate = 0;
  if (over(taken, before.scope_rows)) {
    reason = `would ${replaces.verb} ${n(taken)} of ${n(before.scope_rows)} ${replaces.noun} in ${where} (${percent(taken, before.scope_rows)})`;
    rate = taken / before.scope_rows;
  } else {
    for (const [column, was] of Object.entries(before.filled)) {
      const lost = was - (after.filled[column] ?? 0);
      if (!over(lost, was)) continue;
      reason = `would empty ${column} on ${n(lost)} of the ${n(was)} ${replaces.noun} in ${where} that have it (${percent(lost, was)})`;
      rate = lost / was;
      break;
    }
  }
  if (!reason) return null;
  const allow = Math.min(1, Math.ceil(rate * 10) / 10);
  return `${reason}, over --max-delete-rate ${maxRate}; nothing was changed; pass --max-delete-rate ${allow} if this is intended`;
}
