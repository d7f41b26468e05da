// The account site's sign-in rules over HTTP: sign-up through an emailed link, no account enumeration (sign-up,
// sign-in, reset), sessions (cookie attributes, sign-out, idle and absolute expiry, password change ends them
// everywhere), password reset (single use, 30 minutes), CSRF on every form. The attempt limits: throttle.test.ts.
import t from 'tap';
import { buildTestApp } from '../helpers/app.ts';
import {
  Agent,
  GOOD_PASSWORD,
  csrfIn,
  lastMail,
  linkIn,
  mails,
  pathOf,
  signUp,
  textOf,
  uniqueEmail,
} from './helpers.ts';

const ctx = await buildTestApp(t);
const { app, db } = ctx;
const sql = db.sql;

/** The page without what differs on every answer (CSRF token, the request id). */
const comparable = (body: string) => body.replace(/name="_csrf" value="[^"]+"/g, '').replace(/req_\w+/g, '');

t.test('sign-up: an emailed link creates a Free Trial client with 500 credits and signs in', async (t) => {
  const email = uniqueEmail('signup');
  const agent = new Agent(ctx);
  const before = mails(ctx).length;
  const res = await agent.post(
    '/account/signup',
    { name: 'Acme Title Co', email, password: GOOD_PASSWORD },
    { from: '/account/signup' },
  );
  t.equal(res.statusCode, 200);
  t.match(textOf(res.body), /We sent a message to .*30 minutes/);
  t.same(await sql`SELECT 1 FROM accounts.clients WHERE email = ${email}`, [], 'nothing is created before the link');
  const mail = await lastMail(ctx, email, before);
  t.match(mail.subject, /Confirm your email/);
  const path = pathOf(linkIn(mail));
  t.match(path, /^\/account\/signup\/confirm\?token=[\w-]{43}$/);

  const page = await agent.get(path);
  t.equal(page.statusCode, 200);
  t.match(textOf(page.body), `Create the Free Trial account for ${email}`);
  const token = new URL(`http://x${path}`).searchParams.get('token')!;
  const done = await agent.post('/account/signup/confirm', { token, _csrf: csrfIn(page.body)! });
  t.equal(done.statusCode, 303);
  t.equal(done.headers.location, '/account?welcome=1');
  t.ok(agent.cookies.get('fl_session'), 'signed in');

  const [client] = await sql<{ id: string; plan: string; name: string }[]>`
    SELECT id, plan, name FROM accounts.clients WHERE email = ${email}`;
  t.match(client, { plan: 'free', name: 'Acme Title Co' });
  const [ledger] = await sql<{ credits: number }[]>`
    SELECT sum(delta)::int AS credits FROM meter.ledger WHERE client_id = ${client!.id}`;
  t.equal(ledger!.credits, 500, '500 trial credits in the ledger');
  const overview = await agent.get('/account');
  t.equal(overview.statusCode, 200);
  const text = textOf(overview.body);
  t.match(text, 'Free Trial');
  t.match(text, /Trial credits 500/);
  t.match(text, /Credits left: 500/);

  t.equal((await new Agent(ctx).get(path)).statusCode, 400, 'the link works once');
  const again = await new Agent(ctx).post('/account/signup/confirm', { token }, { from: '/account/signup' });
  t.equal(again.statusCode, 400, 'and cannot make a second account');
  t.match(textOf(again.body), /This link does not work/);
  const [stored] = await sql<{ password_hash: string }[]>`
    SELECT password_hash FROM accounts.site_users WHERE email = ${email}`;
  t.match(stored!.password_hash, /^\$argon2id\$/, 'the password is kept as an argon2id hash');
  t.notOk(ctx.logs.join('').includes(GOOD_PASSWORD), 'the password never reaches the log');
});

