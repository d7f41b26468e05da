// The header and footer every public page shares, so each part links to the others: the landing page (/), the docs
// (/docs), the account site (/account) and the map explorer (/explorer). Plain markup strings made only from constants
// here, so any page can embed them (the explorer's page is a string, the site's a tagged template); the styles and the
// logo are served by `chromeAssets` from /assets/, which every page's Content-Security-Policy ('self') allows.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';

export const PRODUCT = 'Florida Property API';

/** The part of the product a page belongs to: its entry in the header is marked as the current page. */
export type Section = 'home' | 'docs' | 'reference' | 'explorer' | 'plans' | 'account' | 'status';

const LINKS: [Section, string, string][] = [
  ['docs', '/docs', 'Docs'],
  ['reference', '/docs/reference', 'API reference'],
  ['explorer', '/explorer', 'Map explorer'],
  ['plans', '/#plans', 'Pricing'],
  ['status', '/status', 'Status'],
];

const current = (on: boolean) => (on ? ' aria-current="page"' : '');

/** The `<head>` lines: the shared stylesheet and the icon. */
export function chromeHead(): string {
  return (
    '<link rel="icon" type="image/svg+xml" href="/assets/logo.svg">' +
    '<link rel="stylesheet" href="/assets/chrome.css">'
  );
}

/** The top bar; `signedIn` swaps "Sign in / Create account" for a link to the account. */
export function chromeHeader(section?: Section, opts: { signedIn?: boolean } = {}): string {
  const links = LINKS.map(
    ([s, href, label]) => `<li><a href="${href}"${current(s === section)}>${label}</a></li>`,
  ).join('');
  const end = opts.signedIn
    ? `<li><a href="/account"${current(section === 'account')}>Your account</a></li>`
    : '<li><a href="/account/login">Sign in</a></li><li><a class="fl-cta" href="/account/signup">Create account</a></li>';
  return (
    `<nav class="fl-bar" aria-label="${PRODUCT}">` +
    `<a class="fl-brand" href="/"${current(section === 'home')}><img src="/assets/logo.svg" alt=""> ${PRODUCT}</a>` +
    `<ul class="fl-links">${links}</ul><ul class="fl-end">${end}</ul></nav>`
  );
}

/** The footer: every part of the product, and what the data is. */
export function chromeFooter(): string {
  return (
    '<footer class="fl-foot"><nav aria-label="Everything else">' +
    '<a href="/">Home</a><a href="/docs/guides/quick-start">Quick start</a><a href="/docs/reference">API reference</a>' +
    '<a href="/v1/openapi.json">OpenAPI document</a><a href="/docs/guides/mcp">MCP</a>' +
    '<a href="/docs/changelog">Changelog</a><a href="/explorer">Map explorer</a><a href="/account/plans">Plans & packs</a>' +
    '<a href="/account">Account</a><a href="/status">Status</a></nav>' +
    `<p>${PRODUCT}: Florida parcels, sales and tax certificates from the counties' public rolls, over REST and MCP.</p>` +
    '</footer>'
  );
}

const SRC = join(import.meta.dirname, '..');
const CSS = 'text/css; charset=utf-8';
/** The public pages' files under /assets/, by name: nothing a client writes in the path reaches the file system. */
const ASSETS: Record<string, { file: string; type: string }> = {
  'chrome.css': { file: 'site/chrome/chrome.css', type: CSS },
  'logo.svg': { file: 'site/chrome/logo.svg', type: 'image/svg+xml' },
  'landing.css': { file: 'landing/landing.css', type: CSS },
  'docs.css': { file: 'docs-site/docs.css', type: CSS },
};

/** Serves the files of ASSETS at /assets/<name> (read once at start). */
export const chromeAssets: FastifyPluginAsync = async (app) => {
  const files = new Map(
    Object.entries(ASSETS).map(([name, a]) => [name, { type: a.type, body: readFileSync(join(SRC, a.file)) }]),
  );
  app.get<{ Params: { name: string } }>('/assets/:name', { schema: { hide: true } }, async (request, reply) => {
    const asset = files.get(request.params.name);
    if (!asset) return reply.callNotFound();
    return reply.type(asset.type).header('Cache-Control', 'public, max-age=3600').send(asset.body);
  });
};

/**
 * The public pages' Content-Security-Policy (the API's own answers keep the stricter one of src/http-edge.ts): this
 * server's files only, nothing inline, no framing.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "object-src 'none'",
].join('; ');

/** Sends a public HTML page under PAGE_CSP, revalidated on every visit. */
export function sendPage(reply: FastifyReply, markup: { toString(): string }, status = 200): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('Content-Security-Policy', PAGE_CSP)
    .header('Cache-Control', 'no-cache')
    .send(markup.toString());
}
