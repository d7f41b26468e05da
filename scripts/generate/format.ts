// Text rendering every profile shares: zero-padded numbers, money, and CSV fields quoted only where needed.

export const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** pad(n, 2) for the statewide hot path (n >= 0). */
export const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

export const money = (v: number) => v.toFixed(2);

const NEEDS_QUOTES = /[",\r\n]/;

/** One RFC 4180 field: quoted (quotes doubled) only when it holds a comma, quote or line break; null is empty. */
export function csvField(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  const s = typeof value === 'string' ? value : String(value);
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const csvLine = (values: readonly (string | number | null | undefined)[]) => values.map(csvField).join(',');