t.test('sign-up refuses weak passwords and bad fields with a 400 naming each field', async (t) => {
  const agent = new Agent(ctx);
  const cases: [Record<string, string>, RegExp][] = [
    [{ name: 'A', email: uniqueEmail(), password: 'short pass' }, /at least 12 characters \(this one has 10\)/],
    [{ name: 'A', email: uniqueEmail(), password: '1q2w3e4r5t6y' }, /most common passwords/],
    [{ name: 'A', email: uniqueEmail(), password: 'Sunshine2024!!' }, /most common passwords/],
    [{ name: 'A', email: uniqueEmail(), password: 'Password123456' }, /most common passwords/],
    [{ name: 'A', email: uniqueEmail(), password: 'monkeymonkeymonkey' }, /most common passwords/],
    [{ name: 'A', email: 'not-an-email', password: GOOD_PASSWORD }, /Enter an email address/],
    [{ name: '', email: uniqueEmail(), password: GOOD_PASSWORD }, /Enter a name/],
  ];
  for (const [fields, message] of cases) {
    const res = await agent.post('/account/signup', fields, { from: '/account/signup' });
    t.equal(res.statusCode, 400, JSON.stringify(fields));
    t.match(textOf(res.body), message);
    t.match(res.body, /aria-invalid="true"/, 'the field is marked invalid');
  }
  t.same(await sql`SELECT 1 FROM accounts.site_tokens WHERE email = 'not-an-email'`, []);
});

t.test(
  'no account enumeration: sign-up, sign-in and reset answer the same for a known and an unknown email',
  async (t) => {
    const known = await signUp(ctx);
    const unknown = uniqueEmail('nobody');

    // sign-up: the same page; only the email differs (the owner is told they have an account)
    const pages = [];
    for (const email of [known.email, unknown]) {
      const before = mails(ctx).length;
      const res = await new Agent(ctx, '10.1.0.1').post(
        '/account/signup',
        { name: 'Someone', email, password: 'another strong passphrase' },
        { from: '/account/signup' },
      );
      pages.push({ status: res.statusCode, body: comparable(res.body).replaceAll(email, 'EMAIL') });
      const mail = await lastMail(ctx, email, before);
      t.match(mail.subject, email === known.email ? /already have an account/ : /Confirm your email/);
    }
    t.same(pages[0], pages[1], 'sign-up: same status and page');
    const [{ n }] =
      (await sql`SELECT count(*)::int AS n FROM accounts.site_users WHERE lower(email) = lower(${known.email})`) as unknown as [
        { n: number },
      ];
    t.equal(n, 1, 'the known email still has one account');

    // sign-in: a wrong password for a known email and any password for an unknown one
    const logins = [];
    for (const email of [known.email, unknown]) {
      const started = Date.now();
      const res = await new Agent(ctx, '10.1.0.2').post(
        '/account/login',
        { email, password: 'wrong password here' },
        { from: '/account/login' },
      );
      logins.push({
        status: res.statusCode,
        body: comparable(res.body).replaceAll(email, 'EMAIL'),
        slow: Date.now() - started > 5,
      });
    }
    t.same(logins[0], logins[1], 'sign-in: same status and page, and both pay for an argon2 check');
    t.equal(logins[0]!.status, 401);
    t.match(textOf(logins[0]!.body), 'The email or the password is not right.');

    // reset: the same page; a link is sent only to the known address (after the answer)
    const resets = [];
    const before = mails(ctx).length;
    for (const email of [unknown, known.email]) {
      const res = await new Agent(ctx, '10.1.0.3').post('/account/reset', { email }, { from: '/account/reset' });
      resets.push({ status: res.statusCode, body: comparable(res.body).replaceAll(email, 'EMAIL') });
    }
    t.match((await lastMail(ctx, known.email, before)).subject, 'Choose a new password');
    t.same(
      mails(ctx)
        .slice(before)
        .map((m) => m.to),
      [known.email],
      'no mail to the unknown address, looked up first',
    );
    t.same(resets[0], resets[1], 'reset: same status and page');
    t.match(textOf(resets[0]!.body), /If an account signs in with EMAIL, we have sent it a link/);
  },
);

