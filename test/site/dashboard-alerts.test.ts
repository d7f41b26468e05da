// The low-credit email: the threshold set on the alerts page; the check (as the site runs it once a minute, here called
// with the clock passed in) mails a client below its threshold once per billing period, through a real SMTP server
// started here and the project's mailer, over the metering's database role (api_meter), as the site runs it.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import { withRole } from '../../src/db-url.ts';
import { createSql } from '../../src/plugins/db.ts';
import { smtpSink } from '../helpers/smtp.ts';
import { sendLowCreditAlerts } from '../../src/site/dashboard-alerts.ts';
import { mails, signUp } from './helpers.ts';

const ctx = await buildTestApp(t);

const { received, mailer } = await smtpSink(t, 'billing@example.com');
const meterSql = createSql(withRole(ctx.db.ownerUrl, 'api_meter'), 1);
t.teardown(() => meterSql.end({ timeout: 5 }));

const sent: Promise<void>[] = [];
/** One check as the site runs it, waiting for the SMTP server to have every message sent. */
const check = async (now: Date) => {
  const n = await sendLowCreditAlerts(meterSql, (mail) => sent.push(mailer.send(mail)), 'https://example.test', now);
  await Promise.all(sent.splice(0));
  return n;
};
/** Quoted-printable soft breaks and escapes undone, enough to read the text. */
const readable = (raw: string) =>
  raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));

t.test('the alerts page sets, shows and clears the threshold; refuses a bad one', async (t) => {
  const { agent } = await signUp(ctx);
  const page = await agent.get('/account/alerts');
  t.equal(page.statusCode, 200);
  t.match(page.body, /No low-credit email is set/);
  const saved = await agent.post('/account/alerts', { threshold: '1,500' }, { from: '/account/alerts' });
  t.equal(saved.statusCode, 303);
  t.match((await agent.get('/account/alerts')).body, /value="1500"/);
  for (const bad of ['abc', '0', '99999999999', '-5']) {
    const refused = await agent.post('/account/alerts', { threshold: bad }, { from: '/account/alerts' });
    t.equal(refused.statusCode, 400, `${bad} refused`);
    t.match(refused.body, /whole number of credits/);
  }
  t.equal((await agent.post('/account/alerts', { threshold: '' }, { from: '/account/alerts' })).statusCode, 303);
  t.match((await agent.get('/account/alerts')).body, /No low-credit email is set/);
});

t.test('below the threshold: one email per billing period, none above it', async (t) => {
  // a free trial: 500 one-time credits
  const low = await signUp(ctx);
  const high = await signUp(ctx);
  await low.agent.post('/account/alerts', { threshold: '600' }, { from: '/account/alerts' });
  await high.agent.post('/account/alerts', { threshold: '100' }, { from: '/account/alerts' });
  const [clock] = await ctx.db.sql<{ now: Date }[]>`SELECT now() AS now`;
  const now = clock!.now;
  const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 2));

  const before = received.length;
  // The app's own check (once a minute, with the real clock) may claim a client first: its mail goes to the app's
  // log, as the site's mail does in tests. Either way it is one mail, so both are counted.
  const mailsTo = (email: string) => [
    ...received
      .slice(before)
      .filter((m) => m.to.includes(email))
      .map((m) => readable(m.raw)),
    ...mails(ctx)
      .filter((m) => m.to === email && m.subject.includes('credits are low'))
      .map((m) => `Subject: ${m.subject}\n${m.text}`),
  ];
  await check(now);
  t.equal(mailsTo(low.email).length, 1, 'one email to the client below its threshold');
  t.equal(mailsTo(high.email).length, 0, 'none to the one above it');
  const text = mailsTo(low.email)[0]!;
  t.match(text, /Subject: Your Florida Property API credits are low: 500 left/);
  t.match(text, /below the 600 you asked us to warn you about/);
  t.match(text, /\/account\/plans/);
  t.ok(
    received.slice(before).some((m) => m.to.includes(low.email)) ||
      mails(ctx).some((m) => m.to === low.email && m.subject.includes('credits are low')),
    "sent through SMTP (or by the app's own check to its log)",
  );

  await check(now);
  await check(new Date(now.getTime() + 60_000));
  t.equal(mailsTo(low.email).length, 1, 'not again in the same period');
  const [row] = await ctx.db.sql<{ last_sent_period: string }[]>`
    SELECT last_sent_period FROM accounts.credit_alerts WHERE client_id = ${low.clientId}`;
  t.equal(row!.last_sent_period, now.toISOString().slice(0, 7));

  await check(nextMonth);
  t.equal(mailsTo(low.email).length, 2, 'once more in the next period');
  t.equal(received.slice(before).filter((m) => m.to.includes(low.email)).length >= 1, true);
  await check(nextMonth);
  await check(now);
  t.equal(mailsTo(low.email).length, 2, 'and not again, nor for a clock set back');

  // spending below the other threshold: mailed on the next check
  await ctx.db.sql`
    INSERT INTO meter.ledger (client_id, bucket, delta, reason) VALUES (${high.clientId}, 'credits', -450, 'usage')`;
  await check(now);
  t.equal(mailsTo(high.email).length, 1, 'the other client, once below');
});

t.test("the site's role cannot run the check: it acts on an account only through its session", async (t) => {
  const siteSql = createSql(withRole(ctx.db.ownerUrl, 'api_site'), 1);
  t.teardown(() => siteSql.end({ timeout: 5 }));
  await t.rejects(siteSql`SELECT * FROM meter.claim_low_credit_alerts()`, { code: '42501' });
  const apiSql = createSql(ctx.db.apiUrl, 1);
  t.teardown(() => apiSql.end({ timeout: 5 }));
  await t.rejects(apiSql`SELECT * FROM meter.claim_low_credit_alerts()`, { code: '42501' });
  await t.rejects(apiSql`SELECT * FROM meter.request_log`, { code: '42501' }, 'nor the API role read the log');
  await t.rejects(apiSql`SELECT meter.record_requests('[]')`, { code: '42501' }, 'or write it');
});
