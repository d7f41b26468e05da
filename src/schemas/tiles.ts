// The vector tile routes: tile coordinates, the tile itself and the TileJSON document that advertises it.
import { Type, type Static } from '@sinclair/typebox';
import { ErrorEnvelope, commonErrors } from './common.ts';

/** Zoom levels 0-22; x and y are checked against the zoom in SQL (api.parcel_tile), which names the bound. */
export const TileParams = Type.Object({
  z: Type.Integer({ minimum: 0, maximum: 22, description: 'Zoom level, 0-22.' }),
  x: Type.Integer({ minimum: 0, maximum: 4194303, description: 'Column, 0 to 2^z - 1, from the west.' }),
  y: Type.Integer({ minimum: 0, maximum: 4194303, description: 'Row, 0 to 2^z - 1, from the north (XYZ scheme).' }),
});
export type TileParams = Static<typeof TileParams>;

const CACHE = 'private, max-age=3600: the browser reuses a tile for an hour, then asks again with If-None-Match.';
const tileHeaders = {
  ETag: Type.String({ description: 'Strong validator of the tile bytes; send it back in If-None-Match.' }),
  'Cache-Control': Type.String({ description: CACHE }),
};

export const TileResponses = {
  200: {
    description: 'A Mapbox Vector Tile (protobuf) with the layer parcels. Costs 1 credit.',
    headers: tileHeaders,
    content: { 'application/vnd.mapbox-vector-tile': { schema: Type.String({ format: 'binary' }) } },
  },
  204: {
    description: 'An empty tile: no parcel there, or a zoom below the minimum. Costs 1 credit.',
    headers: tileHeaders,
    type: 'null',
  },
  304: {
    description: 'Not modified: the If-None-Match validator is the tile’s. Not charged.',
    headers: tileHeaders,
    type: 'null',
  },
  404: ErrorEnvelope,
  ...commonErrors,
};

const Zoom = (description: string) => Type.Integer({ description });
export const TileJson = Type.Object(
  {
    tilejson: Type.Literal('3.0.0'),
    name: Type.String(),
    description: Type.String(),
    version: Type.String(),
    attribution: Type.String(),
    scheme: Type.Literal('xyz'),
    tiles: Type.Array(Type.String(), { description: 'The tile URL template ({z}/{x}/{y}).' }),
    minzoom: Zoom('Below this zoom tiles are empty.'),
    maxzoom: Zoom('The most detailed tiles; clients scale them beyond (overzoom), which costs no more requests.'),
    bounds: Type.Array(Type.Number(), { minItems: 4, maxItems: 4, description: 'Florida: west, south, east, north.' }),
    center: Type.Array(Type.Number(), { minItems: 3, maxItems: 3, description: 'Longitude, latitude, zoom.' }),
    vector_layers: Type.Array(
      Type.Object({
        id: Type.String(),
        description: Type.String(),
        minzoom: Type.Integer(),
        maxzoom: Type.Integer(),
        fields: Type.Record(Type.String(), Type.String()),
      }),
    ),
  },
  { $id: 'TileJSON' },
);
export type TileJson = Static<typeof TileJson>;
