// The shop in headless Chromium: a Free Trial customer clicks Upgrade, lands on the (double's) Checkout page, the
// signed completion arrives, and the overview shows Developer with 10,000 monthly credits; the next API request draws
// on them. Then a Starter pack, the same way. Screenshots: .local/screenshots/billing-*.png.
import t from 'tap';
import type { Browser } from 'playwright-core';
import { billingApp } from './helpers.ts';
import { freePorts } from '../helpers/processes.ts';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { signUp } from '../site/helpers.ts';
import { accounts } from '../../src/accounts/service.ts';
import { TEST_KEY_SECRET } from '../helpers/accounts.ts';

t.setTimeout(600_000);

t.test('a Free Trial customer upgrades to Developer and buys a Starter pack', async (t) => {
  const [port] = await freePorts(1);
  const base = `http://127.0.0.1:${port}`;
  const ctx = await billingApp(t, { SITE_URL: base });
  await ctx.app.listen({ host: '127.0.0.1', port: port! });
  const browser: Browser = await launchBrowser();
  t.teardown(() => browser.close());
  const { agent, clientId } = await signUp(ctx);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addCookies([...agent.cookies].map(([name, value]) => ({ name, value, url: `${base}/account` })));
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));

  await page.goto(`${base}/account/plans`);
  await screenshot(page, 'billing-plans');
  await Promise.all([
    page.waitForURL(`${ctx.stripe.base}/checkout/**`),
    page.getByRole('button', { name: 'Upgrade to Developer' }).click(),
  ]);
  const sessionId = page.url().split('/checkout/')[1]!;
  t.match(sessionId, /^cs_test_/, 'redirected to the checkout page');

  // the redirect back grants nothing: the return page says processing until the event lands
  await page.goto(`${base}/account/billing/return?session_id=${sessionId}`);
  t.match(await page.textContent('main'), /Processing your payment/);
  const [before] = await ctx.db.sql`SELECT plan FROM accounts.clients WHERE id = ${clientId}`;
  t.equal(before!.plan, 'free');

  const done = await ctx.post(ctx.event('checkout.session.completed', ctx.stripe.completedSession(sessionId)));
  t.equal(done.json().outcome, 'applied');
  await page.goto(`${base}/account/billing/return?session_id=${sessionId}`);
  t.match(await page.textContent('main'), /Payment received/);
  await page.goto(`${base}/account`);
  await screenshot(page, 'billing-overview');
  const overview = (await page.textContent('main')) ?? '';
  t.match(overview, /Developer/, 'the overview shows Developer');
  t.match(overview, /10,000/, 'with 10,000 monthly credits');
  t.match(overview, /Subscription:\s*active/, 'and the subscription active');

  // the next API request draws on the monthly grant, not the trial's credits
  const { key } = await accounts(ctx.db.sql, TEST_KEY_SECRET, ctx.app.redis).createKey(clientId);
  const res = await ctx.app.inject({ method: 'GET', url: '/v1/counties', headers: { authorization: `Bearer ${key}` } });
  t.equal(res.statusCode, 200);
  await ctx.app.flushUsage();
  const [used] = await ctx.db.sql`SELECT bucket, sum(requests)::int AS n FROM meter.usage_daily
                                   WHERE client_id = ${clientId} GROUP BY bucket`;
  t.same(used, { bucket: 'monthly', n: 1 }, 'one request, from the 10,000');

  await page.goto(`${base}/account/plans`);
  await Promise.all([
    page.waitForURL(`${ctx.stripe.base}/checkout/**`),
    page.getByRole('button', { name: /Buy Starter pack/ }).click(),
  ]);
  const packSession = page.url().split('/checkout/')[1]!;
  await ctx.post(ctx.event('checkout.session.completed', ctx.stripe.completedSession(packSession)));
  const [pack] = await ctx.db.sql`SELECT credits::int, expires_at = purchased_at + interval '12 months' AS year
                                   FROM accounts.credit_packs WHERE client_id = ${clientId}`;
  t.same(pack, { credits: 1000, year: true }, '1,000 pack credits expiring in 12 months');
  t.same(problems, [], 'no script errors');
  ctx.clean(t);
});
