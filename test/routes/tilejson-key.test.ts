// The TileJSON needs the API key like every /v1 route (interface: every request under /v1 requires a key) and costs
// no credit; its documentation (the OpenAPI summary, docs/formats.md) says both.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { buildTestApp } from '../helpers/app.ts';

const { app, newClient } = await buildTestApp(t);
const DOC = new URL('../../docs/formats.md', import.meta.url);

const used = async (headers: Record<string, string>) =>
  (await app.inject({ url: '/v1/account/usage', headers })).json().data.events_count as number;

t.test('without a key: 401, as every /v1 route', async (t) => {
  for (const headers of [{}, { authorization: 'Bearer flprop_live_nope' }]) {
    const res = await app.inject({ url: '/v1/tiles/parcels.json', headers });
    t.equal(res.statusCode, 401);
    t.equal(res.json().error.code, 'unauthorized');
  }
});

t.test('with a key: 200 and no credit spent', async (t) => {
  const c = await newClient('developer');
  const before = await used(c.headers);
  for (let i = 0; i < 3; i++) {
    const res = await app.inject({ url: '/v1/tiles/parcels.json', headers: c.headers });
    t.equal(res.statusCode, 200);
  }
  t.equal(await used(c.headers), before, 'three TileJSON answers, no credit');
});

t.test('the docs say both: the key is needed, no credit is spent', async (t) => {
  const spec = (await app.inject({ url: '/v1/openapi.json' })).json();
  const summary = spec.paths['/v1/tiles/parcels.json'].get.summary as string;
  t.match(summary, /needs the API key/);
  t.match(summary, /no credit/);
  t.notMatch(summary, /\(free\)/);
  const formats = readFileSync(DOC, 'utf8');
  t.match(formats, /`GET \/v1\/tiles\/parcels\.json` costs no credit but, like every `\/v1` route, needs the API key/);
});
