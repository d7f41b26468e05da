// The account site end to end in headless Chromium (Debian's, through test/helpers/browser.ts): sign up with the
// keyboard only, follow the logged mail, create a live key, call the API with it, see the call on the usage page
// after the flush, revoke the key (the next call is 401); sign out and in; reset the password through the logged
// mail; a form posted without its CSRF token is refused; the sign-in limit. Every page is screenshotted under
// .local/screenshots/site-*.png, at a laptop's and a phone's width, and no page breaks its Content-Security-Policy.
import t, { type Test } from 'tap';
import type { Browser, Page } from 'playwright-core';
import { buildTestApp } from '../helpers/app.ts';
import { launchBrowser, screenshot } from '../helpers/browser.ts';
import { lastMail, linkIn, mails, pathOf, roomInThrottleWindow, uniqueEmail } from './helpers.ts';

// a whole browser session with argon2 at every sign-in (under a minute when idle, several on a busy machine), and up
// to five minutes' wait for a throttle window with room for the sign-in limit's attempts
t.setTimeout(900_000);
const ctx = await buildTestApp(t);
const { app } = ctx;
const base = await app.listen({ host: '127.0.0.1', port: 0 });
const browser: Browser = await launchBrowser();
t.teardown(() => browser.close());

/** Problems the browser reported: script errors, CSP violations, failed loads of our own files. */
const problems: string[] = [];
async function newPage(width = 1280, height = 900): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  page.on('pageerror', (e) => problems.push(`${page.url()}: ${e.message}`));
  page.on('console', (m) => {
    // an answer's own status (401, 403, 404, 429: asserted where expected) is not a problem of the page
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of/.test(m.text())) {
      problems.push(`${page.url()}: ${m.text()}`);
    }
  });
  // a request cut short by the next navigation (net::ERR_ABORTED) is not a file that failed to load
  page.on('requestfailed', (r) =>
    r.failure()?.errorText === 'net::ERR_ABORTED' ? undefined : problems.push(`${r.url()}: ${r.failure()?.errorText}`),
  );
  return page;
}

/** A laptop and a phone screenshot of the page; the phone's must not scroll sideways. */
async function shoot(t: Test, page: Page, name: string) {
  await screenshot(page, `site-${name}`);
  const phone = await newPage(390, 844);
  await phone.context().addCookies(await page.context().cookies());
  await phone.goto(page.url());
  await screenshot(phone, `site-${name}-phone`);
  const [scroll, width] = await phone.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  t.ok(scroll <= width, `${name}: no sideways scrolling on a phone (${scroll} <= ${width})`);
  await phone.context().close();
}

const email = uniqueEmail('browser');
const password = 'tabbing through the form';
const newPassword = 'reset through the logged mail';
const mailLink = async (after: number) => `${base}${pathOf(linkIn(await lastMail(ctx, email, after)))}`;

t.test('sign up with the keyboard only, confirm through the logged mail', async (t) => {
  const page = await newPage();
  await page.goto(`${base}/account/signup`);
  await shoot(t, page, 'signup');
  const focused = () => page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName);
  let steps = 0;
  while ((await focused()) !== 'f-name' && steps++ < 20) await page.keyboard.press('Tab');
  t.equal(
    await focused(),
    'f-name',
    `Tab reaches the name field (${steps} presses, through the skip link and the menu)`,
  );
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
  t.not(outline, 'none', 'the focused field shows a focus outline');
  await page.keyboard.type('Keyboard Co');
  await page.keyboard.press('Tab');
  t.equal(await focused(), 'f-email');
  await page.keyboard.type(email);
  await page.keyboard.press('Tab');
  t.equal(await focused(), 'f-password');
  await page.keyboard.type(password);
  await page.keyboard.press('Tab');
  t.equal(await focused(), 'BUTTON', 'then the submit button');
  const before = mails(ctx).length;
  // the answer comes back to the same URL, so waiting for the URL would not wait at all: wait for the answer's text
  const sent = page.locator('main', { hasText: 'We sent a message to' });
  await Promise.all([sent.waitFor({ timeout: 20_000 }).catch(() => {}), page.keyboard.press('Enter')]);
  t.match(await page.textContent('main'), /We sent a message to/);
  await shoot(t, page, 'check-email');

  await page.goto(await mailLink(before));
  t.match(await page.textContent('main'), `Create the Free Trial account for ${email}`);
  await shoot(t, page, 'signup-confirm');
  await Promise.all([page.waitForURL(`${base}/account?welcome=1`), page.click('text=Create my account')]);
  const main = await page.textContent('main');
  t.match(main, /Welcome! Your Free Trial has 500 credits/);
  t.match(main, /Credits left: 500/);
  await shoot(t, page, 'overview');
  await page.context().close();
});

