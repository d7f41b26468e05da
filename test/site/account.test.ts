// The signed-in pages over HTTP: keys (the raw key shown once, revocation on the next request, only one's own),
// the overview agreeing with /v1/account/usage, usage per day, key and surface as a chart, a table and CSV, the plans
// page, the quick start; the security headers; and what the site's database role may do.
import t from 'tap';
import postgres from 'postgres';
import { withRole } from '../../src/db-url.ts';
import { buildTestApp } from '../helpers/app.ts';
import { Agent, csrfIn, signUp, textOf } from './helpers.ts';

/** Set here, so that the caller's PORT, HOST or SITE_URL does not change the pages. */
const SITE_URL = 'http://site.example.test:8080';
const ctx = await buildTestApp(t, { SITE_URL });
const { app, db } = ctx;
const sql = db.sql;
const KEY = /<code id="raw-key" data-raw-key>(flprop_(?:live|test)_[0-9A-Za-z]{32})<\/code>/;

async function createKey(agent: Agent, mode: 'live' | 'test' = 'live') {
  const res = await agent.post('/account/keys', { mode }, { from: '/account/keys' });
  const key = KEY.exec(res.body)?.[1];
  return { res, key: key! };
}
const api = (key: string, url = '/v1/counties') =>
  app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });

t.test(
  'a new key is shown once, with a copy button and a warning; it works at once; the list shows it masked',
  async (t) => {
    const { agent, clientId } = await signUp(ctx);
    const { res, key } = await createKey(agent);
    t.equal(res.statusCode, 201);
    t.match(key, /^flprop_live_[0-9A-Za-z]{32}$/, 'the raw key, in the element marked data-raw-key');
    t.equal(res.headers['cache-control'], 'no-store', 'the page holding the raw key is never cached');
    const text = textOf(res.body);
    t.match(text, /it will not be shown again/);
    t.match(res.body, /<button type="button" class="copy" data-copy="raw-key"/);
    t.match(text, `curl -s -H "Authorization: Bearer ${key}"`, 'the quick start with the key filled in');
    t.equal((await api(key)).statusCode, 200, 'the key works on the next request');

    const list = await agent.get('/account/keys');
    t.notOk(list.body.includes(key), 'never shown again');
    t.notOk(list.body.includes(key.slice(12, 40)), 'not even its random part');
    t.match(textOf(list.body), `flprop_live_…${key.slice(-4)} live`);
    const [stored] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM accounts.api_keys WHERE client_id = ${clientId} AND display = ${`flprop_live_…${key.slice(-4)}`}`;
    t.equal(stored!.n, 1);
    t.notOk(ctx.logs.join('\n').includes(key), 'the raw key never reaches the log');

    const test = await createKey(agent, 'test');
    t.match(test.key, /^flprop_test_/);
    t.equal((await api(test.key)).statusCode, 200, 'a test key works too');
    const bad = await agent.post('/account/keys', { mode: 'admin' }, { from: '/account/keys' });
    t.equal(bad.statusCode, 400);
    t.match(textOf(bad.body), 'Choose live or test.');
  },
);

t.test(
  'revoking asks first; the key is refused from its next request; another account’s key cannot be touched',
  async (t) => {
    const owner = await signUp(ctx);
    const other = await signUp(ctx);
    const { key } = await createKey(owner.agent);
    const { key: otherKey } = await createKey(other.agent);
    t.equal((await api(key)).statusCode, 200);
    const [row] = await sql<{ id: string }[]>`SELECT id FROM accounts.api_keys WHERE client_id = ${owner.clientId}`;
    const [otherRow] = await sql<
      { id: string }[]
    >`SELECT id FROM accounts.api_keys WHERE client_id = ${other.clientId}`;

    const confirm = await owner.agent.get(`/account/keys/${row!.id}/revoke`);
    t.equal(confirm.statusCode, 200);
    t.match(textOf(confirm.body), /Revoke the live key flprop_live_….{4}, created .*\?/);
    t.equal((await api(key)).statusCode, 200, 'asking is not revoking');
    const done = await owner.agent.post(
      `/account/keys/${row!.id}/revoke`,
      {},
      { from: `/account/keys/${row!.id}/revoke` },
    );
    t.equal(done.statusCode, 303);
    t.equal((await api(key)).statusCode, 401, 'the very next request is refused');
    const page = await owner.agent.get(done.headers.location as string);
    t.match(textOf(page.body), /Key flprop_live_….{4} is revoked\./);
    t.match(textOf(page.body), /revoked \d{4}-\d\d-\d\d/);
    const crafted = await owner.agent.get('/account/keys?revoked=everything.%20Call%20us%20at%20555');
    t.notMatch(textOf(crafted.body), /Call us/, 'a crafted link puts no words of its own on the page');

    for (const url of [`/account/keys/${otherRow!.id}/revoke`, '/account/keys/not-a-uuid/revoke']) {
      t.equal((await owner.agent.get(url)).statusCode, 404, `GET ${url}`);
      const csrf = csrfIn((await owner.agent.get('/account/keys')).body)!;
      t.equal((await owner.agent.post(url, { _csrf: csrf })).statusCode, 404, `POST ${url}`);
    }
    t.equal((await api(otherKey)).statusCode, 200, 'the other account’s key still works');
    t.equal((await new Agent(ctx).get(`/account/keys/${row!.id}/revoke`)).statusCode, 303, 'signed out: to sign-in');
  },
);

t.test('an account holds at most 20 active keys; a suspended one creates none', async (t) => {
  const { agent, clientId } = await signUp(ctx);
  for (let i = 0; i < 20; i++) t.equal((await createKey(agent)).res.statusCode, 201);
  const over = await createKey(agent);
  t.equal(over.res.statusCode, 400);
  t.match(textOf(over.res.body), 'You have 20 active keys, the most an account may hold: revoke one first.');
  await sql`UPDATE accounts.clients SET status = 'suspended' WHERE id = ${clientId}`;
  await sql`UPDATE accounts.api_keys SET status = 'revoked', revoked_at = now() WHERE client_id = ${clientId}`;
  const suspended = await createKey(agent);
  t.equal(suspended.res.statusCode, 400);
  t.match(textOf(suspended.res.body), /This account is suspended/);
  t.match(textOf((await agent.get('/account')).body), /This account is suspended/);
});

t.test('the overview agrees with /v1/account/usage, before and after the usage flush', async (t) => {
  const { agent } = await signUp(ctx);
  const { key } = await createKey(agent);
  for (let i = 0; i < 3; i++) t.equal((await api(key)).statusCode, 200);
  await api(key, '/v1/counties/atlantis'); // 404: not charged
  const check = async (label: string) => {
    const usage = (await api(key, '/v1/account/usage')).json().data;
    const text = textOf((await agent.get('/account')).body);
    t.equal(usage.events_count, 3, `${label}: 3 charged`);
    t.match(text, `This month ${usage.events_count} of ${usage.monthly_quota}`, label);
    t.match(text, `${usage.percent_used}% of this month's quota`, label);
    t.match(text, /Trial credits 497 /, `${label}: 500 - 3 trial credits left`);
  };
  await check('pending in Redis');
  await app.flushUsage();
  await check('flushed');
  const text = textOf((await agent.get('/account')).body);
  t.match(text, /Plan Free Trial Free Per-minute limit 30 requests REST API included MCP endpoint not included/);
  t.match(text, /Test keys 0 of 100 this month/);
  t.match(text, /Overage so far none on this plan/);
});

