// Header resolution: names compared without case, spaces or punctuation (`OWN_NAME` = `own name` = `OwnName`),
// plus per-column aliases for the spellings that drift between years (SAL_CHG_CD / SAL_CHNG_CD, STATE_PAR_ID /
// STATE_PARCEL_ID ...). A file without a header is read positionally when its first record has the documented
// column count and a numeric first field (legacy SDF files).
import { ImportError } from './errors.ts';

export interface Layout {
  /** Canonical column names the mapper asks for. */
  columns: readonly string[];
  aliases?: Readonly<Record<string, readonly string[]>>;
  required: readonly string[];
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

export function resolveHeader(fields: string[], layout: Layout, file: string): ResolvedHeader {
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
  const index: Record<string, number> = {};
  for (const c of layout.columns) index[c] = find(c);
  const missingRequired = layout.required.filter((c) => index[c]! < 0);
  if (missingRequired.length) {
    const pos = layout.positional;
    if (pos && fields.length === pos.length && /^\d+$/.test(fields[0]!.trim())) {
      const byPos: Record<string, number> = {};
      for (const c of layout.columns) byPos[c] = pos.indexOf(c);
      return { index: byPos, width: pos.length, missing: [], headerless: true };
    }
    throw new ImportError(
      `${file}: header lacks required column(s) ${missingRequired.join(', ')} (found: ${fields.slice(0, 12).join(', ')}${fields.length > 12 ? ', …' : ''})`,
    );
  }
  return { index, width: fields.length, missing: layout.columns.filter((c) => index[c]! < 0), headerless: false };
}
