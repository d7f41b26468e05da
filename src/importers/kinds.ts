// Every kind of file the import CLI loads, and which of them a file looks like when it is not the kind asked for.
import { delinquencyKind } from './delinquencies.ts';
import { fitsLayout } from './header.ts';
import { nalKind } from './nal.ts';
import { geometryKind } from './parcel-geometry.ts';
import type { Kind } from './pipeline.ts';
import { sdfKind } from './sdf.ts';

export const KINDS: readonly Kind[] = [nalKind, sdfKind, geometryKind, delinquencyKind];

/** Names ogr2ogr reads as polygons; loaded as a CSV kind they would only be text. */
const GEOMETRY_FILE = /\.(shp|geojson|geojsonl|geojsons|json|jsonl|ndjson)$/i;

/** The kind other than `kind` that the file's name or first record fits, if any: `import <that kind>` is the fix. */
export function lookalike(kind: string, fields: readonly string[], file: string): Kind | undefined {
  if (kind !== geometryKind.kind && GEOMETRY_FILE.test(file)) return geometryKind;
  return KINDS.find((k) => k.kind !== kind && fitsLayout(fields, k.layout));
}
