// Bad requests of every shape get a 4xx in the error envelope, never a 500 or a stack trace.
import { availableParallelism } from 'node:os';
import t, { type Test } from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import { loadConfig } from '../../src/config.ts';
import { newRequestId } from '../../src/request-id.ts';

const { app, get } = await buildTestApp(t);

const isEnvelope = (t: Test, body: string, status: number, code: string) => {
  const parsed = JSON.parse(body);
  t.same(Object.keys(parsed), ['error'], `${status}: only an error object`);
  t.equal(parsed.error.code, code);
  t.match(parsed.error.request_id, /^req_[a-f0-9]+$/);
  t.notMatch(body, /at .*\.ts:\d+/, 'no stack trace');
};

t.test('unknown routes are 404 not_found in the envelope, with or without a key', async (t) => {
  for (const url of ['/v1/nothing', '/nothing', '/api/v1/parcels/1/nothing/else', '/v2/counties']) {
    const res = await get(url);
    t.equal(res.statusCode, 404, url);
    isEnvelope(t, res.body, 404, 'not_found');
  }
});

t.test('malformed percent-encoding in the path is 400 bad_request', async (t) => {
  const res = await get('/v1/counties/%E0%A4%A');
  t.equal(res.statusCode, 400);
  isEnvelope(t, res.body, 400, 'bad_request');
});

t.test('malformed percent-encoding in the query string never gives a 500', async (t) => {
  const res = await get('/v1/counties?x=%zz%');
  t.ok(res.statusCode < 500, `got ${res.statusCode}`);
});

t.test('an oversized URL is 400 bad_request, not a bare 431', async (t) => {
  const res = await get(`/v1/counties?q=${'a'.repeat(9000)}`);
  t.equal(res.statusCode, 400);
  isEnvelope(t, res.body, 400, 'bad_request');
  t.equal(res.headers['x-request-id'], res.json().error.request_id);
  t.notOk(res.headers.ratelimit, 'refused before authentication and metering');
});

t.test('a county slug with characters outside the slug alphabet is 400 naming the parameter', async (t) => {
  const res = await get(`/v1/counties/${encodeURIComponent("x' OR 1=1 --")}`);
  t.equal(res.statusCode, 400);
  t.match(res.json().error.message, /county/);
});

t.test('a path parameter longer than the router allows is refused in the envelope', async (t) => {
  const res = await get(`/v1/counties/${'a'.repeat(300)}`);
  t.ok(res.statusCode === 400 || res.statusCode === 404, `got ${res.statusCode}`);
  isEnvelope(t, res.body, res.statusCode, res.statusCode === 400 ? 'bad_request' : 'not_found');
});

t.test('other methods on a GET route are refused in the envelope', async (t) => {
  const res = await app.inject({ method: 'DELETE', url: '/v1/counties' });
  t.ok(res.statusCode === 404 || res.statusCode === 405);
  isEnvelope(t, res.body, res.statusCode, res.statusCode === 404 ? 'not_found' : 'method_not_allowed');
});

t.test('every response carries X-Request-Id equal to the body request id', async (t) => {
  const res = await get('/v1/nothing');
  t.equal(res.headers['x-request-id'], res.json().error.request_id);
});

t.test('request ids are req_ and 24 hex characters, all different (across refills of the random pool)', async (t) => {
  const ids = Array.from({ length: 1500 }, newRequestId);
  t.ok(
    ids.every((id) => /^req_[0-9a-f]{24}$/.test(id)),
    'the shape',
  );
  t.equal(new Set(ids).size, ids.length, 'no repeats');
});

t.test('configuration lists every bad setting at once', async (t) => {
  t.throws(
    () => loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', REDIS_URL: 'http://x', API_KEY_SECRET: 'short' }),
    /PORT[\s\S]*LOG_LEVEL[\s\S]*REDIS_URL[\s\S]*API_KEY_SECRET|PORT[\s\S]*REDIS_URL/,
  );
  try {
    loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', REDIS_URL: 'http://x', API_KEY_SECRET: 'short' });
  } catch (err) {
    const message = (err as Error).message;
    for (const name of ['PORT', 'LOG_LEVEL', 'REDIS_URL', 'API_KEY_SECRET']) t.match(message, name);
  }
});

t.test('production refuses to start without a key secret', async (t) => {
  t.throws(() => loadConfig({ NODE_ENV: 'production' }), /API_KEY_SECRET/);
});

t.test('the database pool defaults to the cores plus one, and an explicit size wins', async (t) => {
  const secret = 'x'.repeat(32);
  t.equal(loadConfig({ API_KEY_SECRET: secret }).DATABASE_POOL_SIZE, availableParallelism() + 1);
  t.equal(loadConfig({ API_KEY_SECRET: secret, DATABASE_POOL_SIZE: '12' }).DATABASE_POOL_SIZE, 12);
  t.throws(() => loadConfig({ API_KEY_SECRET: secret, DATABASE_POOL_SIZE: '0' }), /DATABASE_POOL_SIZE/);
});
