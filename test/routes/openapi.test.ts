// The OpenAPI document and the docs page: public, generated from the route schemas, served without a CDN.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';

const { app } = await buildTestApp(t);

t.test('GET /v1/openapi.json is public OpenAPI 3.1 with one copy of every path', async (t) => {
  for (const url of ['/v1/openapi.json', '/api/v1/openapi.json']) {
    const res = await app.inject({ url });
    t.equal(res.statusCode, 200, url);
    const doc = res.json();
    t.equal(doc.openapi, '3.1.0');
    const paths = Object.keys(doc.paths);
    for (const p of ['/v1/counties', '/v1/counties/{county}', '/v1/account/usage']) t.ok(paths.includes(p), p);
    t.notOk(
      paths.some((p) => p.startsWith('/api/v1') || p.startsWith('/bench') || p.includes('openapi')),
      'no duplicates',
    );
    t.ok(doc.components.securitySchemes.bearer, 'Bearer auth documented');
    t.ok(doc.paths['/v1/counties/{county}'].get.responses['404'], 'error responses documented');
  }
});

t.test('GET /docs/reference serves a readable page, under our name, and its assets from the project', async (t) => {
  const page = await app.inject({ url: '/docs/reference' });
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-type'], /html/);
  t.notMatch(page.body, /https?:\/\/(cdn|unpkg|cdnjs)/, 'no CDN');
  const bundle = await app.inject({ url: '/docs/reference/static/swagger-ui-bundle.js' });
  t.equal(bundle.statusCode, 200);
  t.match(page.body, /swagger-ui-bundle\.js/, 'the page loads the bundled UI');
  t.match(page.body, '<title>API reference · Florida Property API</title>', 'our title, not "Swagger UI"');
  t.match(page.body, 'theme/logo.svg', 'our icon');
  t.notMatch(page.body, 'favicon-32x32.png', "not the framework's icon");
  t.match(page.body, 'theme/chrome.js', 'the shared header and footer');
});
