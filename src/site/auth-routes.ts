// Sign-up (confirmed by an emailed link), sign-in, sign-out, password reset and change, invitations. No answer says
// whether an email has an account: sign-up and reset show the same page either way (only the email sent differs),
// and a failed sign-in says "email or password is incorrect" after the same argon2 work; a reset request is answered
// before the account is looked up. Attempts are limited per address and per email (throttle.ts), each taken before
// any work is done for it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { field, isEmail, safeNext } from './form.ts';
import {
  changePasswordPage,
  checkInboxPage,
  confirmSignupPage,
  invalidLinkPage,
  loginPage,
  resetRequestPage,
  resetSentPage,
  setPasswordPage,
  signupPage,
  type Errors,
} from './auth-pages.ts';
import { MAX_PASSWORD, hashPassword, passwordProblem, verifyPassword } from './passwords.ts';
import * as q from './queries.ts';
import { waitText } from './throttle.ts';
import { isToken, newToken, tokenHash } from './tokens.ts';
import type { Site } from './index.ts';

const tooMany = (seconds: number) =>
  `Too many attempts from your network or for this email. For your account's safety, try again in ${waitText(seconds)}.`;

/** The 22023 / 23505 our SQL raises for a link that does not work or an email taken meanwhile, else rethrown. */
const sqlState = (err: unknown) => (err as { code?: string }).code;

