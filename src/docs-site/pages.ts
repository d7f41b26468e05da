// The docs' pages: the index at /docs and the layout of a guide (the guides on the left, the page, its sections).
import { chromeFooter, chromeHead, chromeHeader, PRODUCT } from '../site/chrome.ts';
import { html, raw, type Html } from '../site/html.ts';
import type { Rendered } from './markdown.ts';

export interface GuideEntry {
  slug: string;
  title: string;
  summary: string;
}

function layout(title: string, body: Html): Html {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · ${PRODUCT} docs</title>
        ${raw(chromeHead())}
        <link rel="stylesheet" href="/assets/docs.css" />
      </head>
      <body>
        ${raw(chromeHeader('docs'))} ${body} ${raw(chromeFooter())}
      </body>
    </html>`;
}

const sidebar = (guides: GuideEntry[], current: string) =>
  html`<nav class="guides" aria-label="Guides">
    <p class="label">Guides</p>
    <ol>
      ${guides.map(
        (g) =>
          html`<li>
            <a href="/docs/guides/${g.slug}" ${g.slug === current ? raw('aria-current="page"') : ''}>${g.title}</a>
          </li>`,
      )}
    </ol>
    <p class="label">Reference</p>
    <ul>
      <li><a href="/docs/reference">API reference</a></li>
      <li><a href="/v1/openapi.json">OpenAPI document</a></li>
      <li><a href="/docs/changelog" ${current === 'changelog' ? raw('aria-current="page"') : ''}>Changelog</a></li>
    </ul>
  </nav>`;

export function docsPage(guides: GuideEntry[], current: string, page: Rendered): Html {
  const toc =
    page.sections.length > 1
      ? html`<nav class="toc" aria-label="On this page">
          <p class="label">On this page</p>
          <ul>
            ${page.sections.map((s) => html`<li><a href="#${s.id}">${s.text}</a></li>`)}
          </ul>
        </nav>`
      : '';
  return layout(
    page.title,
    html`<div class="docs">
      ${sidebar(guides, current)}
      <main id="main" class="guide">${raw(page.html)}</main>
      ${toc}
    </div>`,
  );
}

export function docsHome(guides: GuideEntry[]): Html {
  return layout(
    'Documentation',
    html`<div class="docs">
      ${sidebar(guides, '')}
      <main id="main" class="guide">
        <h1>Documentation</h1>
        <p class="lead">
          Everything to go from an account to your first call and on to production: start with the quick start, then
          read the guides your use needs. Every operation, parameter and field is in the
          <a href="/docs/reference">API reference</a>, with samples in curl, JavaScript and Python.
        </p>
        <ul class="cards">
          ${guides.map(
            (g) =>
              html`<li>
                <a href="/docs/guides/${g.slug}"><strong>${g.title}</strong></a>
                <p>${g.summary}</p>
              </li>`,
          )}
          <li>
            <a href="/docs/reference"><strong>API reference</strong></a>
            <p>Every operation with its parameters, responses and code samples; try them with your key.</p>
          </li>
          <li>
            <a href="/docs/changelog"><strong>Changelog</strong></a>
            <p>Every change a client can notice, newest first; the newest date is the API's version.</p>
          </li>
        </ul>
      </main>
    </div>`,
  );
}
