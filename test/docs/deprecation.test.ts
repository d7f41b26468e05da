// The deprecation mechanism (docs/api.md#versioning): a route that declares `config.deprecation` is marked deprecated
// in the OpenAPI document and answers with Deprecation (RFC 9745), Sunset (RFC 8594) and Link headers, on success
// and on error alike; other routes carry none of them.
import t from 'tap';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import { deprecationHeaders } from '../../src/plugins/deprecation.ts';
import { buildTestApp } from '../helpers/app.ts';

const oldRoute: FastifyPluginAsync = async (app) => {
  app.get(
    '/v1/old-thing',
    {
      config: { deprecation: { since: '2026-12-01', sunset: '2027-06-01', successor: '/v1/counties' } },
      schema: {
        summary: 'An operation on its way out',
        querystring: Type.Object({ fail: Type.Optional(Type.Boolean()) }),
        response: { 200: Type.Object({ ok: Type.Boolean() }) },
      },
      onRequest: [app.authenticate('rest')],
    },
    async (request) => {
      if ((request.query as { fail?: boolean }).fail) throw new Error('boom');
      return { ok: true };
    },
  );
};

const { app, get } = await buildTestApp(t, {}, { plugins: [oldRoute] });

t.test('a deprecated operation says so in headers, on success and on error', async (t) => {
  for (const [url, status] of [
    ['/v1/old-thing', 200],
    ['/v1/old-thing?fail=true', 500],
  ] as const) {
    const res = await get(url);
    t.equal(res.statusCode, status, url);
    t.equal(res.headers.deprecation, `@${Date.UTC(2026, 11, 1) / 1000}`, `${url}: Deprecation is @<unix seconds>`);
    t.equal(res.headers.sunset, 'Tue, 01 Jun 2027 00:00:00 GMT', `${url}: Sunset is an HTTP-date`);
    t.match(res.headers.link, '</docs/guides/versioning>; rel="deprecation"');
    t.match(res.headers.link, '</v1/counties>; rel="successor-version"');
  }
  const current = await get('/v1/counties');
  t.equal(current.headers.deprecation, undefined, 'an operation not deprecated has no Deprecation header');
  t.equal(current.headers.sunset, undefined);
});

t.test('the document marks it deprecated', async (t) => {
  const op = (await app.inject({ url: '/v1/openapi.json' })).json().paths['/v1/old-thing'].get;
  t.equal(op.deprecated, true);
  t.match(op.description, 'Deprecated** since 2026-12-01');
});

t.test('bad dates are refused when the route is declared, not on a request', async (t) => {
  t.throws(() => deprecationHeaders({ since: '2026-13-01', sunset: '2027-01-01' }), /YYYY-MM-DD/);
  t.throws(() => deprecationHeaders({ since: '2027-01-01', sunset: '2026-01-01' }), /must follow/);
});
