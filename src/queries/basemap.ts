// The offline base map: the only TypeScript that calls api.basemap_tile (docs/formats.md#base-map).
import type { Sql } from '../plugins/db.ts';

/** One Mapbox Vector Tile of the base map; zero bytes where nothing is. Bad z/x/y: 22023 (400) from the SQL. */
export async function getBasemapTile(sql: Sql, z: number, x: number, y: number): Promise<Buffer> {
  const [row] = await sql<{ tile: Buffer }[]>`SELECT api.basemap_tile(p_z => ${z}, p_x => ${x}, p_y => ${y}) AS tile`;
  return row?.tile ?? Buffer.alloc(0);
}
