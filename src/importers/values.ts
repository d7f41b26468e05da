// Field parsers shared by every kind: text as NULL-when-blank, integers, money, dates, rates. A bad value throws
// RowError naming the column, and the row goes to the rejects file with that reason.
export class RowError extends Error {}

export const text = (s: string | undefined): string | null => {
  if (s === undefined) return null;
  const t = s.trim();
  return t === '' ? null : t.replace(/\s+/g, ' ');
};

const INT = /^[+-]?\d+(\.\d*)?$/;

/** Whole numbers; decimals (DBF style `44.00000`) are truncated. `zeroIsNull` for "0 means none" fields. */
export function int(col: string, s: string | undefined, min: number, max: number, zeroIsNull = false): number | null {
  if (s === undefined) return null;
  let t = s.trim();
  if (t === '') return null;
  if (t.includes(',')) t = t.replace(/,/g, '');
  if (!INT.test(t)) throw new RowError(`${col}: not a whole number: '${s}'`);
  const n = Math.trunc(Number(t));
  if (zeroIsNull && n === 0) return null;
  if (n < min || n > max) throw new RowError(`${col}: ${n} is out of range ${min}..${max}`);
  return n;
}

export const MAX_BIGINT = Number.MAX_SAFE_INTEGER;

/** Money with at most 2 decimals; `$` and thousands separators allowed. Returned as text for a numeric column. */
export function money(col: string, s: string | undefined): string | null {
  if (s === undefined) return null;
  const t = s.trim().replace(/[$,\s]/g, '');
  if (t === '') return null;
  if (!/^-?\d{1,12}(\.\d{0,2})?$/.test(t)) throw new RowError(`${col}: not an amount: '${s}'`);
  return t;
}

/** Interest rate in percent (`18.00`, `5.25%`), 0-100. */
export function rate(col: string, s: string | undefined): string | null {
  if (s === undefined) return null;
  const t = s.trim().replace(/%$/, '');
  if (t === '') return null;
  if (!/^\d{1,3}(\.\d{1,2})?$/.test(t) || Number(t) > 100) throw new RowError(`${col}: not a rate in percent: '${s}'`);
  return t;
}

/** YYYY-MM-DD, or the MM/DD/YYYY of county exports; checked to be a real calendar day. */
export function date(col: string, s: string | undefined): string | null {
  if (s === undefined) return null;
  const t = s.trim();
  if (t === '') return null;
  let m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t);
  let y: number, mo: number, d: number;
  if (m) [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  else if ((m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(t))) [y, mo, d] = [Number(m[3]), Number(m[1]), Number(m[2])];
  else throw new RowError(`${col}: not a date (YYYY-MM-DD): '${s}'`);
  const dt = new Date(Date.UTC(y, mo - 1, d));
  if (dt.getUTCFullYear() !== y || dt.getUTCMonth() !== mo - 1 || dt.getUTCDate() !== d || y < 1800 || y > 2200) {
    throw new RowError(`${col}: not a calendar date: '${s}'`);
  }
  return `${y}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** FDOR month-precision sale date: the 1st of SALE_YR/SALE_MO; null when the slot holds no sale. */
export function saleMonth(yearCol: string, y: string | undefined, m: string | undefined): string | null {
  const year = int(yearCol, y, 0, 2200, true);
  const month = int(yearCol.replace('YR', 'MO'), m, 0, 12, true);
  if (year === null) return null;
  if (year < 1800) throw new RowError(`${yearCol}: ${year} is not a sale year`);
  if (month === null) throw new RowError(`${yearCol.replace('YR', 'MO')}: missing month for sale year ${year}`);
  return `${year}-${String(month).padStart(2, '0')}-01`;
}
