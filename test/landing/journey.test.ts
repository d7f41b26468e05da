// A new customer's first visit, in headless Chromium (Debian's, through test/helpers/browser.ts), as one story: the
// landing page leads to the quick start, whose first call is copied from the guide as printed; the landing page leads
// to sign-up, confirmed through the logged mail; a key is created and named on the keys page; the guide's call made
// with it answers 200 and is then in the account's request log; the map explorer on a phone accepts the same key.
// Screenshots go under .local/screenshots/journey-*.png.
import t from 'tap';
import type { Browser } from 'playwright-core';
import { buildTestApp } from '../helpers/app.ts';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { lastMail, linkIn, mails, pathOf, uniqueEmail } from '../site/helpers.ts';

// one argon2 sign-up and a browser session: a minute when idle, several on a busy machine
t.setTimeout(600_000);
const ctx = await buildTestApp(t);
const { app } = ctx;
const base = await app.listen({ host: '127.0.0.1', port: 0 });
const browser: Browser = await launchBrowser();
t.teardown(() => browser.close());

t.test('from the landing page to a first call in the request log and the map on a phone', async (t) => {
  const laptop = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await laptop.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`${page.url()}: ${e.message}`));

  await page.goto(`${base}/docs/reference`);
  await page.locator('.swagger-ui .opblock').first().waitFor();
  t.equal(await page.locator('.swagger-ui .topbar').count(), 0, "the reference shows no framework's bar or logo");
  t.notMatch(await page.title(), /Swagger/, `nor its name in the title (${await page.title()})`);
  await page.goto(`${base}/`);
  await Promise.all([page.waitForURL(`${base}/docs/guides/quick-start`), page.click('text=Read the quick start')]);
  await screenshot(page, 'journey-quick-start');
  const curl = (await page.locator('pre code', { hasText: 'curl' }).first().textContent()) ?? '';
  const printed = /"(https?:\/\/[^"]+)"/.exec(curl)?.[1];
  t.ok(printed, `the guide prints its first call as a URL (${printed})`);
  const call = new URL(printed!);
  t.equal(call.pathname, '/v1/parcels/search', 'the first call is a parcel search');

  await page.goto(`${base}/`);
  await Promise.all([page.waitForURL(`${base}/account/signup`), page.click('text=Create a free account')]);
  const email = uniqueEmail('journey');
  await page.fill('#f-name', 'Journey Co');
  await page.fill('#f-email', email);
  await page.fill('#f-password', 'a first visit to the site');
  const before = mails(ctx).length;
  await Promise.all([
    page.locator('main', { hasText: 'We sent a message to' }).waitFor(),
    page.click('main button[type=submit]'),
  ]);
  await page.goto(`${base}${pathOf(linkIn(await lastMail(ctx, email, before)))}`);
  await Promise.all([page.waitForURL(`${base}/account?welcome=1`), page.click('text=Create my account')]);
  t.match(await page.textContent('main'), /Free Trial/, 'the account is on the Free Trial');

  await page.click('nav >> text=API keys');
  await page.check('input[value=live]');
  await page.fill('input[name=name]', 'laptop');
  await page.click('text=Create key');
  const key = (await page.textContent('[data-raw-key]'))!.trim();
  t.match(key, /^flprop_live_/, 'the key is shown once');

  const res = await fetch(`${base}${call.pathname}${call.search}`, { headers: { authorization: `Bearer ${key}` } });
  t.equal(res.status, 200, `the guide's call as printed, with the new key: ${res.status}`);
  const body = (await res.json()) as { data: unknown[] };
  t.ok(body.data.length > 0, 'and it finds parcels');

  await app.requestLog.flush();
  await page.click('nav >> text=Request log');
  await screenshot(page, 'journey-request-log');
  const logged = await page.locator('table.log tbody tr', { hasText: call.pathname }).first().textContent();
  t.match(logged, /200/, 'the call is in the request log with its status');
  t.match(logged, /laptop/, 'under the name given to its key');

  const phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const map = await phone.newPage();
  map.on('pageerror', (e) => problems.push(`${map.url()}: ${e.message}`));
  await map.goto(`${base}/explorer`);
  await map.click('#drawer-open');
  await map.fill('#key', key);
  await map.click('#key-form button');
  await map.waitForFunction(() => !/Checking/.test(document.getElementById('key-status')!.textContent ?? ''));
  t.match(await map.textContent('#key-status'), /Key accepted: Free Trial/, 'the explorer on a phone takes the key');
  await screenshot(map, 'journey-explorer-phone');
  t.same(problems, [], 'no script error on any page');
  await Promise.all([laptop.close(), phone.close()]);
});
