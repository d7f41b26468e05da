// OpenAPI 3.1 generated from the routes' TypeBox schemas, at /v1/openapi.json (and /api/v1/openapi.json), completed by
// src/docs-site/document.ts (response descriptions, the MCP endpoint, code samples), and the API reference at
// /docs/reference: Swagger UI from the package's own files (no CDN), under our name, icon and header, with each
// operation's code samples shown under its description. Both are public.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { completeDocument } from '../docs-site/document.ts';
import { samplesMarkdown, type CodeSample } from '../docs-site/code-samples.ts';
import { API_VERSION } from '../docs-site/version.ts';
import { chromeFooter, chromeHeader, PAGE_CSP, PRODUCT } from '../site/chrome.ts';

const CHROME = join(import.meta.dirname, '..', 'site', 'chrome');
const DOCS_SITE = join(import.meta.dirname, '..', 'docs-site');

export interface OpenApiOptions {
  /** Where the code samples send their requests: SITE_URL. */
  baseUrl: string;
}

/** The reference page's copy of the document: each operation's samples appended to its description. */
function withSamplesInDescriptions(document: Record<string, unknown>) {
  const paths = document.paths as Record<string, Record<string, Record<string, unknown>>>;
  for (const operations of Object.values(paths)) {
    for (const op of Object.values(operations)) {
      const samples = op['x-codeSamples'] as CodeSample[] | undefined;
      if (!samples) continue;
      op.description = `${(op.description as string | undefined) ?? ''}\n\n#### Code samples\n\n${samplesMarkdown(samples)}`;
    }
  }
  return document;
}

export default fp<OpenApiOptions>(async (app, opts) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: PRODUCT,
        version: API_VERSION,
        description:
          'Read-only statewide parcels (all 67 counties), recorded sales, county metadata and delinquent-tax / ' +
          'tax-certificate records, over REST and MCP. Every request costs 1 credit when it succeeds (2xx); errors ' +
          'are free. Authenticate with `Authorization: Bearer <key>` or `X-API-Key: <key>`: press **Authorize** and ' +
          'paste your key to try any operation here.\n\n' +
          'New here? Read the [quick start](/docs/guides/quick-start), then [errors](/docs/guides/errors), ' +
          '[pagination](/docs/guides/pagination) and [rate limits and credits](/docs/guides/rate-limits-and-credits). ' +
          'The version is the date of the newest [changelog](/docs/changelog) entry; see the ' +
          '[versioning policy](/docs/guides/versioning).',
      },
      servers: [
        { url: '/', description: 'This server; paths carry the /v1 version segment (also served under /api/v1).' },
      ],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'flprop_live_… or flprop_test_… key' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
      security: [{ bearer: [] }, { apiKey: [] }],
    },
    // One copy of each path: /api/v1 mirrors /v1, and benchmark-only routes are not part of the API.
    transform: ({ schema, url }) => {
      const hidden = !url.startsWith('/v1/');
      return { schema: hidden ? { ...schema, hide: true } : schema, url } as never;
    },
    transformObject: (documentObject) =>
      completeDocument(
        'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject,
        opts.baseUrl,
      ) as never,
  });
  const header = chromeHeader('reference');
  const footer = chromeFooter();
  await app.register(swaggerUi, {
    routePrefix: '/docs/reference',
    staticCSP: PAGE_CSP,
    // BaseLayout: without Swagger's top bar (its logo, and a box that loads documents from any URL)
    uiConfig: { docExpansion: 'list', deepLinking: true, layout: 'BaseLayout', persistAuthorization: true },
    transformSpecification: (document) => withSamplesInDescriptions(document),
    theme: {
      title: `API reference · ${PRODUCT}`,
      favicon: [
        {
          filename: 'logo.svg',
          rel: 'icon',
          sizes: 'any',
          type: 'image/svg+xml',
          content: readFileSync(join(CHROME, 'logo.svg')),
        },
      ],
      css: [
        { filename: 'chrome.css', content: readFileSync(join(CHROME, 'chrome.css'), 'utf8') },
        { filename: 'reference.css', content: readFileSync(join(DOCS_SITE, 'reference.css'), 'utf8') },
      ],
      // the shared header and footer, put around Swagger UI's root (its page is the plugin's, not ours)
      js: [
        {
          filename: 'chrome.js',
          content:
            `document.body.insertAdjacentHTML('afterbegin', ${JSON.stringify(header)});\n` +
            `document.body.insertAdjacentHTML('beforeend', ${JSON.stringify(footer)});\n`,
        },
      ],
    },
  });
  for (const prefix of ['/v1', '/api/v1']) {
    app.get(`${prefix}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
  }
});
