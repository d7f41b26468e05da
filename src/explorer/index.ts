// The map explorer at /explorer: one public page where a person pastes an API key, searches parcels by owner or
// address or clicks the map, and sees the polygons (from /v1/tiles) and a parcel's fields, sales and delinquencies
// (from the /v1 API, with the key, charged as any request), over an offline base map of Florida and its counties drawn
// from our own tables (/explorer/basemap, public and free). Every asset is served from here: the page, its script and
// styles, and MapLibre GL's files from node_modules; nothing from a CDN. docs/formats.md#map-explorer.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import helmet from '@fastify/helmet';
import { getBasemapTile } from '../queries/basemap.ts';
import { noneMatch, TILE_TYPE } from '../routes/tiles.ts';
import { TileParams } from '../schemas/tiles.ts';
import { explorerPage } from './page.ts';

export interface ExplorerOptions {
  /** A MapLibre style URL for the base map (MAP_STYLE_URL); without one, the offline base map of /explorer/basemap. */
  styleUrl?: string;
}

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

const MAPLIBRE_DIST = join(dirname(createRequire(import.meta.url).resolve('maplibre-gl/package.json')), 'dist');
const OWN = join(import.meta.dirname, 'public');
const TYPES: Record<string, string> = {
  '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** A strong validator: the bytes hashed (SHA-256, base64url, 128 bits). */
const etagOf = (body: Buffer) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;

async function load(dir: string, name: string): Promise<Asset> {
  const body = await readFile(join(dir, name));
  const type = TYPES[name.slice(name.lastIndexOf('.'))]!;
  return { body, type, etag: etagOf(body) };
}

function sendAsset(reply: FastifyReply, asset: Asset, ifNoneMatch: string | undefined) {
  // the files change only with a deploy: reused for an hour, then revalidated
  reply.header('ETag', asset.etag).header('Cache-Control', 'public, max-age=3600');
  if (ifNoneMatch === asset.etag) return reply.code(304).send();
  return reply.type(asset.type).send(asset.body);
}

const explorer: FastifyPluginAsync<ExplorerOptions> = async (app, opts) => {
  // The only files served, by name: nothing a client writes in the path reaches the file system.
  const assets = new Map<string, Asset>([
    ['explorer.js', await load(OWN, 'explorer.js')],
    ['map-style.js', await load(OWN, 'map-style.js')],
    ['explorer.css', await load(OWN, 'explorer.css')],
    ['maplibre/maplibre-gl.mjs', await load(MAPLIBRE_DIST, 'maplibre-gl.mjs')],
    ['maplibre/maplibre-gl-worker.mjs', await load(MAPLIBRE_DIST, 'maplibre-gl-worker.mjs')],
    ['maplibre/maplibre-gl.css', await load(MAPLIBRE_DIST, 'maplibre-gl.css')],
  ]);
  const page = Buffer.from(explorerPage(opts.styleUrl));

  // A style of the operator's choosing may fetch its tiles, glyphs and sprites from anywhere on the web.
  const remote = opts.styleUrl ? ['https:', new URL(opts.styleUrl).origin] : [];
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        // MapLibre starts its worker from a blob: URL that imports the worker file
        workerSrc: ["'self'", 'blob:'],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:', 'blob:', ...remote],
        connectSrc: ["'self'", ...remote],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        formAction: ["'none'"],
        objectSrc: ["'none'"],
      },
    },
    referrerPolicy: { policy: 'no-referrer' },
  });

  const hidden = { schema: { hide: true } };
  app.get('/explorer', hidden, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-cache').send(page),
  );
  // The base map's tiles: public (the page draws Florida before a key is pasted) and free. A tile changes only when
  // the county shapes are refreshed after a load, so any cache may keep it an hour, then revalidate it.
  app.get<{ Params: TileParams }>(
    '/explorer/basemap/:z/:x/:y.mvt',
    { schema: { hide: true, params: TileParams } },
    async (request, reply) => {
      const { z, x, y } = request.params;
      const tile = await getBasemapTile(app.sql, z, x, y);
      const etag = etagOf(tile);
      reply.header('ETag', etag).header('Cache-Control', 'public, max-age=3600');
      if (noneMatch(request.headers['if-none-match'], etag)) return reply.code(304).send();
      if (tile.length === 0) return reply.code(204).send();
      return reply.type(TILE_TYPE).send(tile);
    },
  );
  app.get<{ Params: { '*': string } }>('/explorer/*', hidden, async (request, reply) => {
    const asset = assets.get(request.params['*']);
    if (!asset) return reply.callNotFound();
    return sendAsset(reply, asset, request.headers['if-none-match']);
  });
};
export default explorer;
