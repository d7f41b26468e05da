// Saved-search tests: delinquency lists written as real standard-format files and loaded through the real importer,
// and the exhaustive definition of a match (every search run by the search endpoint itself over the changed rows).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type postgres from 'postgres';
import { importDelinquencies, STANDARD_COLUMNS } from '../../src/importers/delinquencies.ts';
import type { TestContext } from '../helpers/app.ts';
import type { TestDatabase } from '../helpers/db.ts';

export interface Row {
  parcel: string;
  status?: string;
  due: number;
  owner?: string;
}

/**
 * Matches every queued import against the saved searches, one transaction each, as a webhook worker does after an
 * import commits (saved.match_next); returns the loads matched.
 */
export async function matchQueued(sql: postgres.Sql): Promise<string[]> {
  const loads: string[] = [];
  for (;;) {
    const [r] = await sql<{ load_id: string | null }[]>`SELECT load_id FROM saved.match_next()`;
    if (r!.load_id === null) return loads;
    loads.push(r!.load_id);
  }
}

/**
 * Writes a county's list for one tax year and imports it; `extra` goes to the importer (beforeCommit …). Then
 * matches it as a worker would (matchQueued), unless `match` is false (a worker of the test does).
 */
export async function importList(
  db: TestDatabase,
  county: string,
  year: number,
  rows: Row[],
  extra: { beforeCommit?: (tx: postgres.TransactionSql) => Promise<void>; match?: boolean } = {},
) {
  const { match = true, ...options } = extra;
  const dir = mkdtempSync(join(tmpdir(), 'saved-'));
  const file = join(dir, `${county}-${year}.csv`);
  const lines = rows.map((r, i) =>
    [
      county,
      r.parcel,
      year,
      r.status ?? 'delinquent',
      (r.due * 0.9).toFixed(2),
      r.due.toFixed(2),
      `C${year}-${r.parcel}`,
      '',
      r.owner ?? `OWNER ${i}`,
      `${i} MAIN ST`,
      'TaxCertSale',
      '',
      '',
      '',
      '',
    ].join(','),
  );
  writeFileSync(file, [STANDARD_COLUMNS.join(','), ...lines].join('\n') + '\n');
  const summary = await importDelinquencies({
    file,
    databaseUrl: db.ownerUrl,
    rejects: join(dir, 'rejects.csv'),
    quiet: true,
    maxDeleteRate: 0.5,
    ...options,
  });
  if (match) await matchQueued(db.sql);
  return summary;
}

/** Every record id the search endpoint returns for the params (all pages), with the given key. */
export async function resultIds(ctx: TestContext, key: string, params: Record<string, string>): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let offset = 0; ; offset += 500) {
    const q = new URLSearchParams({ ...params, limit: '500', offset: String(offset) });
    const res = await ctx.app.inject({
      url: `/v1/tax-delinquencies/search?${q}`,
      headers: { authorization: `Bearer ${key}` },
    });
    if (res.statusCode !== 200) throw new Error(`search: ${res.statusCode} ${res.body}`);
    const page = res.json().data as { id: string }[];
    for (const d of page) ids.add(d.id);
    if (page.length < 500) return ids;
  }
}

/** The (search, record) pairs recorded for a load, as "ss_…:id" strings, sorted. */
export async function pairsOfLoad(sql: postgres.Sql, loadId: number | string) {
  const rows = await sql<{ p: string }[]>`
    SELECT saved.public_id(search_id) || ':' || record_id AS p FROM saved.matches WHERE load_id = ${loadId} ORDER BY 1`;
  return rows.map((r) => r.p);
}
