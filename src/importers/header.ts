// Header resolution: names compared without case, spaces or punctuation (`OWN_NAME` = `own name` = `OwnName`),
// plus per-column aliases for the spellings that drift between years (SAL_CHG_CD / SAL_CHNG_CD, STATE_PAR_ID /
// STATE_PARCEL_ID ...). A file without a header is read positionally when its first record has the documented
// column count and a numeric first field (legacy SDF files).

export interface Layout {
  /** Canonical column names the mapper asks for. */
  columns: readonly string[];
  aliases?: Readonly<Record<string, readonly string[]>>;
  /** Columns a file of this kind must have; a list inside is "one of these". */
  required: readonly (string | readonly string[])[];
  /** The documented physical column order, for header-less files. */
  positional?: readonly string[];
}

export const headerKey = (s: string) => s.toUpperCase().replace(/[^A-Z0-9]/g, '');

export interface ResolvedHeader {
  /** canonical name -> field index, -1 when the file lacks the column */
  index: Record<string, number>;
  width: number;
  missing: string[];
  /** true when the first record was data (no header row). */
  headerless: boolean;
}

/** The header lacks required columns: `missing` names them ("AV_NSD or AV_SD" for a choice). */
export class MissingColumnsError extends Error {
  constructor(readonly missing: string[]) {
    super(`missing ${missing.join(', ')}`);
  }
}

/** canonical name -> field index (-1 when absent) of the layout's columns in a header row. */
function indexOf(fields: readonly string[], layout: Layout): Record<string, number> {
  const keys = new Map<string, number>();
  fields.forEach((f, i) => {
    const k = headerKey(f);
    if (!keys.has(k)) keys.set(k, i);
  });
  const find = (name: string) => {
    for (const n of [name, ...(layout.aliases?.[name] ?? [])]) {
      const i = keys.get(headerKey(n));
      if (i !== undefined) return i;
    }
    return -1;
  };
  return Object.fromEntries(layout.columns.map((c) => [c, find(c)]));
}

/** The layout's required columns (or choices of columns) that a header lacks. */
function missingRequired(index: Record<string, number>, layout: Layout): string[] {
  return layout.required
    .map((r) => (typeof r === 'string' ? [r] : r))
    .filter((choice) => choice.every((c) => index[c]! < 0))
    .map((choice) => choice.join(' or '));
}

/** A header-less record of the layout's documented width with a numeric first field. */
const positionalRecord = (fields: readonly string[], layout: Layout) =>
  !!layout.positional && fields.length === layout.positional.length && /^\d+$/.test(fields[0]!.trim());

/** Whether a first record could be read as a file of this layout (by its header, or positionally). */
export const fitsLayout = (fields: readonly string[], layout: Layout) =>
  positionalRecord(fields, layout) || missingRequired(indexOf(fields, layout), layout).length === 0;

export function resolveHeader(fields: string[], layout: Layout): ResolvedHeader {
  const index = indexOf(fields, layout);
  const missing = missingRequired(index, layout);
  if (missing.length) {
    if (positionalRecord(fields, layout)) {
      const byPos = Object.fromEntries(layout.columns.map((c) => [c, layout.positional!.indexOf(c)]));
      return { index: byPos, width: layout.positional!.length, missing: [], headerless: true };
    }
    throw new MissingColumnsError(missing);
  }
  return { index, width: fields.length, missing: layout.columns.filter((c) => index[c]! < 0), headerless: false };
}
