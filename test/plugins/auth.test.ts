// Authentication and the key rows: every way in, every way to be refused, and what the logs never hold.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import { generateKey } from '../../src/accounts/keys.ts';

const { app, db, logs, key, newClient, prefix } = await buildTestApp(t);
const URL = '/v1/counties';
const get = (headers: Record<string, string> = {}, url = URL) => app.inject({ method: 'GET', url, headers });
const stripId = (body: string) => body.replace(/req_[a-f0-9]+/, 'req_X');

const UNAUTHORIZED = '{"error":{"code":"unauthorized","message":"Invalid API key.","request_id":"req_X"}}';

t.test('a valid key works in either header; the Bearer scheme word is case-insensitive', async (t) => {
  t.equal((await get({ authorization: `Bearer ${key}` })).statusCode, 200);
  t.equal((await get({ authorization: `bearer ${key}` })).statusCode, 200);
  t.equal((await get({ authorization: `BEARER ${key}` })).statusCode, 200);
  t.equal((await get({ 'x-api-key': key })).statusCode, 200);
  t.equal((await get({ authorization: `Bearer ${key}`, 'x-api-key': key })).statusCode, 200, 'both headers, same key');
});

t.test('every failure is the same 401 body', async (t) => {
  const other = await newClient('growth');
  const revoked = await newClient('growth');
  await revoked.svc.revokeKey(revoked.keyId);
  const suspended = await newClient('growth');
  await suspended.svc.setStatus(suspended.client.id, 'suspended');
  const cases: Record<string, Record<string, string>> = {
    missing: {},
    'empty bearer': { authorization: 'Bearer ' },
    'two spaces': { authorization: `Bearer  ${key}` },
    'other scheme': { authorization: `Basic ${key}` },
    malformed: { authorization: 'Bearer flprop_live_tooShort' },
    'wrong prefix': { authorization: `Bearer ${key.replace('flprop', 'other')}` },
    unknown: { authorization: `Bearer ${generateKey('live')}` },
    revoked: { authorization: `Bearer ${revoked.key}` },
    'suspended client': { authorization: `Bearer ${suspended.key}` },
    conflicting: { authorization: `Bearer ${key}`, 'x-api-key': other.key },
  };
  const headerSets = new Set<string>();
  for (const [name, headers] of Object.entries(cases)) {
    const res = await get(headers);
    t.equal(res.statusCode, 401, name);
    t.equal(stripId(res.body), UNAUTHORIZED, `${name}: byte-identical body`);
    const {
      date: _d,
      'x-request-id': _r,
      'x-ratelimit-remaining': _rem,
      'x-ratelimit-reset': _reset,
      ratelimit: _rl,
      ...rest
    } = res.headers;
    headerSets.add(JSON.stringify(rest));
  }
  t.equal(headerSets.size, 1, 'the same headers for every failure');
});

t.test('a key in the query string never authenticates', async (t) => {
  for (const name of ['api_key', 'key', 'apikey', 'token']) {
    const res = await get({}, `${URL}?${name}=${key}`);
    t.equal(res.statusCode, 401, name);
  }
});

t.test('revocation takes effect on the very next request, in every API process', async (t) => {
  // a second app: its own pools and key cache, the same Postgres and Redis, as a second process would have
  const second = await buildTestApp(t, { REDIS_KEY_PREFIX: prefix }, { db });
  const c = await newClient('growth');
  const viaSecond = () => second.app.inject({ method: 'GET', url: URL, headers: c.headers });
  t.equal((await get(c.headers)).statusCode, 200);
  t.equal((await viaSecond()).statusCode, 200);
  await c.svc.revokeKey(c.keyId);
  t.equal((await get(c.headers)).statusCode, 401, 'first process');
  t.equal((await viaSecond()).statusCode, 401, 'second process');
});

t.test('suspending a client refuses every key it owns; activating restores them', async (t) => {
  const c = await newClient('pro');
  const { key: second } = await c.svc.createKey(c.client.id, 'test');
  await c.svc.setStatus(c.client.id, 'suspended');
  t.equal((await get(c.headers)).statusCode, 401);
  t.equal((await get({ 'x-api-key': second })).statusCode, 401);
  await c.svc.setStatus(c.client.id, 'active');
  t.equal((await get(c.headers)).statusCode, 200);
  t.equal((await get({ 'x-api-key': second })).statusCode, 200);
});

t.test('rotation: several active keys of one client all work', async (t) => {
  const c = await newClient('developer');
  const { key: next } = await c.svc.createKey(c.client.id, 'live');
  t.equal((await get(c.headers)).statusCode, 200, 'old key');
  t.equal((await get({ authorization: `Bearer ${next}` })).statusCode, 200, 'new key');
  await c.svc.revokeKey(c.keyId);
  t.equal((await get(c.headers)).statusCode, 401, 'old key after revocation');
  t.equal((await get({ authorization: `Bearer ${next}` })).statusCode, 200, 'new key still works');
});

