// Which representation a request asks for: the `format` query parameter, else the Accept header (RFC 9110 12.5.1).
export type AltFormat = 'csv' | 'geojson';
export type Format = 'json' | AltFormat;

export const MEDIA_TYPES: Record<Format, string> = {
  json: 'application/json',
  csv: 'text/csv',
  geojson: 'application/geo+json',
};

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

/** Media ranges an Accept header lists beyond this many are ignored (a header is at most 64 KB anyway). */
const MAX_RANGES = 64;

/** The media ranges of an Accept header with their weights; malformed entries are skipped. */
export function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const entry of header.split(',', MAX_RANGES)) {
    const [range = '', ...params] = entry.split(';');
    const slash = range.indexOf('/');
    if (slash <= 0) continue;
    const type = range.slice(0, slash).trim().toLowerCase();
    const subtype = range
      .slice(slash + 1)
      .trim()
      .toLowerCase();
    if (type === '' || subtype === '') continue;
    let q = 1;
    for (const param of params) {
      const eq = param.indexOf('=');
      if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'q') continue;
      const value = Number(param.slice(eq + 1).trim());
      q = Number.isFinite(value) ? Math.min(Math.max(value, 0), 1) : 0;
    }
    ranges.push({ type, subtype, q });
  }
  return ranges;
}

/** The weight a client gives a media type: that of the most specific range matching it (0 when none does). */
function quality(media: string, ranges: MediaRange[]): number {
  const [type, subtype] = media.split('/') as [string, string];
  let best = -1;
  let q = 0;
  for (const r of ranges) {
    const specificity =
      r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === '*' ? 1 : r.type === '*' ? 0 : -1;
    if (specificity > best) {
      best = specificity;
      q = r.q;
    }
  }
  return q;
}

/**
 * The format to answer in. A `format` parameter the route offers wins (the schema has refused any other value);
 * otherwise the offered format the Accept header weighs highest, ties going to the earlier offer (JSON first). No
 * Accept header, or one that accepts none of the offers: JSON, as every route answers without negotiation.
 */
export function negotiate(param: unknown, accept: string | undefined, offered: readonly Format[]): Format {
  if (typeof param === 'string' && (offered as readonly string[]).includes(param)) return param as Format;
  if (!accept) return 'json';
  const ranges = parseAccept(accept);
  let chosen: Format = 'json';
  let weight = 0;
  for (const format of offered) {
    const q = quality(MEDIA_TYPES[format], ranges);
    if (q > weight) {
      chosen = format;
      weight = q;
    }
  }
  return chosen;
}
