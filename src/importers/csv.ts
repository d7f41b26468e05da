// CSV records: RFC 4180 quoting, lenient where real roll files are not (a quote inside an unquoted field is text).
// Returns null when a quoted field is still open at the end of the text: the record continues on the next line.
export function parseCsv(text: string, delimiter = ','): string[] | null {
  if (!text.includes('"')) return text.split(delimiter);
  const out: string[] = [];
  const n = text.length;
  let i = 0;
  for (;;) {
    if (text.charCodeAt(i) === 34 /* " */) {
      let value = '';
      let j = i + 1;
      for (;;) {
        const q = text.indexOf('"', j);
        if (q < 0) return null;
        value += text.slice(j, q);
        if (text.charCodeAt(q + 1) === 34) {
          value += '"';
          j = q + 2;
          continue;
        }
        j = q + 1;
        break;
      }
      // Text after the closing quote up to the delimiter (malformed, but seen): keep it.
      const d = text.indexOf(delimiter, j);
      const end = d < 0 ? n : d;
      value += text.slice(j, end);
      out.push(value);
      if (d < 0) return out;
      i = d + delimiter.length;
    } else {
      const d = text.indexOf(delimiter, i);
      if (d < 0) {
        out.push(text.slice(i));
        return out;
      }
      out.push(text.slice(i, d));
      i = d + delimiter.length;
    }
  }
}

/** One CSV field as written to a rejects file or a fixture. */
export function csvField(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const csvLine = (values: (string | number | null | undefined)[]) => values.map(csvField).join(',');
