// The account site's webhook pages over HTTP: register (the secret shown once, the API's validation and SSRF
// message), the endpoint page (a test event reaching a real receiver and shown in the delivery log), disable and
// enable, delete after a confirmation; only one's own endpoints; the plan gate.
import t from 'tap';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { buildTestApp } from '../helpers/app.ts';
import { REFUSED_URL } from '../../src/webhooks/ssrf.ts';
import { FAST, receiver, startWorker, waitFor } from '../webhooks/helpers.ts';
import { csrfIn, signUp, textOf, type Agent } from './helpers.ts';

const ctx = await buildTestApp(t, FAST);
const sql = ctx.db.sql;
const hook = await receiver(t);
await startWorker(t, ctx.db, FAST);
const SECRET = /<code id="raw-secret" data-raw-secret>(whsec_[A-Za-z0-9+/]{43}=)<\/code>/;

async function customer(plan = 'growth') {
  const s = await signUp(ctx);
  await sql`UPDATE accounts.clients SET plan = ${plan} WHERE id = ${s.clientId}`;
  return s;
}
/** Registers through the form, as a browser sends it: the page's CSRF token, one events field per ticked box. */
async function register(agent: Agent, fields: Record<string, string>, events = ['tax_delinquency.created']) {
  await agent.get('/account/webhooks');
  const form = new URLSearchParams({ _csrf: csrfIn(agent.lastBody) ?? '', ...fields });
  for (const e of events) form.append('events', e);
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/account/webhooks',
    remoteAddress: agent.remoteAddress,
    headers: { cookie: agent.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
    payload: form.toString(),
  });
  agent.lastBody = res.body;
  return res;
}
const idIn = (body: string) => /href="\/account\/webhooks\/(ep_[0-9a-f]{32})"/.exec(body)?.[1];

t.test('the navigation names Webhooks and Saved searches', async (t) => {
  const { agent } = await customer();
  const res = await agent.get('/account/webhooks');
  t.equal(res.statusCode, 200);
  t.match(res.body, /<a href="\/account\/webhooks"\s+aria-current="page">Webhooks<\/a>/);
  t.match(res.body, /<a href="\/account\/saved-searches"\s*>Saved searches<\/a>/);
});

t.test('registering shows the secret once; the endpoint is the one the API stores', async (t) => {
  const { agent, clientId } = await customer();
  const res = await register(
    agent,
    { url: hook.url, counties: 'broward, miami-dade', value_change_threshold: '12.5', description: 'leads' },
    ['tax_delinquency.created', 'parcel.value_changed'],
  );
  t.equal(res.statusCode, 201);
  t.equal(res.headers['cache-control'], 'no-store');
  const secret = SECRET.exec(res.body)?.[1];
  t.ok(secret, 'the secret, in the element marked data-raw-secret');
  t.match(textOf(res.body), /it will not be shown again/);
  const [row] = await sql<{ url: string; events: string[]; threshold: string; n: number }[]>`
    SELECT url, events, value_change_threshold::text AS threshold, cardinality(counties) AS n
      FROM webhooks.endpoints WHERE client_id = ${clientId}`;
  t.match(row, {
    url: hook.url,
    events: ['parcel.value_changed', 'tax_delinquency.created'],
    threshold: '12.50',
    n: 2,
  });
  const list = await agent.get('/account/webhooks');
  t.notOk(list.body.includes(secret!), 'never shown again');
  t.match(textOf(list.body), `${hook.url} parcel.value_changed, tax_delinquency.created broward, miami-dade enabled`);
});

t.test('bad input is refused with the API’s messages', async (t) => {
  const { agent } = await customer();
  const none = await register(agent, { url: hook.url }, []);
  t.equal(none.statusCode, 400);
  t.match(textOf(none.body), 'events: choose at least one event type');
  const privateUrl = await register(agent, { url: 'https://10.1.2.3/hook' });
  t.equal(privateUrl.statusCode, 400);
  t.match(textOf(privateUrl.body), REFUSED_URL, 'a private address: the SSRF refusal, even with loopback allowed');
  const county = await register(agent, { url: hook.url, counties: 'atlantis' });
  t.equal(county.statusCode, 400);
  t.match(textOf(county.body), /counties: .*atlantis/);
  const threshold = await register(agent, { url: hook.url, value_change_threshold: '5000' });
  t.equal(threshold.statusCode, 400);
  t.match(textOf(threshold.body), /value_change_threshold/);
  t.equal(idIn((await agent.get('/account/webhooks')).body), undefined, 'nothing was registered');
});

