// The overhead benchmark's floor routes (bench/floor-routes.ts): the same answer four ways, each guarded as its name
// says, and absent from the API itself.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import floorRoutes from '../../bench/floor-routes.ts';

const { app, db, get } = await buildTestApp(t, {}, { plugins: [floorRoutes] });
const production = await buildTestApp(t, {}, { db });

t.test('each prefix answers the same parcel, guarded as named', async (t) => {
  const metered = await get('/v1/parcels/1');
  t.equal(metered.statusCode, 200);
  t.ok(metered.headers.ratelimit, 'metering runs on /v1');
  for (const prefix of ['/bench/none/v1', '/bench/auth/v1', '/bench/roundtrip/v1']) {
    const res = await get(`${prefix}/parcels/1`);
    t.equal(res.statusCode, 200, prefix);
    t.same(res.json().data, metered.json().data, `${prefix}: the same parcel`);
    t.notOk(res.headers.ratelimit, `${prefix}: not metered`);
    t.equal(res.headers['x-bench-round-trip'], prefix === '/bench/roundtrip/v1' ? '1' : undefined, `${prefix}: Redis`);
    const anonymous = await app.inject({ url: `${prefix}/parcels/1` });
    t.equal(anonymous.statusCode, prefix === '/bench/none/v1' ? 200 : 401, `${prefix} without a key`);
  }
});

t.test('the round trip answers every request of a turn, however many', async (t) => {
  const answers = await Promise.all(
    Array.from({ length: 300 }, (_, i) => get(`/bench/roundtrip/v1/parcels/${1 + (i % 3)}`)),
  );
  t.same(new Set(answers.map((r) => r.statusCode)), new Set([200]));
  t.same(new Set(answers.map((r) => r.headers['x-bench-round-trip'])), new Set(['1']), 'each went to Redis');
  t.same(
    answers.map((r) => r.json().data.id),
    answers.map((_, i) => 1 + (i % 3)),
    'each request gets its own answer',
  );
});

t.test('an app built without them serves no /bench route', async (t) => {
  for (const url of [
    '/bench/none/v1/parcels/1',
    '/bench/auth/v1/parcels/1',
    '/bench/roundtrip/v1/parcels/1',
    '/bench/fixed',
  ]) {
    t.equal((await production.get(url)).statusCode, 404, url);
  }
});
