// The usage page's figures: charged requests per UTC day over a range of days (by default this month and the last),
// one series per key and surface (REST and MCP apart), drawn as stacked bars in SVG (no script), and the same rows as a
// table and a CSV file.
import { stringify } from 'csv-stringify/sync';
import { count, dataTable, html, type Html } from './html.ts';
import type { UsageRow } from './queries.ts';

/** Series colours cycle through this many CSS classes (s0 ... s7 in site.css); MCP is the lighter shade. */
const PALETTE = 8;

export interface Month {
  /** YYYY-MM */
  period: string;
  /** First and last UTC day, YYYY-MM-DD. */
  from: string;
  to: string;
  days: number;
}

/** Last month and this one (UTC), oldest first. */
export function twoMonths(now = new Date()): [Month, Month] {
  const month = (y: number, m: number): Month => {
    const first = new Date(Date.UTC(y, m, 1));
    const days = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
    const from = first.toISOString().slice(0, 10);
    return { period: from.slice(0, 7), from, to: `${from.slice(0, 8)}${String(days).padStart(2, '0')}`, days };
  };
  return [month(now.getUTCFullYear(), now.getUTCMonth() - 1), month(now.getUTCFullYear(), now.getUTCMonth())];
}

/** A range of UTC days the usage pages show, and the months it touches (oldest first). */
export interface DayRange {
  from: string;
  to: string;
  months: Month[];
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** The longest range a usage page shows, in days (as site.usage_daily allows). */
export const MAX_RANGE_DAYS = 366;

/**
 * The range asked for by `from` and `to` (YYYY-MM-DD, UTC), by default last month and this one; a string saying
 * what is wrong when the range cannot be read, is reversed or is longer than MAX_RANGE_DAYS.
 */
export function dayRange(query: unknown, now = new Date()): DayRange | string {
  const q = (query ?? {}) as Record<string, unknown>;
  const [last, current] = twoMonths(now);
  const from = q.from === undefined || q.from === '' ? last.from : q.from;
  const to = q.to === undefined || q.to === '' ? current.to : q.to;
  const valid = (d: unknown): d is string => {
    const ms = typeof d === 'string' && DAY.test(d) ? Date.parse(`${d}T00:00:00Z`) : NaN;
    return !Number.isNaN(ms) && new Date(ms).toISOString().startsWith(d as string);
  };
  if (!valid(from) || !valid(to)) return 'From and to are days written YYYY-MM-DD.';
  const days = (Date.parse(to) - Date.parse(from)) / 86_400_000;
  if (days < 0) return 'The range starts after it ends: put the earlier day in From.';
  if (days > MAX_RANGE_DAYS) return `A range is at most ${MAX_RANGE_DAYS} days long.`;
  const months: Month[] = [];
  for (let d = new Date(`${from.slice(0, 7)}-01T00:00:00Z`); d.toISOString().slice(0, 10) <= to;) {
    months.push(twoMonths(new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)))[0]);
    d = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
  }
  return { from, to, months };
}

/** A download's file name: by months when the range is whole months (usage-2026-10-to-2026-11.csv), else by days. */
export function fileName(what: string, range: DayRange): string {
  const first = range.months[0]!;
  const last = range.months.at(-1)!;
  return range.from === first.from && range.to === last.to
    ? `${what}-${first.period}-to-${last.period}.csv`
    : `${what}-${range.from}-to-${range.to}.csv`;
}

export interface Series {
  id: string;
  label: string;
  cls: string;
}

const surfaceName = (s: string) => (s === 'mcp' ? 'MCP' : 'REST');

/** One series per key and surface, in key order, REST before MCP; a key keeps its colour across both surfaces. */
export function seriesOf(rows: UsageRow[]): Series[] {
  const keys = [...new Map(rows.map((r) => [r.key_id, r.key_display ?? r.key_id])).entries()].sort((a, b) =>
    a[1].localeCompare(b[1]),
  );
  const out: Series[] = [];
  keys.forEach(([keyId, display], i) => {
    for (const surface of ['rest', 'mcp']) {
      if (rows.some((r) => r.key_id === keyId && r.surface === surface)) {
        out.push({
          id: `${keyId}|${surface}`,
          label: `${display} · ${surfaceName(surface)}`,
          cls: `s${i % PALETTE}${surface === 'mcp' ? ' mcp' : ''}`,
        });
      }
    }
  });
  return out;
}

/** requests by day (YYYY-MM-DD) and series id */
function byDay(rows: UsageRow[]): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const r of rows) {
    const day = out.get(r.day) ?? new Map<string, number>();
    const id = `${r.key_id}|${r.surface}`;
    day.set(id, (day.get(id) ?? 0) + r.requests);
    out.set(r.day, day);
  }
  return out;
}

