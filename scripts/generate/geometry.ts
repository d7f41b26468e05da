// Parcel polygons: lots on a grid of equal rectangles whose shared edges are exactly the same coordinates, written
// with 7 decimals (every profile's polygons). For the statewide state, each county's lots (~30 m squares in 10 x 10
// "subdivision" tiles) form one rectangular block centred near the county's real centroid, with the checks that the
// 67 blocks never overlap and stay on (coarsely) dry Florida land.
import type { CountyDef } from './counties.ts';

const METERS_PER_DEGREE_LAT = 111_320;
const LOT_METERS = 30;
/** A subdivision tile is TILE x TILE lots: parcels k..k+99 form one square block of lots (spatial clustering). */
export const TILE = 10;

export interface Block {
  coNo: number;
  lng0: number;
  lat0: number;
  /** Lot width / height in degrees. */
  w: number;
  h: number;
  tilesX: number;
  tilesY: number;
  /** Bounding box [minLng, minLat, maxLng, maxLat]. */
  bbox: [number, number, number, number];
}

export function planBlock(c: CountyDef, parcels: number): Block {
  const h = LOT_METERS / METERS_PER_DEGREE_LAT;
  const w = LOT_METERS / (METERS_PER_DEGREE_LAT * Math.cos((c.lat * Math.PI) / 180));
  const tiles = Math.max(1, Math.ceil(parcels / (TILE * TILE)));
  const tilesX = Math.max(1, Math.round(Math.sqrt(tiles * c.aspect)));
  const tilesY = Math.ceil(tiles / tilesX);
  const width = tilesX * TILE * w;
  const height = tilesY * TILE * h;
  // Snap the origin to the 7-decimal grid the files are written with, so the bbox is exactly what is written.
  const lng0 = Number((c.lng - width / 2).toFixed(7));
  const lat0 = Number((c.lat - height / 2).toFixed(7));
  return { coNo: c.coNo, lng0, lat0, w, h, tilesX, tilesY, bbox: [lng0, lat0, lng0 + width, lat0 + height] };
}

/** Lot (column, row) of parcel index k inside its county block. */
export function lotOf(b: Block, k: number): [number, number] {
  const t = Math.floor(k / (TILE * TILE));
  const w = k % (TILE * TILE);
  return [(t % b.tilesX) * TILE + (w % TILE), Math.floor(t / b.tilesX) * TILE + Math.floor(w / TILE)];
}

export const f7 = (v: number) => v.toFixed(7);

/**
 * Lots of w x h degrees from (lng0, lat0): lot (i, j) spans grid columns i..i+1 and rows j..j+1. Coordinate text is
 * computed once per column and row (toFixed is the costly part of writing 10M polygons), so a shared edge is literally
 * the same string in both neighbours.
 */
export class LotGrid {
  private xs: string[] = [];
  private ys: string[] = [];
  constructor(
    readonly lng0: number,
    readonly lat0: number,
    readonly w: number,
    readonly h: number,
  ) {}
  x(i: number): string {
    return (this.xs[i] ??= f7(this.lng0 + i * this.w));
  }
  y(j: number): string {
    return (this.ys[j] ??= f7(this.lat0 + j * this.h));
  }
  /** Lot (i, j) as [west, south, east, north] coordinate text. */
  lot(i: number, j: number): [string, string, string, string] {
    return [this.x(i), this.y(j), this.x(i + 1), this.y(j + 1)];
  }
}

/** Lot (column, row) of the index-th lot when lots fill a grid `columns` wide, row by row. */
export const rowMajor = (index: number, columns: number): [number, number] => [
  index % columns,
  Math.floor(index / columns),
];

// A rectangle's closed ring runs counter-clockwise (RFC 7946) from its south-west corner: SW, SE, NE, NW, SW.

/** A rectangle's ring as GeoJSON coordinate text. */
export const geojsonRing = (x0: string, y0: string, x1: string, y1: string) =>
  `[[${x0},${y0}],[${x1},${y0}],[${x1},${y1}],[${x0},${y1}],[${x0},${y0}]]`;

/** A rectangle's ring as WKT text. */
export const wktRing = (x0: string, y0: string, x1: string, y1: string) =>
  `(${x0} ${y0}, ${x1} ${y0}, ${x1} ${y1}, ${x0} ${y1}, ${x0} ${y0})`;