t.test('an MCP Starter key calling REST gets 403 rest_disabled, with the rate-limit headers of its plan', async (t) => {
  const c = await newClient('mcp_starter');
  const [first, second] = [await get(c.headers), await get(c.headers)];
  for (const res of [first, second]) {
    t.equal(res.statusCode, 403);
    t.equal(res.json().error.code, 'rest_disabled');
    t.equal(res.headers['x-ratelimit-limit'], '30', 'MCP Starter: 30 requests a minute');
    t.match(res.headers['ratelimit'], /^default;r=\d+;t=\d+$/);
  }
  t.equal(Number(second.headers['x-ratelimit-remaining']), Number(first.headers['x-ratelimit-remaining']) - 1);
});

/** The status a cached key gets once a change made with plain SQL has reached the app (polled for up to 1 s). */
async function statusAfterChange(headers: Record<string, string>) {
  let status = 200;
  for (let i = 0; i < 100 && status === 200; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    status = (await get(headers)).statusCode;
  }
  return status;
}

t.test('a key revoked with plain SQL is refused at once: Postgres notifies every process', async (t) => {
  const c = await newClient('growth');
  t.equal((await get(c.headers)).statusCode, 200, 'cached and admitted');
  await db.sql`UPDATE accounts.api_keys SET status = 'revoked', revoked_at = now() WHERE id = ${c.keyId}`;
  t.equal(await app.redis.exists(`st:${c.client.id}`), 1, 'the balance in Redis is untouched');
  t.equal(await statusAfterChange(c.headers), 401);
});

t.test('a client suspended with plain SQL is refused at once', async (t) => {
  const c = await newClient('pro');
  t.equal((await get(c.headers)).statusCode, 200, 'cached and admitted');
  await db.sql`UPDATE accounts.clients SET status = 'suspended' WHERE id = ${c.client.id}`;
  t.equal(await statusAfterChange(c.headers), 401);
});

t.test('failures are answered no sooner than the failure floor, whatever the case', async (t) => {
  for (const headers of [{}, { authorization: `Bearer ${generateKey('live')}` }] as Record<string, string>[]) {
    const started = performance.now();
    await get(headers);
    t.ok(performance.now() - started >= 24, 'at least the floor');
  }
});

t.test('only a hash is stored, and no raw key reaches the logs', async (t) => {
  const rows = await db.sql`SELECT key_hash, display FROM accounts.api_keys`;
  for (const row of rows) {
    t.equal(row.key_hash.length, 32);
    t.notMatch(row.display, /[0-9A-Za-z]{32}/);
  }
  await get({ authorization: `Bearer ${key}` }, `${URL}?api_key=${key}`);
  await get({ 'x-api-key': key }, '/v1/nowhere');
  const all = logs.join('');
  t.ok(all.length > 0, 'the app logged requests');
  t.notOk(all.includes(key), 'the raw key is not in the logs');
  t.notOk(all.includes(key.slice(-32)), 'nor its random part');
});

t.test('health, readiness need no key', async (t) => {
  t.equal((await app.inject({ url: '/healthz' })).statusCode, 200);
  const ready = await app.inject({ url: '/readyz' });
  t.equal(ready.statusCode, 200);
  t.same(ready.json(), { status: 'ok', database: 'ok', meter: 'ok', redis: 'ok' });
});

t.test('last_used_at is recorded in batches, not per request', async (t) => {
  const local = await buildTestApp(t, {}, { db });
  const c = await newClient('growth');
  t.equal((await local.app.inject({ method: 'GET', url: URL, headers: c.headers })).statusCode, 200);
  const [before] = await db.sql`SELECT last_used_at FROM accounts.api_keys WHERE id = ${c.keyId}`;
  t.equal(before?.last_used_at, null, 'not written on the request itself');
  await local.app.close();
  const [after] = await db.sql`SELECT last_used_at FROM accounts.api_keys WHERE id = ${c.keyId}`;
  t.ok(after?.last_used_at instanceof Date, 'flushed when the app closes');
});

t.test(
  'a refusal is as current as Postgres: an upgrade serves the next request before its change notice',
  async (t) => {
    // the plan changed with triggers off (session_replication_role = replica): no change notice, no Redis reset, so
    // the process's cache still holds the old plan; only reading the key again can serve the request
    const behindTheCache = (clientId: string, plan: string) =>
      db.sql.begin(async (tx) => {
        await tx`SET LOCAL session_replication_role = replica`;
        await tx`UPDATE accounts.clients SET plan = ${plan} WHERE id = ${clientId}`;
      });
    const starter = await newClient('mcp_starter');
    t.equal((await get(starter.headers)).statusCode, 403, 'MCP Starter: REST refused (and the key cached)');
    await behindTheCache(starter.client.id, 'growth');
    t.equal((await get(starter.headers)).statusCode, 200, 'upgraded to Growth: served at once');

    const developer = await newClient('developer');
    const csv = (headers: Record<string, string>) => get(headers, '/v1/counties?format=csv');
    t.equal((await csv(developer.headers)).statusCode, 403, 'Developer: CSV refused');
    t.equal((await get(developer.headers)).statusCode, 200, 'and its key cached by a served request');
    await behindTheCache(developer.client.id, 'pro');
    const upgraded = await csv(developer.headers);
    t.equal(upgraded.statusCode, 200, 'upgraded to Pro: CSV at once');
    t.match(upgraded.headers['content-type'], /^text\/csv/);
  },
);
