// The account site's saved searches in headless Chromium: a search saved from a search URL through the form, listed
// with its latest matches after an import, its matches page, a bad URL answered on the page; and the digest's
// unsubscribe page. Screenshots under .local/screenshots/saved-*.png.
import t from 'tap';
import type { Browser } from 'playwright-core';
import { buildTestApp } from '../helpers/app.ts';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { signUp } from '../site/helpers.ts';
import { importList } from './helpers.ts';

t.setTimeout(600_000);
const ctx = await buildTestApp(t);
const { app, db } = ctx;
const base = await app.listen({ host: '127.0.0.1', port: 0 });
const browser: Browser = await launchBrowser();
t.teardown(() => browser.close());
const { agent, clientId } = await signUp(ctx);
await db.sql`UPDATE accounts.clients SET plan = 'lead_feed' WHERE id = ${clientId}`;
await ctx.invalidate(clientId);

t.test('save a search from a URL, see its matches after an import', async (t) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addCookies([...agent.cookies].map(([name, value]) => ({ name, value, url: `${base}/account` })));
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${base}/account/saved-searches`);
  await page.fill('input[name=name]', 'Washington over $500');
  await page.fill('input[name=url]', `${base}/v1/tax-delinquencies/search?county=washington&min_due=500&limit=10`);
  await page.selectOption('select[name=email]', 'weekly');
  await page.click('button:has-text("Save the search")');
  await page.waitForSelector('section.saved-search');
  t.match(await page.textContent('section.saved-search'), /Washington over \$500[\s\S]*county=washington&min_due=500/);
  t.match(await page.textContent('section.saved-search'), /No matches yet/);

  await page.fill('input[name=name]', 'bad');
  await page.fill('input[name=url]', '/v1/tax-delinquencies/search?min_due=9&max_due=1');
  await page.click('button:has-text("Save the search")');
  t.match(await page.textContent('p.error'), 'min_due: must not be greater than max_due', "the endpoint's message");

  await importList(
    db,
    'washington',
    2031,
    Array.from({ length: 10 }, (_, i) => ({ parcel: `S-${i}`, due: 300 + i * 50 })),
  );
  await page.goto(`${base}/account/saved-searches`);
  const items = await page.$$eval('ul.matches li', (lis) => lis.map((li) => li.textContent ?? ''));
  t.equal(items.length, 5, 'the latest five matches');
  t.match(items[0], /S-9/, 'newest first');
  await screenshot(page, 'saved-searches');
  await page.click('section.saved-search h2 a');
  const all = await page.$$eval('ol.matches li', (lis) => lis.length);
  t.equal(all, 6, 'the matches page: every match (due >= 500)');
  await screenshot(page, 'saved-search-matches');
  t.same(problems, [], 'no script error');
  await context.close();
});

t.test('the unsubscribe page: a button that posts the one-click form', async (t) => {
  const [s] = await db.sql<{ token: string }[]>`SELECT unsubscribe_token AS token FROM saved.searches LIMIT 1`;
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${base}/account/unsubscribe/${s!.token}`);
  await Promise.all([page.waitForNavigation(), page.click('button:has-text("Unsubscribe")')]);
  t.match(await page.textContent('body'), /Unsubscribed/);
  const [after] = await db.sql`SELECT email FROM saved.searches WHERE unsubscribe_token = ${s!.token}`;
  t.equal(after!.email, null);
  await context.close();
});
