// CSV (RFC 4180) of a list answer's `data`: a header row of the JSON field names in the JSON order, one row per item,
// written by csv-stringify as the rows are read.
import { Readable } from 'node:stream';
import { stringify, type Stringifier } from 'csv-stringify';

interface JsonSchema {
  type?: string | string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
}

/** Text fields that hold a nested document (GeoJSON): left out like objects and arrays. */
const NESTED_TEXT = new Set(['geometry']);

/** Whether a field's values are scalars (strings, numbers, booleans, null), which a CSV field can hold. */
function isScalar(schema: JsonSchema): boolean {
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return alternatives.every(isScalar);
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return types.every((t) => t !== 'object' && t !== 'array');
}

/**
 * The CSV columns of a route from its 200 response schema: the fields of the items of `data`, in order, less the
 * nested ones (objects, arrays, a geometry); undefined when `data` is not a list of objects.
 */
export function csvColumns(response: unknown): string[] | undefined {
  const data = (response as JsonSchema | undefined)?.properties?.data;
  const fields = data?.type === 'array' ? data.items?.properties : undefined;
  if (!fields) return undefined;
  return Object.entries(fields)
    .filter(([name, schema]) => isScalar(schema) && !NESTED_TEXT.has(name))
    .map(([name]) => name);
}

/**
 * A text starting with one of these is a formula to a spreadsheet (=HYPERLINK(...) runs when the file is opened): it
 * is written with a leading apostrophe, which spreadsheets show as text (OWASP, CSV injection). Numbers are written as
 * numbers, so a negative longitude stays -80.2.
 */
const FORMULA_START = new Set(['=', '+', '-', '@', '\t', '\r']);
const text = (value: string) => (FORMULA_START.has(value.charAt(0)) ? `'${value}` : value);

/** The CSV of `rows` as a stream: numbers as JSON writes them, true/false, null as an empty field. */
export function csvStream(rows: readonly Record<string, unknown>[], columns: string[]): Stringifier {
  const out = stringify({
    header: true,
    columns,
    record_delimiter: 'windows', // CRLF, as RFC 4180 writes records
    quoted_match: /[\r\n]/, // a lone CR or LF inside a value is quoted too, not only a CRLF
    cast: { boolean: (v) => (v ? 'true' : 'false'), string: text },
  });
  Readable.from(rows).pipe(out);
  return out;
}
