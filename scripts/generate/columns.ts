// The file layouts the generator writes are the ones the importers read, defined once in src/importers: the NAL
// (florida.md 1.3), the SDF (1.4) and the project's standard delinquency CSV; plus the polygon properties.
import { STANDARD_COLUMNS } from '../../src/importers/delinquencies.ts';
import { NAL_COLUMNS } from '../../src/importers/nal.ts';
import { SDF_COLUMNS } from '../../src/importers/sdf.ts';

export { NAL_COLUMNS, SDF_COLUMNS };
export const DELINQUENCY_COLUMNS = STANDARD_COLUMNS;

/** GeoJSONSeq feature properties of the per-county polygon files (FDOR PIN layer naming). */
export const POLYGON_PROPERTIES = ['PARCELNO', 'CO_NO'] as const;

export type NalColumn = (typeof NAL_COLUMNS)[number];

/** Column name -> position, so rows are filled by name but written as plain arrays (fast at 10.8M rows). */
export const NAL = Object.fromEntries(NAL_COLUMNS.map((name, i) => [name, i])) as Record<NalColumn, number>;