/** The smallest of 1, 2, 5 x 10^n at or above `n` (at least 5), so the axis reads in round numbers. */
function niceCeiling(n: number): number {
  let step = 1;
  for (;;) {
    for (const f of [1, 2, 5]) if (f * step >= Math.max(n, 5)) return f * step;
    step *= 10;
  }
}

const W = 760;
const H = 240;
const LEFT = 48;
const BOTTOM = 24;
const TOP = 10;

/** A stacked bar chart of one month; each segment's <title> names its day, series and count. */
export function chart(month: Month, rows: UsageRow[], series: Series[]): Html {
  const days = byDay(rows.filter((r) => r.day >= month.from && r.day <= month.to));
  let max = 0;
  for (const d of days.values())
    max = Math.max(
      max,
      [...d.values()].reduce((a, b) => a + b, 0),
    );
  const top = niceCeiling(max);
  const plotW = W - LEFT - 8;
  const plotH = H - TOP - BOTTOM;
  const slot = plotW / month.days;
  const barW = Math.max(2, slot * 0.7);
  const y = (v: number) => TOP + plotH - (v / top) * plotH;
  const ticks = [0, top / 2, top];
  const bars: Html[] = [];
  for (let d = 1; d <= month.days; d++) {
    const day = `${month.period}-${String(d).padStart(2, '0')}`;
    const counts = days.get(day);
    if (!counts) continue;
    let base = 0;
    const x = LEFT + (d - 1) * slot + (slot - barW) / 2;
    for (const s of series) {
      const n = counts.get(s.id) ?? 0;
      if (n === 0) continue;
      const y0 = y(base + n);
      const h = y(base) - y0;
      bars.push(
        html`<rect
          class="${s.cls}"
          x="${x.toFixed(1)}"
          y="${y0.toFixed(1)}"
          width="${barW.toFixed(1)}"
          height="${Math.max(h, 0.5).toFixed(1)}"
          ><title>${day} · ${s.label}: ${count(n)} requests</title></rect
        >`,
      );
      base += n;
    }
  }
  const labels: Html[] = [];
  for (let d = 1; d <= month.days; d += d === 1 ? 4 : 5) {
    labels.push(
      html`<text class="axis" x="${(LEFT + (d - 0.5) * slot).toFixed(1)}" y="${H - 6}" text-anchor="middle"
        >${d}</text
      >`,
    );
  }
  const total = [...days.values()].reduce((a, d) => a + [...d.values()].reduce((x, y) => x + y, 0), 0);
  return html`<figure class="chart">
    <svg viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-${month.period}">
      <title id="chart-${month.period}">Charged requests per UTC day in ${month.period}: ${count(total)} in all</title>
      ${ticks.map(
        (t) =>
          html`<line class="grid" x1="${LEFT}" x2="${W - 8}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}"></line
            ><text class="axis" x="${LEFT - 6}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end">${count(t)}</text>`,
      )}
      ${bars} ${labels}
    </svg>
    <figcaption>${month.period}: ${count(total)} charged requests</figcaption>
  </figure>`;
}

export function legend(series: Series[]): Html {
  if (series.length === 0) return html``;
  return html`<ul class="legend">
    ${series.map((s) => html`<li><span class="sw ${s.cls}" aria-hidden="true"></span>${s.label}</li>`)}
  </ul>`;
}

/** The same numbers as the chart: one row per day with any request, a column per series, and a total. */
export function table(months: Month[], rows: UsageRow[], series: Series[]): Html {
  const days = byDay(rows);
  const body = months.flatMap((m) => {
    const list = [...days.keys()].filter((d) => d >= m.from && d <= m.to).sort();
    const monthTotals = series.map((s) => list.reduce((a, d) => a + (days.get(d)!.get(s.id) ?? 0), 0));
    const grand = monthTotals.reduce((a, b) => a + b, 0);
    return [
      ...list.map((d) => {
        const c = days.get(d)!;
        const cells = series.map((s) => c.get(s.id) ?? 0);
        return html`<tr>
          <th scope="row">${d}</th>
          ${cells.map((n) => html`<td>${count(n)}</td>`)}
          <td>${count(cells.reduce((a, b) => a + b, 0))}</td>
        </tr>`;
      }),
      html`<tr class="total">
        <th scope="row">${m.period} total</th>
        ${monthTotals.map((n) => html`<td>${count(n)}</td>`)}
        <td>${count(grand)}</td>
      </tr>`,
    ];
  });
  return dataTable('numbers', ['Day (UTC)', ...series.map((s) => s.label), 'Total'], body, {
    caption: 'Charged requests per UTC day',
  });
}

/** day,key,key_id,mode,surface,requests: one line per day, key and surface with any request. */
export function csv(rows: UsageRow[]): string {
  return stringify(
    rows.map((r) => [r.day, r.key_display ?? '', r.key_id, r.mode, r.surface, r.requests]),
    { header: true, columns: ['day', 'key', 'key_id', 'mode', 'surface', 'requests'] },
  );
}
