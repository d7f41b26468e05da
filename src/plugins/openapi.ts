// OpenAPI 3.1 generated from the routes' TypeBox schemas, at /v1/openapi.json (and /api/v1/openapi.json), and a
// readable docs page at /docs served from the package's own files (no CDN). Both are public.
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

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
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  for (const prefix of ['/v1', '/api/v1']) {
    app.get(`${prefix}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
  }
});