t.test('a test event reaches the receiver and shows in the delivery log', async (t) => {
  const { agent } = await customer();
  const id = idIn((await register(agent, { url: hook.url })).body)!;
  const before = hook.requests.length;
  const sent = await agent.post(`/account/webhooks/${id}/test`, {}, { from: `/account/webhooks/${id}` });
  t.equal(sent.statusCode, 303);
  t.equal(sent.headers.location, `/account/webhooks/${id}`);
  await waitFor('the test event', () =>
    hook
      .events()
      .slice(before)
      .find((e) => e.type === 'webhook.test'),
  );
  const log = await waitFor('the delivered row', async () => {
    const page = await agent.get(`/account/webhooks/${id}`);
    return /webhook\.test delivered 1 200/.test(textOf(page.body)) ? page : null;
  });
  t.match(log.body, /data-delivery="dlv_[0-9a-f]{16}"/);
});

t.test('disable, enable, and delete after a confirmation', async (t) => {
  const { agent, clientId } = await customer();
  const id = idIn((await register(agent, { url: hook.url })).body)!;
  const off = await agent.post(`/account/webhooks/${id}/disable`, {}, { from: `/account/webhooks/${id}` });
  t.equal(off.statusCode, 303);
  t.match(textOf((await agent.get(`/account/webhooks/${id}`)).body), /Status disabled/);
  const on = await agent.post(`/account/webhooks/${id}/enable`, {}, { from: `/account/webhooks/${id}` });
  t.equal(on.statusCode, 303);
  t.match(textOf((await agent.get(`/account/webhooks/${id}`)).body), /Status enabled/);
  const confirm = await agent.get(`/account/webhooks/${id}/delete`);
  t.equal(confirm.statusCode, 200);
  t.match(textOf(confirm.body), `Delete the endpoint ${hook.url}`);
  const gone = await agent.post(`/account/webhooks/${id}/delete`, {}, { from: `/account/webhooks/${id}/delete` });
  t.equal(gone.statusCode, 303);
  t.equal(gone.headers.location, '/account/webhooks');
  const [n] = await sql<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM webhooks.endpoints WHERE client_id = ${clientId} AND deleted_at IS NULL`;
  t.equal(n!.n, 0);
  t.equal((await agent.get(`/account/webhooks/${id}`)).statusCode, 404);
});

t.test('another client’s endpoint is a 404 on every page and action; no CSRF token: refused', async (t) => {
  const owner = await customer();
  const id = idIn((await register(owner.agent, { url: hook.url })).body)!;
  const other = await customer();
  t.equal((await other.agent.get(`/account/webhooks/${id}`)).statusCode, 404);
  t.equal((await other.agent.get(`/account/webhooks/${id}/delete`)).statusCode, 404);
  for (const action of ['test', 'disable', 'delete']) {
    const res = await other.agent.post(`/account/webhooks/${id}/${action}`, {}, { from: '/account/webhooks' });
    t.equal(res.statusCode, 404, action);
  }
  t.equal((await other.agent.get('/account/webhooks/ep_nothex')).statusCode, 404, 'a malformed id');
  t.equal((await owner.agent.post(`/account/webhooks/${id}/delete`, {})).statusCode, 403, 'no CSRF token');
  t.equal((await owner.agent.get(`/account/webhooks/${id}`)).statusCode, 200, 'still there');
});

t.test('plan gate: refused on Free and Developer as the API refuses; sign-in required', async (t) => {
  for (const plan of ['free', 'developer']) {
    const { agent } = await customer(plan);
    const res = await agent.get('/account/webhooks');
    t.equal(res.statusCode, 403, plan);
    t.match(textOf(res.body), 'Webhooks is not included in your plan; it is included in Growth, Lead Feed');
    t.equal((await register(agent, { url: hook.url })).statusCode, 403, `${plan}: nothing registered`);
  }
  const pro = await customer('pro');
  t.equal((await pro.agent.get('/account/webhooks')).statusCode, 200, 'beta on Pro');
  const anonymous = await ctx.app.inject({ method: 'GET', url: '/account/webhooks' });
  t.equal(anonymous.statusCode, 303);
  t.equal(anonymous.headers.location, '/account/login?next=%2Faccount%2Fwebhooks');
});

t.test('the saved-search form lets the customer choose which endpoints receive the matches', async (t) => {
  const { agent, clientId } = await customer();
  const id = idIn((await register(agent, { url: hook.url })).body)!;
  const form = await agent.get('/account/saved-searches');
  t.match(form.body, `<input type="checkbox" name="webhook_endpoints" value="${id}" />`);
  const saved = await agent.post(
    '/account/saved-searches',
    { name: 'Broward', url: '/v1/tax-delinquencies/search?county=broward', webhook_endpoints: id },
    { from: '/account/saved-searches' },
  );
  t.equal(saved.statusCode, 303);
  const [row] = await sql<{ ids: string[] }[]>`
    SELECT webhook_endpoint_ids::text[] AS ids FROM saved.searches WHERE client_id = ${clientId}`;
  t.same(row!.ids, [`${id.slice(3, 11)}-${id.slice(11, 15)}-${id.slice(15, 19)}-${id.slice(19, 23)}-${id.slice(23)}`]);
  t.match(textOf((await agent.get('/account/saved-searches')).body), 'webhooks: 1');

  const other = await customer();
  const refused = await other.agent.post(
    '/account/saved-searches',
    { name: 'Theirs', url: '/v1/tax-delinquencies/search?county=broward', webhook_endpoints: id },
    { from: '/account/saved-searches' },
  );
  t.equal(refused.statusCode, 400, "another client's endpoint");
  t.match(textOf(refused.body), `deliver.webhook_endpoints: no webhook endpoint '${id}'`);
  const malformed = await other.agent.post(
    '/account/saved-searches',
    { name: 'Bad', url: '/v1/tax-delinquencies/search?county=broward', webhook_endpoints: 'ep_x' },
    { from: '/account/saved-searches' },
  );
  t.equal(malformed.statusCode, 400, 'a malformed id: a 400, not a 500');
});

t.test('in Chromium: register, see the secret once, send a test event, see it in the delivery log', async (t) => {
  const base = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  const browser = await launchBrowser();
  t.teardown(() => browser.close());
  const { agent } = await customer('lead_feed');
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addCookies([...agent.cookies].map(([name, value]) => ({ name, value, url: `${base}/account` })));
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${base}/account/webhooks`);
  await page.fill('input[name=url]', hook.url);
  await page.check('input[value="county.data_refreshed"]');
  await page.click('button:has-text("Register the endpoint")');
  const secret = await page.textContent('[data-raw-secret]');
  t.match(secret, /^whsec_/, 'the secret, shown once');
  await screenshot(page, 'webhooks-secret');
  await page.click('a:has-text("Send it a test event")');
  t.notOk((await page.content()).includes(secret!), 'not on the next page');
  const before = hook.requests.length;
  await page.click('button:has-text("Send a test event")');
  await waitFor('the test event', () =>
    hook
      .events()
      .slice(before)
      .find((e) => e.type === 'webhook.test'),
  );
  await waitFor('the delivered row', async () => {
    await page.reload();
    return /delivered/.test((await page.textContent('table.deliveries').catch(() => '')) ?? '') || null;
  });
  t.match(await page.textContent('table.deliveries tbody tr'), /webhook\.test\s+delivered\s+1\s+200/);
  await screenshot(page, 'webhooks-deliveries');
  t.same(problems, [], 'no script error');
  await context.close();
});