t.test('usage: per UTC day, key and surface, this month and the last, as a chart, a table and CSV', async (t) => {
  const { agent, clientId } = await signUp(ctx);
  const { key } = await createKey(agent);
  for (let i = 0; i < 2; i++) t.equal((await api(key)).statusCode, 200);
  await app.flushUsage();
  const [k] = await sql<{ id: string; display: string }[]>`
    SELECT id, display FROM accounts.api_keys WHERE client_id = ${clientId}`;
  // the dates come from the answers, so the test holds on any day: the day the requests were counted on, and the
  // two months the usage pages show (the CSV's file name)
  const [counted] = await sql<{ day: string }[]>`
    SELECT to_char(day, 'YYYY-MM-DD') AS day FROM meter.usage_daily WHERE client_id = ${clientId}`;
  const today = counted!.day;
  const shown = /filename="usage-(\d{4})-(\d\d)-to-/.exec(
    String((await agent.get('/account/usage.csv')).headers['content-disposition']),
  )!;
  const [year, month] = [Number(shown[1]), Number(shown[2]) - 1];
  const lastMonth = new Date(Date.UTC(year, month, 15)).toISOString().slice(0, 10);
  const tooOld = new Date(Date.UTC(year, month - 1, 15)).toISOString().slice(0, 10);
  // MCP calls and older days, as the usage flush records them
  await sql`INSERT INTO meter.usage_daily (client_id, key_id, day, mode, surface, bucket, requests) VALUES
              (${clientId}, ${k!.id}, ${today}, 'live', 'mcp', 'credits', 5),
              (${clientId}, ${k!.id}, ${lastMonth}, 'live', 'rest', 'credits', 7),
              (${clientId}, ${k!.id}, ${lastMonth}, 'live', 'rest', 'monthly', 4),
              (${clientId}, ${k!.id}, ${tooOld}, 'live', 'rest', 'credits', 1000)`;

  const page = await agent.get('/account/usage');
  t.equal(page.statusCode, 200);
  const text = textOf(page.body);
  t.match(
    page.body,
    `<title>${today} · ${k!.display} · REST: 2 requests</title>`,
    'a bar segment per day, key, surface',
  );
  t.match(page.body, `<title>${today} · ${k!.display} · MCP: 5 requests</title>`);
  t.match(page.body, `<title>${lastMonth} · ${k!.display} · REST: 11 requests</title>`, 'buckets together');
  t.notMatch(page.body, /1,000 requests/, 'nothing older than last month');
  t.match(text, `${k!.display} · REST ${k!.display} · MCP`, 'a legend entry per series');
  t.match(text, `${today} 2 5 7`, 'the table: REST, MCP and the total of the day');
  t.match(text, `${lastMonth} 11 0 11`);

  const file = await agent.get('/account/usage.csv');
  t.equal(file.statusCode, 200);
  t.match(file.headers['content-type'], /^text\/csv/);
  t.match(file.headers['content-disposition'], /^attachment; filename="usage-\d{4}-\d\d-to-\d{4}-\d\d\.csv"$/);
  t.same(
    file.body.trim().split('\n'),
    [
      'day,key,key_id,mode,surface,requests',
      `${lastMonth},${k!.display},${k!.id},live,rest,11`,
      `${today},${k!.display},${k!.id},live,mcp,5`,
      `${today},${k!.display},${k!.id},live,rest,2`,
    ],
    'the same numbers, on the free plan too (the download is not the API’s CSV feature)',
  );

  const [own] = await sql<{ n: number }[]>`
    SELECT sum(requests)::int AS n FROM site.usage_daily(${clientId}, ${lastMonth}::date, ${today}::date)`;
  t.equal(own!.n, 18, 'an analyst gets the same rows from site.usage_daily');
  await t.rejects(sql`SELECT * FROM site.usage_daily(${clientId}, '2020-01-01', '2022-01-01')`, {
    code: '22023',
    message: /at most 366 days/,
  });
});

