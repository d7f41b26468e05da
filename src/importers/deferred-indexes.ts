// Bulk first loads (`make load-data`, `make bench` into an empty database): the non-unique indexes of the big tables
// are dropped before the first county and built once after the last, which costs a fraction of maintaining them row
// by row through every merge. Their definitions wait in ingest.deferred_indexes, so a load killed half way loses
// nothing: the next load or `make db` builds whatever is still listed.
import type postgres from 'postgres';

/** The tables whose secondary indexes a bulk first load defers. */
export const BULK_TABLES = ['core.parcels', 'core.sales', 'core.tax_delinquencies'] as const;

/** Drops the secondary indexes of BULK_TABLES (their definitions kept); returns how many. */
export async function deferIndexes(sql: postgres.Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT ingest.defer_indexes(${[...BULK_TABLES]}::regclass[]) AS n`;
  return row?.n ?? 0;
}

/**
 * Builds every index still listed in ingest.deferred_indexes, table by table, one transaction each. Each table is
 * vacuumed first: the dead row versions a load leaves (geometry updates the rows the NAL inserted) would otherwise
 * make PostgreSQL mark the new indexes unusable by snapshots older than the build, and the visibility map it sets
 * lets counts read the indexes alone. Then the table is analyzed. Uses its own session settings (large
 * maintenance_work_mem, parallel workers); returns how many indexes it built.
 */
export async function restoreIndexes(sql: postgres.Sql, log: (line: string) => void): Promise<number> {
  const pending = await sql<{ index_name: string; table_name: string }[]>`
    SELECT index_name, table_name FROM ingest.deferred_indexes ORDER BY table_name, index_name`;
  if (pending.length === 0) return 0;
  const started = performance.now();
  const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(1);
  const session = await sql.reserve();
  try {
    await session`SET maintenance_work_mem = '1GB'`;
    await session`SET max_parallel_maintenance_workers = 2`;
    let built = 0;
    for (const table of new Set(pending.map((p) => p.table_name))) {
      let t0 = performance.now();
      await session.unsafe(`VACUUM ${table}`);
      log(`vacuumed ${table} in ${seconds(t0)} s`);
      for (const { index_name } of pending.filter((p) => p.table_name === table)) {
        t0 = performance.now();
        await session`SELECT ingest.restore_index(${index_name})`;
        log(`built index ${++built}/${pending.length} ${index_name} in ${seconds(t0)} s`);
      }
      await session.unsafe(`ANALYZE ${table}`);
    }
  } finally {
    session.release();
  }
  log(`built ${pending.length} deferred indexes in ${seconds(started)} s`);
  return pending.length;
}
