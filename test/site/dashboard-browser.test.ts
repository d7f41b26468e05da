// The dashboard in headless Chromium (Debian's, through test/helpers/browser.ts): calls made over HTTP with a named key
// appear in the request log with their status and error code and without secrets, the status filter keeps the
// errors, the per-endpoint usage page counts them, and a key is renamed from the keys page. Screenshots at a laptop's
// and a phone's width go under .local/screenshots/dashboard-*.png; the phone's page must not scroll sideways, and no
// page breaks its Content-Security-Policy.
import t, { type Test } from 'tap';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildTestApp } from '../helpers/app.ts';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { signUp } from './helpers.ts';

t.setTimeout(600_000);
const ctx = await buildTestApp(t);
const { app } = ctx;
const base = await app.listen({ host: '127.0.0.1', port: 0 });
const browser: Browser = await launchBrowser();
t.teardown(() => browser.close());

const { agent } = await signUp(ctx);
const created = await agent.post(
  '/account/keys',
  { mode: 'live', name: 'production server' },
  { from: '/account/keys' },
);
const key = /data-raw-key>([^<]+)</.exec(created.body)![1]!;
const secret = 'do-not-show-this-token';

const problems: string[] = [];
async function signedIn(width: number, height: number): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width, height } });
  await context.addCookies([...agent.cookies].map(([name, value]) => ({ name, value, url: `${base}/account` })));
  const page = await context.newPage();
  page.on('pageerror', (e) => problems.push(`${page.url()}: ${e.message}`));
  page.on('console', (m) => (m.type() === 'error' ? problems.push(`${page.url()}: ${m.text()}`) : undefined));
  return { context, page };
}

/** A laptop screenshot of the page, and a phone's, which must not scroll sideways. */
async function shoot(t: Test, page: Page, name: string) {
  await screenshot(page, `dashboard-${name}`);
  const phone = await signedIn(390, 844);
  await phone.page.goto(page.url());
  await screenshot(phone.page, `dashboard-${name}-phone`);
  const [scroll, width] = await phone.page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  t.ok(scroll <= width, `${name}: no sideways scrolling on a phone (${scroll} <= ${width})`);
  await phone.context.close();
}

t.test('the request log shows the calls, filters the errors; usage per endpoint counts them', async (t) => {
  const call = (path: string) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  t.equal((await call('/v1/counties')).status, 200);
  t.equal((await call(`/v1/counties/miami-dade?access_token=${secret}`)).status, 200);
  t.equal((await call('/v1/parcels/999999999')).status, 404);
  t.equal((await call('/v1/parcels/search?limit=0')).status, 400);
  await app.requestLog.flush();

  const { context, page } = await signedIn(1280, 900);
  await page.goto(`${base}/account`);
  await page.click('nav >> text=Request log');
  const rows = await page.$$eval('table.log tbody tr', (trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.replace(/\s+/g, ' ').trim())),
  );
  t.equal(rows.length, 4, 'four requests');
  t.same(
    rows.map((r) => r.slice(2, 6)),
    [
      ['GET', '/v1/parcels/search?limit=0', '400', 'bad_request'],
      ['GET', '/v1/parcels/999999999', '404', 'not_found'],
      ['GET', '/v1/counties/miami-dade?access_token=[REDACTED]', '200', ''],
      ['GET', '/v1/counties', '200', ''],
    ],
    'method, path without the secret, status and error code, newest first',
  );
  t.ok(
    rows.every((r) => /UTC$/.test(r[0]!) && /^production server flprop_live_…/.test(r[1]!) && / ms$/.test(r[6]!)),
    'time, key name and display, duration',
  );
  t.notOk((await page.content()).includes(secret), 'no secret on the page');
  t.notOk((await page.content()).includes(key), 'never the key');
  await shoot(t, page, 'requests');

  await page.selectOption('select[name=status]', 'errors');
  await Promise.all([page.waitForURL(/status=errors/), page.click('text=Filter')]);
  const statuses = await page.$$eval('table.log tbody tr td:nth-child(5)', (tds) => tds.map((td) => td.textContent));
  t.same(statuses, ['400', '404'], 'only the errors');
  await shoot(t, page, 'requests-errors');

  await page.click('nav >> text=Usage');
  await page.click('text=Usage per endpoint and key');
  const table = await page.textContent('table.endpoints');
  t.match(table, /GET \/v1\/counties\s+1\s+0\s+production server/);
  t.match(table, /GET \/v1\/parcels\/:id\s+0\s+1/);
  t.match(table, /Total\s+2\s+2/);
  await shoot(t, page, 'endpoints');
  await context.close();
});

t.test('a key is renamed from the keys page, and the log shows the new name', async (t) => {
  const { context, page } = await signedIn(1280, 900);
  await page.goto(`${base}/account/keys`);
  await page.fill('form.rename input[name=name]', 'staging');
  await Promise.all([page.waitForURL(`${base}/account/keys`), page.click('form.rename button')]);
  t.equal(await page.inputValue('form.rename input[name=name]'), 'staging');
  await shoot(t, page, 'keys');
  await page.goto(`${base}/account/requests`);
  t.match(await page.textContent('table.log'), /staging flprop_live_…/);
  await context.close();
});

t.test('no page broke its Content-Security-Policy or threw', async (t) => {
  t.same(problems, []);
});
