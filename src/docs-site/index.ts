// The docs a customer reads first, served from the repository's docs/: /docs (the guides' index), /docs/guides/<slug>
// (docs/guides/<slug>.md), /docs/changelog (docs/changelog.md) and the typed client's files at /docs/client/<file>
// (clients/typescript). Rendered once at start, so what is served is what is committed; `{{BASE_URL}}` in a guide
// becomes SITE_URL, so its samples work as printed. The API reference itself is /docs/reference (src/plugins/openapi.ts).
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { sendPage } from '../site/chrome.ts';
import { renderMarkdown, type Rendered } from './markdown.ts';
import { docsHome, docsPage, type GuideEntry } from './pages.ts';
import { CHANGELOG_PATH } from './version.ts';

const ROOT = join(import.meta.dirname, '..', '..');
export const GUIDES_DIR = join(ROOT, 'docs', 'guides');
export const CLIENT_DIR = join(ROOT, 'clients', 'typescript');

/** The guides in reading order; each is docs/guides/<slug>.md. */
export const GUIDE_SLUGS = [
  'quick-start',
  'authentication',
  'errors',
  'pagination',
  'rate-limits-and-credits',
  'search',
  'tax-certificates',
  'formats-and-tiles',
  'webhooks',
  'mcp',
  'typescript-client',
  'versioning',
] as const;

/** The client's files a customer downloads, by name. */
export const CLIENT_FILES = ['index.ts', 'schema.d.ts'] as const;

export interface DocsOptions {
  /** SITE_URL: replaces {{BASE_URL}} in the guides. */
  baseUrl: string;
}

const docsSite: FastifyPluginAsync<DocsOptions> = async (app, opts) => {
  const render = (path: string): Rendered =>
    renderMarkdown(readFileSync(path, 'utf8').replaceAll('{{BASE_URL}}', opts.baseUrl));
  const guides = new Map<string, Rendered>(GUIDE_SLUGS.map((slug) => [slug, render(join(GUIDES_DIR, `${slug}.md`))]));
  const entries: GuideEntry[] = GUIDE_SLUGS.map((slug) => ({
    slug,
    title: guides.get(slug)!.title,
    summary: guides.get(slug)!.summary,
  }));
  const changelog = render(CHANGELOG_PATH);

  const home = docsHome(entries).toString();
  const pages = new Map<string, string>([...guides].map(([slug, g]) => [slug, docsPage(entries, slug, g).toString()]));
  const changelogPage = docsPage(entries, 'changelog', changelog).toString();

  const hidden = { schema: { hide: true } };
  app.get('/docs', hidden, async (_request, reply) => sendPage(reply, home));
  app.get('/docs/guides', hidden, async (_request, reply) => reply.redirect('/docs'));
  app.get<{ Params: { slug: string } }>('/docs/guides/:slug', hidden, async (request, reply) => {
    const page = pages.get(request.params.slug);
    return page ? sendPage(reply, page) : reply.callNotFound();
  });
  app.get('/docs/changelog', hidden, async (_request, reply) => sendPage(reply, changelogPage));
  app.get<{ Params: { file: string } }>('/docs/client/:file', hidden, async (request, reply) => {
    // read when asked: `make client` writes schema.d.ts with an app built from these very routes
    const file = CLIENT_FILES.find((f) => f === request.params.file);
    if (!file) return reply.callNotFound();
    const body = await readFile(join(CLIENT_DIR, file));
    return reply.type('text/plain; charset=utf-8').header('Cache-Control', 'no-cache').send(body);
  });
};
export default docsSite;
