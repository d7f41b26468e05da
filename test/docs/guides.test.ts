// The docs site: the guides of docs/guides rendered by the server with the shared header, links that all answer from
// the server, and an OpenAPI document that names its responses, documents MCP, carries code samples for every
// operation and dates its version by the changelog.
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { GUIDE_SLUGS, GUIDES_DIR } from '../../src/docs-site/index.ts';
import { renderMarkdown } from '../../src/docs-site/markdown.ts';
import { CHANGELOG_PATH, latestVersion } from '../../src/docs-site/version.ts';
import { buildTestApp } from '../helpers/app.ts';

const { app } = await buildTestApp(t);
const doc = (await app.inject({ url: '/v1/openapi.json' })).json();

t.test('every guide in docs/guides is served, in the index, with the shared header and footer', async (t) => {
  const files = readdirSync(GUIDES_DIR).filter((f) => f.endsWith('.md'));
  t.same(files.map((f) => f.replace(/\.md$/, '')).sort(), [...GUIDE_SLUGS].sort(), 'each file is listed once');
  const index = await app.inject({ url: '/docs', headers: { accept: 'text/html' } });
  t.equal(index.statusCode, 200);
  for (const slug of GUIDE_SLUGS) {
    const res = await app.inject({ url: `/docs/guides/${slug}` });
    t.equal(res.statusCode, 200, slug);
    const title = renderMarkdown(readFileSync(`${GUIDES_DIR}/${slug}.md`, 'utf8')).title;
    t.ok(title.length > 3, `${slug} has a title`);
    t.match(res.body, `<h1 id=`, `${slug}: rendered`);
    t.match(index.body, `href="/docs/guides/${slug}"`, `${slug}: in the index`);
    t.match(res.body, 'class="fl-bar"', `${slug}: the shared header`);
    t.match(res.body, 'class="fl-foot"', `${slug}: the shared footer`);
    t.notMatch(res.body, '{{BASE_URL}}', `${slug}: the base URL is filled in`);
    t.notMatch(res.body.replace(/<pre>[\s\S]*?<\/pre>/g, ''), /\]\(|```|\*\*/, `${slug}: no Markdown left unrendered`);
  }
  t.equal((await app.inject({ url: '/docs/guides/nope' })).statusCode, 404);
  t.equal((await app.inject({ url: '/docs/changelog' })).statusCode, 200);
});

t.test('every link of the guides, the changelog and the OpenAPI document answers from this server', async (t) => {
  const pages = ['/docs', '/docs/changelog', ...GUIDE_SLUGS.map((s) => `/docs/guides/${s}`)];
  const hrefs = new Set<string>();
  for (const url of pages) {
    const body = (await app.inject({ url })).body;
    for (const [, href] of body.matchAll(/href="(\/[^"#]*)/g)) hrefs.add(href!);
  }
  for (const [, href] of JSON.stringify(doc).matchAll(/\]\((\/[^)#]*)/g)) hrefs.add(href!);
  t.ok(hrefs.size > 15, `${hrefs.size} distinct links`);
  for (const href of hrefs) {
    const res = await app.inject({ url: href, headers: { accept: 'text/html' } });
    t.ok(res.statusCode < 400 || res.statusCode === 401, `${href}: ${res.statusCode}`);
  }
  t.notMatch(JSON.stringify(doc), /docs\/[a-z-]+\.md/, 'no repository path in the document');
});

t.test('the OpenAPI document: named responses, MCP, code samples, the changelog version', async (t) => {
  t.equal(doc.info.version, latestVersion(readFileSync(CHANGELOG_PATH, 'utf8')), 'version = newest changelog date');
  t.ok(doc.paths['/api/mcp']?.post, 'the MCP endpoint is documented');
  let operations = 0;
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, Record<string, unknown>>>)) {
    for (const [method, op] of Object.entries(ops)) {
      operations++;
      for (const [code, response] of Object.entries(
        op.responses as unknown as Record<string, { description: string }>,
      )) {
        t.notMatch(response.description, /^(Default Response|HTTP \d+)$/, `${method} ${path} ${code} is named`);
      }
      const samples = op['x-codeSamples'] as unknown as { lang: string; source: string }[];
      t.same(
        samples.map((s) => s.lang),
        ['Shell', 'JavaScript', 'Python'],
        `${method} ${path}: three samples`,
      );
      t.match(samples[0]!.source, /^curl/, `${method} ${path}: curl`);
      t.match(samples[1]!.source, 'createFloridaClient', `${method} ${path}: the typed client`);
      t.match(samples[2]!.source, 'import requests', `${method} ${path}: Python`);
    }
  }
  t.ok(operations > 25, `${operations} operations`);
  t.equal(doc.paths['/v1/parcels/{id}'].get.responses['200'].description.split('.')[0], 'Parcel');
  t.match(doc.paths['/v1/sales/search'].get.responses['200'].description, /^A page of sales, with pagination/);
});

t.test('a guide cannot inject markup: the renderer escapes everything', async (t) => {
  const out = renderMarkdown('# T\n\n<script>alert(1)</script> [x](javascript:alert(1)) `<b>`\n\n```\n<img>\n```');
  t.notMatch(out.html, '<script>');
  t.notMatch(out.html, 'href="javascript:');
  t.match(out.html, '<code>&lt;b&gt;</code>');
  t.match(out.html, '<pre><code>&lt;img&gt;</code></pre>');
});
