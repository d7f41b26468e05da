// OpenAPI 3.1 generated from the routes' TypeBox schemas, at /v1/openapi.json (and /api/v1/openapi.json), and a
// readable docs page at /docs served from the package's own files (no CDN) under a policy of its own. Both are public.
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

/**
 * The docs page's Content-Security-Policy (the rest of the API sends the stricter one of src/http-edge.ts): Swagger
 * UI runs from this server's own files, reads the document from it and draws its icons from data: URLs; nothing
 * inline, no other origin, no framing.
 */
const DOCS_CSP = [
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

export default fp(async (app) => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Florida Property and Tax-Delinquency Data API',
        version: '1.0.0',
        description:
          'Read-only statewide parcels (all 67 counties), recorded sales, county metadata and delinquent-tax / ' +
          'tax-certificate records. Every request costs 1 credit when it succeeds (2xx); errors are free. ' +
          'Authenticate with `Authorization: Bearer <key>` or `X-API-Key: <key>`.',
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
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: DOCS_CSP,
    // without Swagger's top bar: its logo is an SVG with an inline style, and its box loads documents from any URL
    uiConfig: { docExpansion: 'list', deepLinking: true, layout: 'BaseLayout' },
  });
  for (const prefix of ['/v1', '/api/v1']) {
    app.get(`${prefix}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
  }
});