t.test('create a live key, call the API, see it on the usage page, revoke it', async (t) => {
  const page = await newPage();
  await page.goto(`${base}/account/login`);
  await page.fill('#f-email', email);
  await page.fill('#f-password', password);
  await Promise.all([page.waitForURL(`${base}/account`), page.click('main button[type=submit]')]);
  await page.click('nav >> text=API keys');
  await shoot(t, page, 'keys-empty');
  await page.check('input[value=live]');
  await page.click('text=Create key');
  const key = (await page.textContent('[data-raw-key]'))!.trim();
  t.match(key, /^flprop_live_[0-9A-Za-z]{32}$/, 'the raw key, in the element marked data-raw-key');
  t.ok(await page.isVisible('button[data-copy]'), 'the copy button (shown by the site’s script, under the CSP)');
  t.match(await page.textContent('.newkey'), /will not be shown again/);
  await screenshot(page, 'site-key-created'); // the one page that holds the raw key: not reloaded for the phone
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  await page.click('button[data-copy]');
  await page.waitForFunction(() => document.querySelector('button[data-copy]')?.textContent !== 'Copy');
  t.equal(await page.evaluate(() => navigator.clipboard.readText()), key, 'the copy button copies the key');

  const call = () => fetch(`${base}/v1/counties`, { headers: { authorization: `Bearer ${key}` } });
  const dayBefore = new Date().toISOString().slice(0, 10);
  t.equal((await call()).status, 200, 'the key works');
  await app.flushUsage();
  await page.click('nav >> text=Usage');
  const dayAfter = new Date().toISOString().slice(0, 10);
  // the day the call was counted on, as the page shows it: the day it was sent, or the next when that crossed midnight
  const display = `flprop_live_…${key.slice(-4)}`;
  const onChart = (await page.$$eval('svg title', (titles) => titles.map((e) => e.textContent))).filter((title) =>
    title?.endsWith(` · ${display} · REST: 1 requests`),
  );
  t.equal(onChart.length, 1, 'the call is on the chart');
  const day = onChart[0]?.slice(0, 10);
  t.ok(day === dayBefore || day === dayAfter, `on the day of the call (${day})`);
  t.match(await page.textContent('table.numbers'), new RegExp(`${day}\\s+1\\s+1`), 'and in the table');
  await shoot(t, page, 'usage');

  await page.click('nav >> text=API keys');
  await page.click(`a:has-text("Revoke")`);
  t.match(await page.textContent('main'), /Its next request is refused \(401\)/);
  await shoot(t, page, 'revoke-confirm');
  await page.click('text=Revoke the key');
  t.match(await page.textContent('main'), `Key ${display} is revoked.`);
  t.equal((await call()).status, 401, 'the next call with the revoked key is 401');
  await shoot(t, page, 'keys');

  for (const [name, path] of [
    ['quickstart', '/account/quickstart'],
    ['plans', '/account/plans'],
    ['password', '/account/password'],
    ['not-found', '/account/nowhere'],
  ]) {
    await page.goto(`${base}${path}`);
    await shoot(t, page, name!);
  }
  await page.context().close();
});

t.test('sign out and back in', async (t) => {
  const page = await newPage();
  await page.goto(`${base}/account/login?next=%2Faccount%2Fkeys`);
  await page.fill('#f-email', email);
  await page.fill('#f-password', password);
  await Promise.all([page.waitForURL(`${base}/account/keys`), page.click('main button[type=submit]')]);
  await Promise.all([page.waitForURL(`${base}/account/login?signed_out=1`), page.click('text=Sign out')]);
  t.match(await page.textContent('main'), /You are signed out/);
  await shoot(t, page, 'login');
  await page.goto(`${base}/account`);
  t.equal(new URL(page.url()).pathname, '/account/login', 'signed out: the account asks to sign in');
  await page.fill('#f-email', email);
  await page.fill('#f-password', password);
  await Promise.all([page.waitForURL(`${base}/account`), page.click('main button[type=submit]')]);
  t.match(await page.textContent('main'), /Credits left/);
  await page.context().close();
});

t.test('reset the password through the logged mail', async (t) => {
  const page = await newPage();
  await page.goto(`${base}/account/login`);
  await page.click('text=Forgot your password?');
  await shoot(t, page, 'reset');
  const before = mails(ctx).length;
  await page.fill('#f-email', email);
  await page.click('text=Send the link');
  t.match(await page.textContent('main'), /If an account signs in with/);
  await shoot(t, page, 'reset-sent');
  await page.goto(await mailLink(before));
  await shoot(t, page, 'reset-confirm');
  await page.fill('#f-password', newPassword);
  await Promise.all([page.waitForURL(`${base}/account/login?reset=1`), page.click('text=Save password')]);
  t.match(await page.textContent('main'), /Your password is saved/);
  await page.fill('#f-email', email);
  await page.fill('#f-password', newPassword);
  await Promise.all([page.waitForURL(`${base}/account`), page.click('main button[type=submit]')]);
  t.pass('signed in with the new password');
  await page.context().close();
});

t.test('a form posted without its CSRF token is refused', async (t) => {
  const page = await newPage();
  await page.goto(`${base}/account/login`);
  await page.evaluate(() => document.querySelector('input[name=_csrf]')!.remove());
  await page.fill('#f-email', email);
  await page.fill('#f-password', newPassword);
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/account/login') && r.request().method() === 'POST'),
    page.click('main button[type=submit]'),
  ]);
  t.equal(answer.status(), 403);
  t.match(await page.textContent('main'), /This form was not accepted/);
  t.notOk(
    (await page.context().cookies()).some((c) => c.name === 'fl_session'),
    'and nobody is signed in',
  );
  await shoot(t, page, 'csrf-refused');
  await page.context().close();
});

t.test('the sign-in limit says clearly when to try again', async (t) => {
  await roomInThrottleWindow(300_000)();
  const page = await newPage();
  const statuses: number[] = [];
  for (let i = 0; i < 11; i++) {
    await page.goto(`${base}/account/login`);
    await page.fill('#f-email', email);
    await page.fill('#f-password', 'not the password at all');
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/account/login') && r.request().method() === 'POST'),
      page.click('main button[type=submit]'),
    ]);
    statuses.push(answer.status());
  }
  t.same(statuses, [...Array(10).fill(401), 429]);
  t.match(await page.textContent('[role=alert]'), /Too many attempts .* try again in \d+ (minutes?|seconds?)\./);
  await screenshot(page, 'site-throttled');
  await page.context().close();
});

t.test('no page broke its Content-Security-Policy or failed to load a file', async (t) => {
  t.same(problems, []);
});