t.test('the plans page lists the plans and packs with their prices, and how to change plan', async (t) => {
  const res = await new Agent(ctx).get('/account/plans');
  t.equal(res.statusCode, 200, 'public');
  const text = textOf(res.body);
  for (const row of [
    'Free Trial free 500 at sign-up; capped at 100 after 7 days 30',
    'MCP Starter $5/month 1,000, MCP only 30 no (403) yes',
    'Developer $19/month 10,000 60 yes yes',
    'Pro $49/month 50,000 150 yes yes yes beta',
    'Growth $149/month 250,000 300 yes yes yes yes',
    'Lead Feed $299/month 750,000 600 yes yes yes yes',
    'Enterprise custom custom custom yes yes yes yes',
    'Starter 1,000 $5 $5',
    'Investigator 5,000 $23 $4.60',
    'Bulk 25,000 $99 $3.96',
    'Power 100,000 $349 $3.49',
  ]) {
    t.match(text, row);
  }
  t.match(text, /write to support@localhost from the email you sign in with/);
  const { agent } = await signUp(ctx);
  t.match(textOf((await agent.get('/account/plans')).body), 'Free Trial your plan');
});

t.test('the quick start links the docs and uses the customer’s key', async (t) => {
  const { agent } = await signUp(ctx);
  const { key } = await createKey(agent);
  const res = await agent.get('/account/quickstart');
  t.equal(res.statusCode, 200);
  t.match(res.body, /href="\/docs"/);
  t.match(textOf(res.body), `flprop_live_…${key.slice(-4)}`);
  t.match(textOf(res.body), `curl -s -H "Authorization: Bearer $FLPROP_KEY" "${SITE_URL}/v1/counties/miami-dade"`);
  t.equal((await new Agent(ctx).get('/account/quickstart')).statusCode, 303);
});

