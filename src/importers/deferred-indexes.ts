// Bulk first loads (`make load-data`, `make bench` into an empty database): the non-unique indexes of the big tables
// are dropped before the first county and built once after the last, which costs a fraction of maintaining them row
// by row through every merge. Their definitions wait in ingest.deferred_indexes, so a load killed half way loses
// nothing: the next load or `make db` builds whatever is still listed.
import type postgres from 'postgres';

/** The tables whose secondary indexes a bulk first load defers (the vocabulary's deletion index: 16 M keys). */
export const BULK_TABLES = [
  'core.parcels',
  'core.sales',
  'core.tax_delinquencies',
  'core.parcel_term_deletes',
] as const;

/** Drops the secondary indexes of BULK_TABLES (their definitions kept); returns how many. */
export async function deferIndexes(sql: postgres.Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT ingest.defer_indexes(${[...BULK_TABLES]}::regclass[]) AS n`;
  return row?.n ?? 0;
}

/**
 * The index whose order a bulk load writes each table in: parcels by their polygons' GiST index (a sorted build, so
 * its leaves follow a space-filling curve). The rows of one neighbourhood then share a few heap pages; loaded county by
 * county, with polygons updated after the roll, they were scattered over the whole table, and a 500 m circle's 1,500
 * candidates sat on as many pages.
 */
export const CLUSTER_INDEX: Readonly<Record<string, string>> = { 'core.parcels': 'parcels_geom_idx' };

/**
 * Builds every index still listed in ingest.deferred_indexes, table by table, one transaction each.
 * - A table with a CLUSTER_INDEX gets that index first and is then rewritten in its order (CLUSTER, which also drops
 *   the dead row versions the load left: geometry updates the rows the NAL inserted).
 * - Any other table is vacuumed first, for the same dead rows: they would otherwise make PostgreSQL mark the new
 *   indexes unusable by snapshots older than the build.
 * - Then the rest are built, and the table is vacuumed (the visibility map lets counts read the indexes alone) and
 *   analyzed.
 * Uses its own session settings (large maintenance_work_mem, parallel workers); returns how many indexes it built.
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
    const build = async (index: string) => {
      const t0 = performance.now();
      await session`SELECT ingest.restore_index(${index})`;
      log(`built index ${++built}/${pending.length} ${index} in ${seconds(t0)} s`);
    };
    for (const table of new Set(pending.map((p) => p.table_name))) {
      const indexes = pending.filter((p) => p.table_name === table).map((p) => p.index_name);
      const order = indexes.find((i) => i.replace(/^.*\./, '') === CLUSTER_INDEX[table]);
      if (order) {
        await build(order);
        const t0 = performance.now();
        await session.unsafe(`CLUSTER ${table} USING ${CLUSTER_INDEX[table]}`);
        log(`wrote ${table} in the order of ${order} in ${seconds(t0)} s`);
      } else {
        const t0 = performance.now();
        await session.unsafe(`VACUUM ${table}`);
        log(`vacuumed ${table} in ${seconds(t0)} s`);
      }
      for (const index of indexes.filter((i) => i !== order)) await build(index);
      const t0 = performance.now();
      await session.unsafe(`VACUUM (ANALYZE) ${table}`);
      log(`vacuumed and analyzed ${table} in ${seconds(t0)} s`);
    }
  } finally {
    session.release();
  }
  log(`built ${pending.length} deferred indexes in ${seconds(started)} s`);
  return pending.length;
}