t.test(
  'session cookie: HttpOnly, SameSite=Lax, Path=/account; Secure only over HTTPS from a trusted proxy',
  async (t) => {
    const { agent, email, password } = await signUp(ctx);
    const login = async (app2: typeof app, headers: Record<string, string> = {}) => {
      const page = await app2.inject({ url: '/account/login', headers });
      const csrfCookie = page.cookies.find((c) => c.name === 'fl_csrf')!;
      const res = await app2.inject({
        method: 'POST',
        url: '/account/login',
        headers: {
          ...headers,
          cookie: `fl_csrf=${csrfCookie.value}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        payload: new URLSearchParams({ email, password, _csrf: csrfIn(page.body)! }).toString(),
      });
      t.equal(res.statusCode, 303);
      return String([res.headers['set-cookie']].flat().find((c) => String(c).startsWith('fl_session=')));
    };
    const plain = await login(app);
    t.match(plain, /HttpOnly/);
    t.match(plain, /SameSite=Lax/);
    t.match(plain, /Path=\/account/);
    t.match(plain, /Max-Age=43200/);
    t.notMatch(plain, /Secure/, 'no Secure over plain HTTP (a browser would drop the cookie)');
    t.notMatch(
      await login(app, { 'x-forwarded-proto': 'https' }),
      /Secure/,
      'an untrusted X-Forwarded-Proto is ignored',
    );

    const proxied = await buildTestApp(t, { TRUST_PROXY: '127.0.0.1' }, { db });
    t.match(
      await login(proxied.app, { 'x-forwarded-proto': 'https' }),
      /Secure/,
      'HTTPS behind a trusted proxy: Secure',
    );
    t.ok(agent.cookies.get('fl_session'));
  },
);

t.test('sign-out ends the session on the server; sign-out everywhere ends all of them', async (t) => {
  const { agent, email, password } = await signUp(ctx);
  const stolen = agent.cookieHeader();
  const out = await agent.post('/account/logout', {}, { from: '/account' });
  t.equal(out.statusCode, 303);
  t.equal(out.headers.location, '/account/login?signed_out=1');
  const replay = await app.inject({ url: '/account', headers: { cookie: stolen } });
  t.equal(replay.statusCode, 303, 'a copy of the old cookie no longer opens the account');
  t.equal(replay.headers.location, '/account/login');

  const a = new Agent(ctx);
  const b = new Agent(ctx);
  for (const x of [a, b]) {
    t.equal((await x.post('/account/login', { email, password }, { from: '/account/login' })).statusCode, 303);
  }
  t.equal((await b.get('/account')).statusCode, 200);
  t.equal((await a.post('/account/logout', { everywhere: '1' }, { from: '/account' })).statusCode, 303);
  t.equal((await b.get('/account')).statusCode, 303, 'the other device is signed out too');
});

t.test('sessions expire after an idle hour and after 12 hours however used', async (t) => {
  const { agent, email } = await signUp(ctx);
  const [user] = await sql<{ id: string }[]>`SELECT id FROM accounts.site_users WHERE email = ${email}`;
  t.equal((await agent.get('/account')).statusCode, 200);

  await sql`UPDATE accounts.site_sessions SET last_seen_at = now() - interval '59 minutes' WHERE user_id = ${user!.id}`;
  t.equal((await agent.get('/account')).statusCode, 200, 'used within the hour: still signed in');
  await sql`UPDATE accounts.site_sessions SET last_seen_at = now() - interval '61 minutes' WHERE user_id = ${user!.id}`;
  const idle = await agent.get('/account');
  t.equal(idle.statusCode, 303, 'idle for more than an hour: signed out');
  t.same(await sql`SELECT 1 FROM accounts.site_sessions WHERE user_id = ${user!.id}`, [], 'and the session is gone');

  const again = new Agent(ctx);
  await again.post('/account/login', { email, password: GOOD_PASSWORD }, { from: '/account/login' });
  t.equal((await again.get('/account')).statusCode, 200);
  const [s] = await sql<{ created: Date; expires: Date }[]>`
    SELECT created_at AS created, expires_at AS expires FROM accounts.site_sessions WHERE user_id = ${user!.id}`;
  t.equal(s!.expires.getTime() - s!.created.getTime(), 12 * 3600 * 1000, 'expires 12 hours after sign-in');
  await sql`UPDATE accounts.site_sessions SET expires_at = now() - interval '1 second', last_seen_at = now()
             WHERE user_id = ${user!.id}`;
  t.equal((await again.get('/account')).statusCode, 303, 'past its absolute expiry, though just used: signed out');
});

t.test(
  'a password change ends every session, other devices included; the new password works, the old does not',
  async (t) => {
    const { agent, email, password } = await signUp(ctx);
    const other = new Agent(ctx);
    await other.post('/account/login', { email, password }, { from: '/account/login' });
    t.equal((await other.get('/account')).statusCode, 200);

    const wrong = await agent.post(
      '/account/password',
      { current: 'not my password', password: 'a brand new passphrase' },
      { from: '/account/password' },
    );
    t.equal(wrong.statusCode, 400);
    t.match(textOf(wrong.body), 'This is not your current password.');
    const weak = await agent.post(
      '/account/password',
      { current: password, password: 'password1234' },
      { from: '/account/password' },
    );
    t.equal(weak.statusCode, 400, 'the new password meets the same rules');

    const before = agent.cookieHeader();
    const changed = await agent.post(
      '/account/password',
      { current: password, password: 'a brand new passphrase' },
      { from: '/account/password' },
    );
    t.equal(changed.statusCode, 303);
    t.equal((await agent.get('/account')).statusCode, 200, 'this browser continues with a new session');
    t.equal(
      (await app.inject({ url: '/account', headers: { cookie: before } })).statusCode,
      303,
      'its old cookie is dead',
    );
    t.equal((await other.get('/account')).statusCode, 303, 'the other device is signed out');

    const oldLogin = await new Agent(ctx).post('/account/login', { email, password }, { from: '/account/login' });
    t.equal(oldLogin.statusCode, 401);
    const newLogin = await new Agent(ctx).post(
      '/account/login',
      { email, password: 'a brand new passphrase' },
      { from: '/account/login' },
    );
    t.equal(newLogin.statusCode, 303);
  },
);

t.test('password reset: an emailed link, once, within 30 minutes; it ends every session', async (t) => {
  const { agent, email } = await signUp(ctx);
  const before = mails(ctx).length;
  const asked = await new Agent(ctx).post('/account/reset', { email: email.toUpperCase() }, { from: '/account/reset' });
  t.equal(asked.statusCode, 200);
  const mail = await lastMail(ctx, email, before);
  t.match(mail.subject, 'Choose a new password');
  const path = pathOf(linkIn(mail));
  const token = new URL(`http://x${path}`).searchParams.get('token')!;
  const reader = new Agent(ctx);
  const page = await reader.get(path);
  t.equal(page.statusCode, 200);
  t.match(textOf(page.body), `Choose a new password for ${email}`);

  const weak = await reader.post('/account/reset/confirm', { token, password: 'letmein12345' }, { from: path });
  t.equal(weak.statusCode, 400);
  const done = await reader.post(
    '/account/reset/confirm',
    { token, password: 'reset passphrase works' },
    { from: path },
  );
  t.equal(done.statusCode, 303);
  t.equal(done.headers.location, '/account/login?reset=1');
  t.equal((await agent.get('/account')).statusCode, 303, 'the sessions before the reset have ended');
  t.equal((await reader.get(path)).statusCode, 400, 'the link works once');
  const login = await new Agent(ctx).post(
    '/account/login',
    { email, password: 'reset passphrase works' },
    { from: '/account/login' },
  );
  t.equal(login.statusCode, 303);

  // a link older than 30 minutes is refused
  const before2 = mails(ctx).length;
  await new Agent(ctx, '10.2.0.9').post('/account/reset', { email }, { from: '/account/reset' });
  const late = pathOf(linkIn(await lastMail(ctx, email, before2)));
  const [row] = await sql<{ minutes: number }[]>`
    SELECT round(extract(epoch FROM expires_at - created_at) / 60)::int AS minutes FROM accounts.site_tokens
     WHERE email = ${email} AND purpose = 'reset'`;
  t.equal(row!.minutes, 30, 'a reset link lives 30 minutes');
  await sql`UPDATE accounts.site_tokens SET expires_at = now() - interval '1 second' WHERE email = ${email}`;
  const expired = await new Agent(ctx).get(late);
  t.equal(expired.statusCode, 400);
  t.match(textOf(expired.body), /This link does not work/);

  const logged = ctx.logs.filter((l) => l.includes('/account/reset/confirm?token=') && l.includes('"req"'));
  t.ok(logged.length > 0, 'requests for the link are logged');
  t.ok(
    logged.every((l) => l.includes('token=[REDACTED]') && !l.includes(token)),
    'with the token redacted',
  );
});

t.test('every state-changing form is refused without its CSRF token', async (t) => {
  const { agent, clientId } = await signUp(ctx);
  const [key] = await sql<{ id: string }[]>`SELECT gen_random_uuid() AS id`;
  const forms: [string, Record<string, string>][] = [
    ['/account/signup', { name: 'X', email: uniqueEmail(), password: GOOD_PASSWORD }],
    ['/account/login', { email: uniqueEmail(), password: GOOD_PASSWORD }],
    ['/account/logout', {}],
    ['/account/reset', { email: uniqueEmail() }],
    ['/account/reset/confirm', { token: 'x', password: GOOD_PASSWORD }],
    ['/account/signup/confirm', { token: 'x' }],
    ['/account/password', { current: GOOD_PASSWORD, password: 'another long passphrase' }],
    ['/account/keys', { mode: 'live' }],
    [`/account/keys/${key!.id}/revoke`, {}],
  ];
  for (const [url, fields] of forms) {
    const missing = await agent.post(url, fields);
    t.equal(missing.statusCode, 403, `${url} without a token`);
    t.match(textOf(missing.body), /This form was not accepted/);
    const forged = await agent.post(url, { ...fields, _csrf: 'forged-token' });
    t.equal(forged.statusCode, 403, `${url} with a forged token`);
  }
  // a token from another browser's page is no good with this browser's CSRF cookie
  const stranger = new Agent(ctx);
  await stranger.get('/account/login');
  const foreign = await agent.post('/account/keys', { mode: 'live', _csrf: csrfIn(stranger.lastBody)! });
  t.equal(foreign.statusCode, 403);
  // nor is another session's page: its CSRF cookie and token with this session's cookie
  const other = await signUp(ctx);
  await other.agent.get('/account/keys');
  const crossed = await agent.post(
    '/account/keys',
    { mode: 'live', _csrf: csrfIn(other.agent.lastBody)! },
    {
      headers: {
        cookie: `fl_session=${agent.cookies.get('fl_session')}; fl_csrf=${other.agent.cookies.get('fl_csrf')}`,
      },
    },
  );
  t.equal(crossed.statusCode, 403, 'a token is bound to the session it was shown to');
  t.equal((await agent.get('/account')).statusCode, 200, 'still signed in: nothing happened');
  t.same(await sql`SELECT 1 FROM accounts.api_keys WHERE client_id = ${clientId}`, [], 'no key was created');
});

t.test('after sign-in the site goes back where it was asked for, and never off the site', async (t) => {
  const { email, password } = await signUp(ctx);
  const asked = await new Agent(ctx).get('/account/usage');
  t.equal(asked.headers.location, '/account/login?next=%2Faccount%2Fusage');
  for (const [next, to] of [
    ['/account/usage', '/account/usage'],
    ['//evil.example/account', '/account'],
    ['https://evil.example', '/account'],
    ['/account/../../evil', '/account'],
  ]) {
    const res = await new Agent(ctx).post(
      '/account/login',
      { email, password, next: next! },
      { from: '/account/login' },
    );
    t.equal(res.headers.location, to, String(next));
  }
});