/** A county block's polygons as GeoJSON geometry text. */
export class BlockWriter {
  private grid: LotGrid;
  constructor(readonly block: Block) {
    this.grid = new LotGrid(block.lng0, block.lat0, block.w, block.h);
  }
  /**
   * The GeoJSON geometry text of parcel k. A split parcel is a MultiPolygon of the lot's west and east 45% with a
   * strip (a drainage easement) between them.
   */
  geometry(k: number, split: boolean): string {
    const [i, j] = lotOf(this.block, k);
    const [x0, y0, x1, y1] = this.grid.lot(i, j);
    if (!split) return `{"type":"Polygon","coordinates":[${geojsonRing(x0, y0, x1, y1)}]}`;
    const west = this.block.lng0 + i * this.block.w;
    const [a, b] = [f7(west + this.block.w * 0.45), f7(west + this.block.w * 0.55)];
    return `{"type":"MultiPolygon","coordinates":[[${geojsonRing(x0, y0, a, y1)}],[${geojsonRing(b, y0, x1, y1)}]]}`;
  }
}

/** Florida's bounding box as the brief states it. */
export const FLORIDA_BBOX: [number, number, number, number] = [-87.6, 24.5, -80.0, 31.0];

/**
 * A coarse outline of the Florida mainland (lng, lat), clockwise from the Alabama line; good to a few km. Bays
 * (Tampa, Charlotte Harbor, Biscayne) are not cut out, so "inside" means land-ish, not surveyed land.
 */
export const FLORIDA_OUTLINE: [number, number][] = [
  [-87.6, 31.0],
  [-85.0, 31.0],
  [-84.86, 30.71],
  [-82.22, 30.57],
  [-82.05, 30.36],
  [-82.02, 30.75],
  [-81.45, 30.71],
  [-81.4, 30.3],
  [-81.25, 29.8],
  [-81.05, 29.3],
  [-80.8, 28.85],
  [-80.55, 28.45],
  [-80.6, 28.1],
  [-80.38, 27.6],
  [-80.2, 27.2],
  [-80.05, 26.8],
  [-80.06, 26.3],
  [-80.1, 25.9],
  [-80.2, 25.6],
  [-80.35, 25.35],
  [-80.45, 25.2],
  [-80.9, 25.13],
  [-81.15, 25.15],
  [-81.15, 25.35],
  [-81.35, 25.8],
  [-81.75, 25.95],
  [-81.82, 26.2],
  [-81.95, 26.45],
  [-82.2, 26.75],
  [-82.3, 26.9],
  [-82.45, 27.1],
  [-82.6, 27.35],
  [-82.68, 27.5],
  [-82.75, 27.7],
  [-82.85, 27.85],
  [-82.84, 28.1],
  [-82.75, 28.4],
  [-82.7, 28.75],
  [-82.8, 29.0],
  [-83.05, 29.15],
  [-83.3, 29.5],
  [-83.55, 29.85],
  [-84.0, 30.07],
  [-84.35, 29.95],
  [-84.85, 29.65],
  [-85.0, 29.68],
  [-85.35, 29.68],
  [-85.4, 29.95],
  [-85.7, 30.1],
  [-86.2, 30.3],
  [-86.5, 30.38],
  [-87.0, 30.35],
  [-87.5, 30.28],
  [-87.6, 30.3],
];

/** Even-odd ray casting. */
export function insideOutline(lng: number, lat: number, poly: [number, number][] = FLORIDA_OUTLINE): boolean {
  let inside = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i]!;
    const [xj, yj] = poly[j]!;
    if (yi > lat !== yj > lat && lng < ((xj - xi) * (lat - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

const overlaps = (a: Block['bbox'], b: Block['bbox']) => a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3];

/**
 * Throws unless every block lies in Florida's bounding box with all four corners and its centre inside the coarse
 * outline, and no two counties' blocks overlap. Cheap (67 blocks), so it runs before every generation.
 */
export function assertBlocks(blocks: readonly Block[]): void {
  const [minX, minY, maxX, maxY] = FLORIDA_BBOX;
  for (const b of blocks) {
    const [x0, y0, x1, y1] = b.bbox;
    if (x0 < minX || y0 < minY || x1 > maxX || y1 > maxY) {
      throw new Error(`county ${b.coNo}: block ${b.bbox.join(',')} leaves Florida's bounding box`);
    }
    const probes: [number, number][] = [
      [x0, y0],
      [x1, y0],
      [x1, y1],
      [x0, y1],
      [(x0 + x1) / 2, (y0 + y1) / 2],
    ];
    for (const [x, y] of probes) {
      if (!insideOutline(x, y)) throw new Error(`county ${b.coNo}: block point ${x},${y} is off the Florida outline`);
    }
  }
  for (let i = 0; i < blocks.length; i++) {
    for (let j = i + 1; j < blocks.length; j++) {
      if (overlaps(blocks[i]!.bbox, blocks[j]!.bbox)) {
        throw new Error(`counties ${blocks[i]!.coNo} and ${blocks[j]!.coNo}: polygon blocks overlap`);
      }
    }
  }
}
