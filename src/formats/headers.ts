// The headers that carry what a JSON list answer says in its body: the total (X-Total-Count), the next and previous
// pages (RFC 8288 Link), and the file name of a download (Content-Disposition).
import type { Page } from '../schemas/common.ts';

/** The URL's path and its query with `offset` set to `offset`. */
function withOffset(url: string, offset: number): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
  params.set('offset', String(offset));
  return `${path}?${params.toString()}`;
}

/**
 * Link header value with rel="next" (when rows follow) and rel="prev" (when rows precede) for the request URL, the
 * same request with another offset; relative references (RFC 8288 3.1: resolved against the request's URL). Null
 * when there is neither.
 */
export function pageLinks(url: string, page: Page): string | null {
  const links: string[] = [];
  if (page.has_more) links.push(`<${withOffset(url, page.offset + page.limit)}>; rel="next"`);
  if (page.offset > 0) links.push(`<${withOffset(url, Math.max(0, page.offset - page.limit))}>; rel="prev"`);
  return links.length > 0 ? links.join(', ') : null;
}

/**
 * `attachment; filename="<endpoint>-<UTC date>.<ext>"`, the endpoint being the path after the version segment
 * (/v1/parcels/12/sales -> parcels-12-sales); characters other than letters, digits, '-' and '_' become '_'.
 */
export function attachment(url: string, ext: string, now = new Date()): string {
  const q = url.indexOf('?');
  const path = (q < 0 ? url : url.slice(0, q)).replace(/^\/(?:api\/)?v1\//, '');
  const endpoint = path
    .split('/')
    .filter((s) => s !== '')
    .join('-')
    .replace(/[^\w-]/g, '_');
  return `attachment; filename="${endpoint}-${now.toISOString().slice(0, 10)}.${ext}"`;
}
