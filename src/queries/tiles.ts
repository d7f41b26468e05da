// The map outputs: the only TypeScript that calls api.parcel_tile / api.parcel_tile_zooms (vector tiles) and
// api.parcel_features (GeoJSON Features of parcels).
import type { Sql } from '../plugins/db.ts';

/** One Mapbox Vector Tile of parcels; zero bytes when the tile is empty. Bad z/x/y: 22023 (400) from the SQL. */
export async function getParcelTile(sql: Sql, z: number, x: number, y: number): Promise<Buffer> {
  const [row] = await sql<{ tile: Buffer }[]>`SELECT api.parcel_tile(p_z => ${z}, p_x => ${x}, p_y => ${y}) AS tile`;
  return row?.tile ?? Buffer.alloc(0);
}

export interface TileZooms {
  min_zoom: number;
  polygon_zoom: number;
  max_zoom: number;
}

/** The zoom rules the tiles follow (what the TileJSON document advertises). */
export async function getParcelTileZooms(sql: Sql): Promise<TileZooms> {
  const [row] = await sql<TileZooms[]>`SELECT * FROM api.parcel_tile_zooms()`;
  return row!;
}

/** GeoJSON Feature texts of the parcels, in the order of `ids`; an unknown id has none. */
export async function getParcelFeatures(sql: Sql, ids: number[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{ feature: string }[]>`SELECT feature FROM api.parcel_features(p_ids => ${ids}::bigint[])`;
  return rows.map((r) => r.feature);
}
