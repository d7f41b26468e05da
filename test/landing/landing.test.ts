// The front door: / answers people with a page (plans read from the plan table, links to sign-up, docs, explorer and
// status) and programs with a JSON index; the same header and footer on the landing page, the site, the docs and the
// reference. In headless Chromium: the landing page, a guide, an operation's code samples, and a call tried from the
// reference with a key. Screenshots under .local/screenshots/.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import { launchBrowser, screenshot } from '../helpers/browser.ts';

const { app, db, key } = await buildTestApp(t);
// a plan renamed in the table shows renamed on the page: the page reads the table
await db.sql`UPDATE accounts.plans SET display_name = 'Developer Plus' WHERE plan = 'developer'`;

t.test('programs get JSON at /, never a 404; people get the page', async (t) => {
  for (const accept of [undefined, 'application/json', '*/*', 'application/json, text/html;q=0.9']) {
    const res = await app.inject({ url: '/', headers: accept ? { accept } : {} });
    t.equal(res.statusCode, 200, `Accept: ${accept}`);
    t.match(res.headers['content-type'], 'application/json', `Accept: ${accept}`);
    t.match(res.json().links, { openapi: '/v1/openapi.json', docs: '/docs', signup: '/account/signup' });
    t.equal(res.headers.vary, 'Accept');
  }
  const page = await app.inject({ url: '/', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-type'], 'text/html');
  t.match(page.headers['content-security-policy'], "script-src 'self'");
  for (const href of ['/account/signup', '/docs', '/explorer', '/status', '/docs/reference']) {
    t.match(page.body, `href="${href}"`, `links to ${href}`);
  }
  t.match(page.body, 'Developer Plus', 'plans come from the plan table');
  t.match(page.body, 'Free Trial');
  const status = await app.inject({ url: '/status' });
  t.match(status.json(), { status: /ok|degraded/ }, '/status for programs is the readiness answer');
  const statusPage = await app.inject({ url: '/status', headers: { accept: 'text/html' } });
  t.match(statusPage.body, 'All systems operational');
});

t.test('the same header and footer on the landing page, the site, the docs and the reference', async (t) => {
  for (const url of ['/', '/account/login', '/account/plans', '/docs', '/docs/guides/quick-start', '/status']) {
    const res = await app.inject({ url, headers: { accept: 'text/html' } });
    t.match(res.body, 'class="fl-bar"', `${url}: header`);
    t.match(res.body, 'class="fl-foot"', `${url}: footer`);
    t.match(res.body, 'href="/assets/chrome.css"', `${url}: its styles`);
  }
  const chrome = await app.inject({ url: '/docs/reference/static/theme/chrome.js' });
  t.match(chrome.body, 'fl-bar', 'the reference inserts the same header');
  t.equal((await app.inject({ url: '/assets/logo.svg' })).headers['content-type'], 'image/svg+xml');
  t.equal((await app.inject({ url: '/assets/nope.css' })).statusCode, 404);
});

t.test('in Chromium: the landing page, a guide, code samples and try-it with a key', async (t) => {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const browser = await launchBrowser();
  t.teardown(() => browser.close());
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => (m.type() === 'error' ? problems.push(m.text()) : undefined));

  await page.goto(`${base}/`);
  t.equal(await page.title(), 'Florida Property API: Florida parcels, sales and tax certificates');
  t.ok(await page.locator('.plans .plan', { hasText: 'Developer Plus' }).isVisible(), 'the plans are shown');
  await screenshot(page, 'landing');
  await page.locator('.fl-bar a', { hasText: 'Docs' }).click();
  await page.waitForURL(`${base}/docs`);
  await page.locator('.guides a', { hasText: 'Quick start' }).click();
  await page.waitForURL(`${base}/docs/guides/quick-start`);
  t.match(await page.textContent('main h1'), 'Quick start');
  t.match(
    await page.locator('main pre code.language-bash', { hasText: 'curl' }).first().textContent(),
    /"https?:\/\/[^\s"]+\/v1\/parcels\/search/,
    'samples name the server (SITE_URL)',
  );
  await screenshot(page, 'docs-guide');

  // on a phone: one column, nothing wider than the screen
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
  for (const [url, name] of [
    ['/', 'landing-phone'],
    ['/docs/guides/quick-start', 'docs-guide-phone'],
  ] as const) {
    await phone.goto(`${base}${url}`);
    const width = await phone.evaluate(() => document.documentElement.scrollWidth);
    t.ok(width <= 390, `${url} fits a 390 px screen (${width} px)`);
    await screenshot(phone, name);
  }
  await phone.close();

  await page.goto(`${base}/docs/reference`);
  await page.waitForSelector('.opblock-summary-path', { timeout: 60_000 });
  t.equal(await page.title(), 'API reference · Florida Property API');
  t.ok(await page.locator('.fl-bar').isVisible(), 'our header above the reference');
  t.equal(await page.locator('.topbar').count(), 0, "no framework's top bar or logo");
  const op = page.locator('.opblock', {
    has: page.locator('.opblock-summary-path[data-path="/v1/counties/{county}"]'),
  });
  await op.locator('.opblock-summary').click();
  const samples = op.locator('.opblock-description-wrapper pre');
  await samples.first().waitFor();
  const texts = await samples.allTextContents();
  t.match(texts.join('\n'), 'curl', 'a curl sample');
  t.match(texts.join('\n'), 'createFloridaClient', 'a JavaScript sample with the typed client');
  t.match(texts.join('\n'), 'import requests', 'a Python sample');
  await screenshot(page, 'docs-reference-samples');

  // try it with a key: Authorize, then execute
  await page.locator('.btn.authorize').first().click();
  await page.locator('.modal-ux input[type=text]').first().fill(key);
  await page.locator('.modal-ux .auth-btn-wrapper .authorize').first().click();
  await page.locator('.modal-ux .btn-done').first().click();
  await op.locator('.try-out__btn').click();
  await op.locator('input[placeholder="county"]').fill('miami-dade');
  await op.locator('.execute').click();
  const status = op.locator('.live-responses-table .response .response-col_status');
  await status.waitFor({ timeout: 30_000 });
  t.match(await status.textContent(), /200/, 'the call made from the page with the key succeeds');
  await screenshot(page, 'docs-reference-try-it');
  t.same(problems, [], 'no script error, policy violation or failed load');
});
