// Server-rendered HTML for the account site: a tagged template that escapes every value it is given unless the value
// is itself HTML made by this template (or `raw`), and the page layout. No inline script and no inline style: the
// Content-Security-Policy allows only the site's own files (src/site/assets/, and the shared header's: chrome.ts).
import { chromeFooter, chromeHead, chromeHeader } from './chrome.ts';

export class Html {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** Markup this module did not escape: only for constant strings written in the source. */
export const raw = (markup: string) => new Html(markup);

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/** `html\`<p>${text}</p>\``: every interpolated value is escaped; arrays are joined; null, undefined and false vanish. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Html(out);
}

export interface Viewer {
  email: string;
  name: string;
}

export interface PageOptions {
  title: string;
  /** The signed-in person, for the navigation and the sign-out button; null on the public pages. */
  viewer: Viewer | null;
  /** The CSRF token for the sign-out form (and any other form on the page). */
  csrf: string;
  /** Which navigation entry is the current page. */
  current?: string;
  /** A short message shown above the content: a confirmation or an error. */
  notice?: { kind: 'ok' | 'error'; text: string | Html } | null;
}

const NAV = [
  ['/account', 'Overview'],
  ['/account/keys', 'API keys'],
  ['/account/usage', 'Usage'],
  ['/account/requests', 'Request log'],
  ['/account/webhooks', 'Webhooks'],
  ['/account/saved-searches', 'Saved searches'],
  ['/account/quickstart', 'Quick start'],
  ['/account/plans', 'Plans & packs'],
  ['/docs', 'API docs'],
] as const;

/** A hidden field carrying the CSRF token; every form that changes something has one. */
export const csrfField = (token: string) => html`<input type="hidden" name="_csrf" value="${token}" />`;

export function page(opts: PageOptions, content: Html): Html {
  const nav = opts.viewer
    ? html`<nav aria-label="Account">
        <ul>
          ${NAV.map(
            ([href, label]) =>
              html`<li><a href="${href}" ${opts.current === href ? raw(' aria-current="page"') : ''}>${label}</a></li>`,
          )}
        </ul>
        <form method="post" action="/account/logout" class="signout">
          ${csrfField(opts.csrf)}
          <span class="who">${opts.viewer.email}</span>
          <button type="submit" class="link">Sign out</button>
        </form>
      </nav>`
    : html`<nav aria-label="Site">
        <ul>
          <li>
            <a href="/account/plans" ${opts.current === '/account/plans' ? raw(' aria-current="page"') : ''}
              >Plans & packs</a
            >
          </li>
          <li><a href="/docs">API docs</a></li>
          <li>
            <a href="/account/login" ${opts.current === '/account/login' ? raw(' aria-current="page"') : ''}>Sign in</a>
          </li>
          <li><a href="/account/signup" class="cta">Create account</a></li>
        </ul>
      </nav>`;
  const notice = opts.notice
    ? html`<div class="notice ${opts.notice.kind}" role="${opts.notice.kind === 'error' ? 'alert' : 'status'}">
        ${opts.notice.text}
      </div>`
    : '';
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${opts.title} · Florida Property API</title>
        ${raw(chromeHead())}
        <link rel="stylesheet" href="/account/assets/site.css" />
        <script src="/account/assets/site.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        ${raw(chromeHeader('account', { signedIn: opts.viewer !== null }))}
        <header class="top">
          <a class="brand" href="/account">Your account</a>
          ${nav}
        </header>
        <main id="main" tabindex="-1">
          <h1>${opts.title}</h1>
          ${notice} ${content}
        </main>
        ${raw(chromeFooter())}
      </body>
    </html> `;
}

/** Whole dollars and cents from cents: 1900 -> "$19", 5 -> "$0.05". */
export function dollars(cents: number): string {
  return cents % 100 === 0 ? `$${(cents / 100).toLocaleString('en-US')}` : `$${(cents / 100).toFixed(2)}`;
}

export const count = (n: number) => n.toLocaleString('en-US');

/** A UTC time as `2026-11-25 14:03 UTC`. */
export const utc = (d: Date | null | undefined, empty = 'never') =>
  d ? `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC` : empty;

/**
 * A table in a horizontally scrolling box: `columns` become the header row (`scope="col"`), `body` the rows as
 * rendered, `foot` an optional footer. The caller renders the empty case (most pages say it in a sentence instead).
 */
export function dataTable(
  cls: string,
  columns: unknown[],
  body: unknown,
  extra: { caption?: string; foot?: Html } = {},
) {
  return html`<div class="scroll">
    <table class="${cls}">
      ${
        extra.caption
          ? html`<caption>
              ${extra.caption}
            </caption>`
          : ''
      }
      <thead>
        <tr>
          ${columns.map((c) => html`<th scope="col">${c}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${body}
      </tbody>
      ${
        extra.foot
          ? html`<tfoot>
              ${extra.foot}
            </tfoot>`
          : ''
      }
    </table>
  </div>`;
}
