// GET /tiles/parcels/{z}/{x}/{y}.mvt (Mapbox Vector Tiles of parcels) and /tiles/parcels.json (their TileJSON).
import { createHash } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { getParcelTile, getParcelTileZooms } from '../queries/tiles.ts';
import { commonErrors } from '../schemas/common.ts';
import { TileJson, TileParams, TileResponses } from '../schemas/tiles.ts';

const tags = ['tiles'];
export const TILE_TYPE = 'application/vnd.mapbox-vector-tile';
/**
 * Browsers reuse a tile for an hour without asking, then revalidate it (a 304 costs nothing). Private: a tile is paid
 * for by one customer, and a shared cache would hand it to anyone who asks, key or not.
 */
const CACHE_CONTROL = 'private, max-age=3600';
/**
 * The most detailed zoom advertised: its tiles hold each polygon to about 15 cm (a 4096 grid over 600 m), so clients
 * scale them beyond it (overzoom) rather than spend a credit on every tile of every deeper zoom.
 */
const DETAIL_ZOOM = 16;
/** Florida's bounding box (west, south, east, north) and a view of downtown Miami. */
const FLORIDA_BOUNDS = [-87.64, 24.39, -79.97, 31.0];
const CENTER = [-80.1918, 25.7617, 16];

/** A strong validator: the tile's bytes hashed (SHA-256, base64url, 128 bits). */
const etagOf = (tile: Buffer) => `"${createHash('sha256').update(tile).digest('base64url').slice(0, 22)}"`;

/** Whether an If-None-Match header names the validator (weak comparison, RFC 9110 13.1.2), or is `*`. */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || (t.startsWith('W/') ? t.slice(2) : t) === etag;
  });
}

function sendTile(reply: FastifyReply, tile: Buffer, ifNoneMatch: string | undefined) {
  const etag = etagOf(tile);
  reply.header('ETag', etag).header('Cache-Control', CACHE_CONTROL);
  if (noneMatch(ifNoneMatch, etag)) return reply.code(304).send();
  if (tile.length === 0) return reply.code(204).send();
  return reply.type(TILE_TYPE).send(tile);
}

const tiles: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/tiles/parcels/:z/:x/:y.mvt',
    {
      schema: {
        tags,
        summary: 'A Mapbox Vector Tile of parcels: polygons from zoom 15, points at zoom 14, empty below (204)',
        params: TileParams,
        response: TileResponses,
      },
    },
    async (request, reply) => {
      const { z, x, y } = request.params;
      const tile = await getParcelTile(app.sql, z, x, y);
      return sendTile(reply, tile, request.headers['if-none-match']);
    },
  );

  app.get(
    '/tiles/parcels.json',
    {
      // like every /v1 route it needs the key (a client that can send it for the tiles can send it here); it costs no
      // credit, since it only describes the tiles, which are charged
      config: { free: true },
      schema: {
        tags,
        summary:
          'TileJSON 3.0.0 of the parcel tiles, for MapLibre, Mapbox, OpenLayers and QGIS: needs the API key, costs no credit',
        response: { 200: TileJson, ...commonErrors },
      },
    },
    async (request) => {
      const zooms = await getParcelTileZooms(app.sql);
      const prefix = request.routeOptions.url!.slice(0, -'/tiles/parcels.json'.length);
      return {
        tilejson: '3.0.0' as const,
        name: 'Florida parcels',
        description:
          'Every mapped parcel of the loaded counties: polygons from zoom 15, a point per parcel at zoom 14. ' +
          'Send the API key in the Authorization header with every tile request.',
        version: '1.0.0',
        attribution: 'Florida Department of Revenue and county property appraisers',
        scheme: 'xyz' as const,
        tiles: [`${request.protocol}://${request.host}${prefix}/tiles/parcels/{z}/{x}/{y}.mvt`],
        minzoom: zooms.min_zoom,
        maxzoom: DETAIL_ZOOM,
        bounds: FLORIDA_BOUNDS,
        center: CENTER,
        vector_layers: [
          {
            id: 'parcels',
            description:
              `Polygons from zoom ${zooms.polygon_zoom} with every field; points at lower zooms with id and ` +
              'dor_use_code. The feature id is the parcel id (GET /v1/parcels/{id}).',
            minzoom: zooms.min_zoom,
            maxzoom: DETAIL_ZOOM,
            fields: {
              id: 'Number: internal parcel id',
              parcel_id: 'String: county-assigned parcel id',
              county: 'String: county slug',
              dor_use_code: 'String: DOR use code, 4 characters',
              just_value: 'Number: just (market) value, dollars',
              owner_name: 'String: owner of record',
            },
          },
        ],
      };
    },
  );
};
export default tiles;
