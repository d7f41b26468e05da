// Recomputes the offline base map's county shapes from the loaded parcels (ingest.refresh_county_shapes), for every
// county or the slugs given: `make basemap`, after a load. docs/formats.md#base-map.
//   tsx scripts/basemap.ts [slug ...]
import postgres from 'postgres';
import { ownerDatabaseUrl } from '../src/db-url.ts';

const slugs = process.argv.slice(2);
const sql = postgres(ownerDatabaseUrl(), { max: 1, onnotice: () => {} });
try {
  const ids = slugs.length
    ? (await sql<{ id: number }[]>`SELECT unnest(core.county_ids(${slugs})) AS id`).map((r) => r.id)
    : null;
  const started = Date.now();
  const rows = await sql<{ mapped: boolean; parcels_mapped: number }[]>`
    SELECT mapped, parcels_mapped FROM ingest.refresh_county_shapes(${ids}::smallint[])`;
  const mapped = rows.filter((r) => r.mapped);
  const parcels = mapped.reduce((n, r) => n + r.parcels_mapped, 0);
  console.log(
    `base map: ${rows.length} counties refreshed, ${mapped.length} drawn from ${parcels} mapped parcels ` +
      `in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
} finally {
  await sql.end();
}