t.test(
  'headers: a CSP without inline script, no framing, no caching; pages hold no inline script or style',
  async (t) => {
    const { agent } = await signUp(ctx);
    await createKey(agent);
    for (const url of [
      '/account',
      '/account/keys',
      '/account/usage',
      '/account/plans',
      '/account/quickstart',
      '/account/password',
    ]) {
      const res = await agent.get(url);
      t.equal(res.statusCode, 200, url);
      const csp = String(res.headers['content-security-policy']);
      t.match(csp, /default-src 'none'/, url);
      t.match(csp, /script-src 'self'(;|$)/);
      t.match(csp, /style-src 'self'(;|$)/);
      t.match(csp, /frame-ancestors 'none'/);
      t.match(csp, /form-action 'self'/);
      t.notMatch(csp, /unsafe-inline|unsafe-eval/);
      t.equal(res.headers['x-content-type-options'], 'nosniff');
      t.equal(res.headers['referrer-policy'], 'no-referrer');
      t.equal(res.headers['cache-control'], 'no-store');
      t.notMatch(res.body, /<script(?![^>]*\ssrc=)[^>]*>/, `${url}: every script is a file`);
      t.notMatch(res.body, /\sstyle=|<style/, `${url}: no inline style`);
      t.notMatch(res.body, /\son[a-z]+=/, `${url}: no event-handler attributes`);
    }
    const css = await app.inject({ url: '/account/assets/site.css' });
    t.equal(css.statusCode, 200);
    t.match(css.headers['content-type'], /^text\/css/);
    const js = await app.inject({ url: '/account/assets/site.js' });
    t.match(js.headers['content-type'], /^text\/javascript/);
    t.equal((await app.inject({ url: '/account/assets/../../package.json' })).statusCode, 404);
    t.equal(
      (await app.inject({ url: '/v1/counties', headers: { authorization: `Bearer ${ctx.key}` } })).headers[
        'content-security-policy'
      ],
      "default-src 'none'; frame-ancestors 'none'",
      "the API keeps its own headers (src/http-edge.ts), not the site's",
    );
  },
);

t.test('the site’s database role executes the site’s functions and nothing else', async (t) => {
  const site = postgres(withRole(db.ownerUrl, 'api_site'), { max: 1, onnotice: () => {} });
  t.teardown(() => site.end());
  const { clientId } = await signUp(ctx);
  const plans = await site`SELECT * FROM site.plans()`;
  t.equal(plans.length, 7, 'site.* works');
  await t.rejects(
    site`SELECT * FROM site.account_credits(${Buffer.alloc(32)})`,
    { code: '28000' },
    'not without a live session',
  );
  for (const [what, query] of [
    ['read accounts', site`SELECT * FROM accounts.clients`],
    ['read keys', site`SELECT * FROM accounts.api_keys`],
    ['read sessions', site`SELECT * FROM accounts.site_sessions`],
    [
      'write the ledger',
      site`INSERT INTO meter.ledger (client_id, bucket, delta, reason) VALUES (${clientId}, 'credits', 1000, 'x')`,
    ],
    ['adjust credits', site`SELECT * FROM meter.adjust_credits(${clientId}::uuid, 1000, 'x')`],
    ['flush usage', site`SELECT meter.flush_usage('[]'::jsonb)`],
    ['read any client’s usage', site`SELECT * FROM site.usage_daily(${clientId}::uuid, current_date, current_date)`],
    ['invite', site`SELECT * FROM site.start_invite(${clientId}::uuid, ${Buffer.alloc(32)})`],
    ['read credits by client', site`SELECT * FROM meter.credits_left(${clientId}::uuid)`],
    ['read api', site`SELECT * FROM api.list_counties()`],
  ] as const) {
    await t.rejects(query, { code: '42501' }, `api_site cannot ${what}`);
  }
  const [{ n }] = (await sql`SELECT count(*)::int AS n FROM meter.ledger WHERE client_id = ${clientId}`) as unknown as [
    { n: number },
  ];
  t.equal(n, 1, 'only the trial grant');
});