export default async function authRoutes(app: FastifyInstance, opts: { site: Site }) {
  const site = opts.site;
  const { sql } = site;
  const link = (path: string, token: string) => `${site.config.SITE_URL}${path}?token=${token}`;
  /** Runs `work` once the answer is sent, so that its time does not show in the answer. */
  const afterAnswer = (reply: FastifyReply, work: () => Promise<unknown>) => {
    const run = () => void work().catch((err: Error) => app.log.error({ err: err.message }, 'site work failed'));
    void reply.then(run, run);
  };
  const signedIn = (request: FastifyRequest, reply: FastifyReply) => {
    if (!request.siteSession) return false;
    void reply.redirect('/account', 303);
    return true;
  };

  // ---- sign-up ----
  app.get('/signup', async (request, reply) => {
    if (signedIn(request, reply)) return reply;
    return site.render(reply, { title: 'Create your account' }, (csrf) => signupPage(csrf));
  });

  app.post('/signup', async (request, reply) => {
    const name = field(request.body, 'name', 400).trim();
    const email = field(request.body, 'email', 400).trim();
    const password = field(request.body, 'password', 4 * MAX_PASSWORD);
    const errors: Errors = {};
    if (name === '' || name.length > 200) errors.name = 'Enter a name of 1 to 200 characters.';
    if (!isEmail(email)) errors.email = 'Enter an email address, like you@example.com.';
    const weak = passwordProblem(password, { email });
    if (weak) errors.password = weak;
    const form = (status: number, e: Errors, notice?: string) =>
      site.render(
        reply,
        { title: 'Create your account', status, notice: notice ? { kind: 'error', text: notice } : null },
        (csrf) => signupPage(csrf, { name, email }, e),
      );
    if (Object.keys(errors).length > 0) return form(400, errors, 'Please correct the fields marked below.');
    const wait = await site.limits.take('signup', request.ip, email);
    if (wait > 0) return form(429, {}, tooMany(wait));
    const token = newToken();
    const passwordHash = await hashPassword(password, request.ip);
    const exists = await q.startSignup(sql, email, name, passwordHash, tokenHash(token));
    site.sendMail(
      exists
        ? {
            to: email,
            subject: 'You already have an account',
            text: `Someone, hopefully you, tried to create an account on the Florida Property API with this address.\n\nYou already have one. Sign in at ${site.config.SITE_URL}/account/login, or choose a new password at ${site.config.SITE_URL}/account/reset.\n\nIf it was not you, you can ignore this message: nothing was changed.\n`,
          }
        : {
            to: email,
            subject: 'Confirm your email to create your account',
            text: `Follow this link within 30 minutes to create your Florida Property API account (Free Trial, 500 credits):\n\n${link('/account/signup/confirm', token)}\n\nIf you did not ask for an account, ignore this message: nothing is created without the link.\n`,
          },
    );
    return site.render(reply, { title: 'Check your email' }, () => checkInboxPage(email, site.mailer.mode));
  });

  app.get('/signup/confirm', async (request, reply) => {
    const token = (request.query as { token?: unknown }).token;
    const found = isToken(token) ? await q.checkLink(sql, tokenHash(token)) : undefined;
    if (!found || found.purpose !== 'signup') {
      return site.render(reply, { title: 'Link not valid', status: 400 }, () =>
        invalidLinkPage({ href: '/account/signup', label: 'Start again' }),
      );
    }
    return site.render(reply, { title: 'Create your account' }, (csrf) =>
      confirmSignupPage(csrf, found.email, token as string),
    );
  });

  app.post('/signup/confirm', async (request, reply) => {
    const token = field(request.body, 'token', 100);
    const session = site.newSession();
    try {
      if (!isToken(token)) throw Object.assign(new Error('not a token'), { code: '22023' });
      await q.finishSignup(sql, tokenHash(token), session.hash);
    } catch (err) {
      if (sqlState(err) === '22023') {
        return site.render(reply, { title: 'Link not valid', status: 400 }, () =>
          invalidLinkPage({ href: '/account/signup', label: 'Start again' }),
        );
      }
      if (sqlState(err) === '23505') {
        return site.render(reply, { title: 'Link not valid', status: 409 }, () =>
          invalidLinkPage({ href: '/account/login', label: 'This email has an account: sign in' }),
        );
      }
      throw err;
    }
    if (request.siteSession) await q.endSession(sql, request.siteSession.hash);
    site.setSession(reply, session.token);
    return reply.redirect('/account?welcome=1', 303);
  });

  // ---- sign-in and sign-out ----
  app.get('/login', async (request, reply) => {
    if (signedIn(request, reply)) return reply;
    const query = request.query as Record<string, unknown>;
    const notice =
      query.reset !== undefined
        ? 'Your password is saved, and every device was signed out. Sign in with the new password.'
        : query.signed_out !== undefined
          ? 'You are signed out.'
          : null;
    const next = typeof query.next === 'string' ? safeNext(query.next) : undefined;
    return site.render(
      reply,
      { title: 'Sign in', current: '/account/login', notice: notice ? { kind: 'ok', text: notice } : null },
      (csrf) => loginPage(csrf, { next: next === '/account' ? undefined : next }),
    );
  });

  app.post('/login', async (request, reply) => {
    const email = field(request.body, 'email', 400).trim();
    const password = field(request.body, 'password', 4 * MAX_PASSWORD);
    const next = safeNext(field(request.body, 'next', 200));
    const form = (status: number, text: string) =>
      site.render(
        reply,
        { title: 'Sign in', current: '/account/login', status, notice: { kind: 'error', text } },
        (csrf) => loginPage(csrf, { email, next: next === '/account' ? undefined : next }),
      );
    if (email === '' || password === '') return form(400, 'Enter your email and your password.');
    let user: Awaited<ReturnType<typeof q.login>>;
    const { wait, ok } = await site.limits.guard('login', request.ip, email, async () => {
      user = isEmail(email) ? await q.login(sql, email) : undefined;
      // an unknown email costs the same argon2 check as a wrong password (verifyPassword's decoy)
      return verifyPassword(user?.password_hash, password, request.ip);
    });
    if (wait > 0) return form(429, tooMany(wait));
    if (!ok || !user) return form(401, 'The email or the password is not right.');
    if (request.siteSession) await q.endSession(sql, request.siteSession.hash);
    const session = site.newSession();
    await q.createSession(sql, user.user_id, session.hash);
    site.setSession(reply, session.token);
    return reply.redirect(next, 303);
  });

  app.post('/logout', async (request, reply) => {
    const everywhere = field(request.body, 'everywhere', 10) === '1';
    if (request.siteSession) {
      if (everywhere) await q.endAllSessions(sql, request.siteSession.hash);
      else await q.endSession(sql, request.siteSession.hash);
    }
    site.clearSession(reply);
    return reply.redirect('/account/login?signed_out=1', 303);
  });

  // ---- password reset and invitations ----
  app.get('/reset', async (_request, reply) =>
    site.render(reply, { title: 'Reset your password' }, (csrf) => resetRequestPage(csrf)),
  );

  app.post('/reset', async (request, reply) => {
    const email = field(request.body, 'email', 400).trim();
    if (!isEmail(email)) {
      return site.render(reply, { title: 'Reset your password', status: 400 }, (csrf) =>
        resetRequestPage(csrf, email, { email: 'Enter an email address, like you@example.com.' }),
      );
    }
    const wait = await site.limits.take('reset', request.ip, email);
    if (wait > 0) {
      return site.render(
        reply,
        { title: 'Reset your password', status: 429, notice: { kind: 'error', text: tooMany(wait) } },
        (csrf) => resetRequestPage(csrf, email),
      );
    }
    // looked up after the answer, so that a known email is answered exactly as an unknown one
    afterAnswer(reply, async () => {
      const token = newToken();
      const to = await q.startReset(sql, email, tokenHash(token));
      if (!to) return;
      site.sendMail({
        to,
        subject: 'Choose a new password',
        text: `Follow this link within 30 minutes to choose a new password for your Florida Property API account:\n\n${link('/account/reset/confirm', token)}\n\nThe link works once. If you did not ask for it, ignore this message: your password stays as it is.\n`,
      });
    });
    return site.render(reply, { title: 'Check your email' }, () => resetSentPage(email, site.mailer.mode));
  });

  const resetLink = async (token: unknown) => {
    const found = isToken(token) ? await q.checkLink(sql, tokenHash(token)) : undefined;
    return found && found.purpose !== 'signup' ? { ...found, token: token as string } : null;
  };
  const badLink = (reply: FastifyReply) =>
    site.render(reply, { title: 'Link not valid', status: 400 }, () =>
      invalidLinkPage({ href: '/account/reset', label: 'Ask for a new link' }),
    );
  const passwordTitle = (purpose: string) => (purpose === 'invite' ? 'Set your password' : 'Choose a new password');

  app.get('/reset/confirm', async (request, reply) => {
    const found = await resetLink((request.query as { token?: unknown }).token);
    if (!found) return badLink(reply);
    return site.render(reply, { title: passwordTitle(found.purpose) }, (csrf) => setPasswordPage(csrf, found));
  });

  app.post('/reset/confirm', async (request, reply) => {
    const found = await resetLink(field(request.body, 'token', 100));
    if (!found) return badLink(reply);
    const password = field(request.body, 'password', 4 * MAX_PASSWORD);
    const weak = passwordProblem(password, { email: found.email });
    if (weak) {
      return site.render(reply, { title: passwordTitle(found.purpose), status: 400 }, (csrf) =>
        setPasswordPage(csrf, found, { password: weak }),
      );
    }
    try {
      await q.finishReset(sql, tokenHash(found.token), await hashPassword(password, request.ip));
    } catch (err) {
      if (sqlState(err) === '22023') return badLink(reply);
      throw err;
    }
    site.clearSession(reply);
    return reply.redirect('/account/login?reset=1', 303);
  });

  // ---- password change ----
  app.get('/password', async (request, reply) => {
    if (!site.requireUser(request, reply)) return reply;
    return site.render(reply, { title: 'Change your password' }, (csrf) => changePasswordPage(csrf));
  });

  app.post('/password', async (request, reply) => {
    const user = site.requireUser(request, reply);
    if (!user) return reply;
    const current = field(request.body, 'current', 4 * MAX_PASSWORD);
    const password = field(request.body, 'password', 4 * MAX_PASSWORD);
    const form = (status: number, errors: Errors, notice?: string) =>
      site.render(
        reply,
        { title: 'Change your password', status, notice: notice ? { kind: 'error', text: notice } : null },
        (csrf) => changePasswordPage(csrf, errors),
      );
    const weak = passwordProblem(password, { email: user.email });
    if (weak) return form(400, { password: weak });
    const session = request.siteSession!.hash;
    const { wait, ok } = await site.limits.guard('login', request.ip, user.email, async () =>
      verifyPassword(await q.passwordHashOf(sql, session), current, request.ip),
    );
    if (wait > 0) return form(429, {}, tooMany(wait));
    if (!ok) return form(400, { current: 'This is not your current password.' });
    const next = site.newSession();
    await q.changePassword(sql, session, await hashPassword(password, request.ip), next.hash);
    site.setSession(reply, next.token);
    return reply.redirect('/account?password=changed', 303);
  });
}
