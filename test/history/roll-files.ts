// Shared by the roll-history importer tests: Liberty's NAL fixture rewritten as another roll year, whole or cut
// short, and a fingerprint of everything the history holds (rows, years on file, partitions).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type postgres from 'postgres';
import { fixture } from '../importers/fixture.ts';

export const LIBERTY = 39;
const ORIGINAL = readFileSync(fixture('nal/NAL49F202501.csv'), 'latin1');
const scratch = mkdtempSync(join(tmpdir(), 'roll-files-'));

/**
 * The fixture roll (310 parcels, roll year 2025) as roll year `year`. `records`: keep only that many records, from
 * line 20 on (past the fixture's deliberately bad rows, so the reject threshold is not what refuses it).
 */
export function rollFile(year: number, records?: number): string {
  const lines = ORIGINAL.split('\r\n');
  const body = lines.slice(1).map((l) => l.replace(/^(49,[^,]*,[^,]*,)2025,/, `$1${year},`));
  const kept = records === undefined ? body : body.slice(18, 18 + records);
  const file = join(scratch, `NAL49-${year}-${records ?? 'all'}.csv`);
  writeFileSync(file, [lines[0], ...kept].join('\r\n'), 'latin1');
  return file;
}

/** Everything the history holds: its rows, the years on file and the partition tree. Equal means untouched. */
export async function historyPrint(sql: postgres.Sql) {
  const [r] = await sql<{ rows: string; years: string; partitions: string[] }[]>`
    SELECT (SELECT md5(coalesce(string_agg(r::text, '|' ORDER BY r.county_id, r.parcel_id, r.roll_year), ''))
              FROM core.parcel_rolls r) AS rows,
           (SELECT md5(coalesce(string_agg(y::text, '|' ORDER BY y.county_id, y.roll_year), ''))
              FROM core.parcel_roll_years y) AS years,
           (SELECT array_agg(c.relname::text ORDER BY c.relname) FROM pg_class c
             WHERE c.relname LIKE 'parcel\_rolls%' AND c.relkind IN ('r', 'p')) AS partitions`;
  return r!;
}
