// The account site under /account: server-rendered pages where a customer signs up, signs in, creates and revokes
// keys and sees credits and usage (docs/site.md). Served by the API process, encapsulated: its cookies, form bodies,
// CSRF check, security headers and HTML error pages apply to /account only. Its database connection is api_site's,
// which may only execute the site.* functions.
import { readFileSync } from 'node:fs';
import { createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import csrf from '@fastify/csrf-protection';
import helmet from '@fastify/helmet';
import type { Config } from '../config.ts';
import { createSql, type Sql } from '../plugins/db.ts';
import type { AuthContext } from '../plugins/auth.ts';
import { periodOf } from '../metering/periods.ts';
import { page, type Html } from './html.ts';
import { createMailer, type Mail, type Mailer } from './mail.ts';
import { messagePage } from './auth-pages.ts';
import { PasswordsBusy } from './passwords.ts';
import { touchSession, type Pending, type SessionRow } from './queries.ts';
import { throttle, type Throttle } from './throttle.ts';
import { isToken, newToken, tokenHash } from './tokens.ts';
import authRoutes from './auth-routes.ts';
import { paymentOrigins } from '../billing/stripe.ts';
import accountRoutes from './account-routes.ts';
import dashboardRoutes from './dashboard-routes.ts';
import { LOW_CREDIT_CHECK_MS, sendLowCreditAlerts } from './dashboard-alerts.ts';
import savedPages from './saved-pages.ts';
import webhookRoutes from './webhook-routes.ts';
import { DIGEST_CHECK_MS, sendDigests } from '../saved-searches/digest.ts';

export const SESSION_COOKIE = 'fl_session';
const CSRF_COOKIE = 'fl_csrf';
/** The cookie outlives no session: 12 hours, the absolute expiry (site.session_lifetime()). */
const SESSION_COOKIE_SECONDS = 12 * 3600;
/** Form bodies are a few fields; anything larger is refused before it is parsed. */
const FORM_BODY_LIMIT = 16 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in person and the SHA-256 of their session token, when the request carries a live session. */
    siteSession: { hash: Buffer; user: SessionRow } | null;
  }
}

export interface RenderOptions {
  title: string;
  status?: number;
  current?: string;
  notice?: { kind: 'ok' | 'error'; text: string | Html } | null;
}

/** What the route modules share. */
export interface Site {
  sql: Sql;
  config: Config;
  mailer: Mailer;
  limits: Throttle;
  /** Sends a page: the layout around `content`, given the CSRF token for its forms; never cached. */
  render: (reply: FastifyReply, opts: RenderOptions, content: (csrf: string) => Html) => FastifyReply;
  /** The signed-in person, or null after answering with a redirect to the sign-in page. */
  requireUser: (request: FastifyRequest, reply: FastifyReply) => SessionRow | null;
  /** Sets the session cookie for a session token whose hash the database holds. */
  setSession: (reply: FastifyReply, token: string) => void;
  clearSession: (reply: FastifyReply) => void;
  /** Sends a message without waiting for the SMTP server, so that the answer takes as long whether or not one is sent. */
  sendMail: (mail: Mail) => void;
  /** Runs `read` with the client's Redis hashes of usage not flushed yet (live and test), as /v1/account/usage does. */
  withPending: <T>(clientId: string, read: (live: Pending, test: Pending) => Promise<T>) => Promise<T>;
  /** A new session token and the hash the database keeps. */
  newSession: () => { token: string; hash: Buffer };
}

const ASSETS: Record<string, { type: string; body: Buffer }> = {
  'site.css': { type: 'text/css; charset=utf-8', body: readFileSync(new URL('./assets/site.css', import.meta.url)) },
  'site.js': {
    type: 'text/javascript; charset=utf-8',
    body: readFileSync(new URL('./assets/site.js', import.meta.url)),
  },
};

/** `work`'s value, or `fallback` after `ms`, whichever comes first; never rejects. */
async function within<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(resolve, ms, fallback)));
  try {
    return await Promise.race([work.catch(() => fallback), late]);
  } finally {
    clearTimeout(timer);
  }
}

export default async function site(app: FastifyInstance, opts: { config: Config }) {
  const { config } = opts;
  const sql = createSql(config.SITE_DATABASE_URL, 2);
  const mailer = createMailer({
    smtpUrl: config.SMTP_URL,
    from: config.MAIL_FROM,
    production: config.NODE_ENV === 'production',
    log: app.log,
  });
  app.addHook('onClose', async () => {
    mailer.close();
    await sql.end({ timeout: 5 });
  });

  await app.register(cookie);
  await app.register(formbody, { bodyLimit: FORM_BODY_LIMIT });
  // A form's token is bound to the session cookie the page was shown with (its SHA-256): a token and CSRF cookie
  // taken from one session are refused with another session's cookie.
  const csrfUser = (request: FastifyRequest) => {
    const token = request.cookies[SESSION_COOKIE];
    return isToken(token) ? tokenHash(token).toString('base64url') : 'signed out';
  };
  await app.register(csrf, {
    cookieKey: CSRF_COOKIE,
    cookieOpts: { path: '/account', sameSite: 'lax', httpOnly: true, secure: 'auto' },
    getUserInfo: csrfUser,
    csrfOpts: { hmacKey: createHmac('sha256', config.API_KEY_SECRET).update('site csrf').digest() },
  });
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        formAction: ["'self'", ...paymentOrigins(config)], // the shop's forms redirect to Stripe
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
      },
    },
    referrerPolicy: { policy: 'no-referrer' },
  });

  const cookieOptions = { path: '/account', httpOnly: true, sameSite: 'lax', secure: 'auto' } as const;
  const ctx: Site = {
    sql,
    config,
    mailer,
    limits: throttle(app.redis, (m) => app.log.warn(m)),
    render(reply, o, content) {
      const csrfToken = reply.generateCsrf({ userInfo: csrfUser(reply.request) });
      const viewer = reply.request.siteSession?.user ?? null;
      const body = page(
        { title: o.title, viewer, csrf: csrfToken, current: o.current, notice: o.notice },
        content(csrfToken),
      );
      return reply
        .code(o.status ?? 200)
        .header('Cache-Control', 'no-store')
        .type('text/html; charset=utf-8')
        .send(body.value);
    },
    requireUser(request, reply) {
      const user = request.siteSession?.user;
      if (user) return user;
      const path = request.url.split('?')[0]!;
      void reply.redirect(`/account/login${path === '/account' ? '' : `?next=${encodeURIComponent(path)}`}`, 303);
      return null;
    },
    setSession(reply, token) {
      reply.setCookie(SESSION_COOKIE, token, { ...cookieOptions, maxAge: SESSION_COOKIE_SECONDS });
    },
    clearSession(reply) {
      reply.clearCookie(SESSION_COOKIE, cookieOptions);
    },
    sendMail(mail) {
      mailer.send(mail).catch((err: Error) => app.log.error({ err: err.message }, 'could not send mail'));
    },
    withPending(clientId, read) {
      // the metering's read gate: this process's usage flush does not move usage while the hashes and the ledger are
      // read, so nothing is counted twice (only the client id and the live mode of an AuthContext are used)
      const subject = { clientId, mode: 'live' } as AuthContext;
      return app.withPendingUsage(subject, periodOf(Date.now()), async () => {
        const [live, test] = await within(
          Promise.all([app.redis.hgetall(`pend:${clientId}`), app.redis.hgetall(`pend:${clientId}:test`)]),
          1000,
          [{}, {}],
        );
        return read(live, test);
      });
    },
    newSession() {
      const token = newToken();
      return { token, hash: tokenHash(token) };
    },
  };

  app.decorateRequest('siteSession', null);
  app.addHook('onRequest', async (request) => {
    if (request.url.startsWith('/account/assets/')) return;
    const token = request.cookies[SESSION_COOKIE];
    if (!isToken(token)) return;
    const hash = tokenHash(token);
    const user = await touchSession(sql, hash);
    if (user) request.siteSession = { hash, user };
  });
  // Every state-changing request (all of them are POSTs) carries the form's CSRF token, but a digest's one-click
  // unsubscribe (RFC 8058), which the token in its address authorizes.
  app.addHook('preHandler', (request, reply, done) => {
    if (request.method === 'POST' && !request.url.startsWith('/account/unsubscribe/'))
      app.csrfProtection(request, reply, done);
    else done();
  });

  const errorPage = (
    reply: FastifyReply,
    status: number,
    title: string,
    text: string,
    link?: { href: string; label: string },
  ) => ctx.render(reply, { title, status }, () => messagePage(text, link));
  app.setErrorHandler((error: Error & { code?: string; statusCode?: number }, request, reply) => {
    if (error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET') {
      return errorPage(
        reply,
        403,
        'Form refused',
        'This form was not accepted: it was not sent from a page of this site, or the page was open for a long time. Go back, reload the page and send it again.',
        { href: '/account', label: 'Go to your account' },
      );
    }
    if (error instanceof PasswordsBusy) {
      void reply.header('Retry-After', String(error.retryAfter));
      return errorPage(
        reply,
        429,
        'Busy',
        `Too many people are signing in at this moment. Wait ${error.retryAfter} seconds, go back and send the form again.`,
      );
    }
    if (error.code === '28000') {
      ctx.clearSession(reply);
      return reply.redirect('/account/login', 303);
    }
    const status = error.statusCode ?? 500;
    if (status === 413) return errorPage(reply, 413, 'Too large', 'That form was larger than any form of this site.');
    if (status >= 400 && status < 500) return errorPage(reply, 400, 'Bad request', 'That request could not be read.');
    request.log.error({ err: error }, 'site request failed');
    return errorPage(
      reply,
      500,
      'Something went wrong',
      'Something went wrong on our side. Please try again in a moment.',
    );
  });
  app.setNotFoundHandler((_request, reply) =>
    errorPage(reply, 404, 'Not found', 'There is no page at this address.', {
      href: '/account',
      label: 'Go to your account',
    }),
  );

  app.get('/assets/:name', async (request, reply) => {
    const asset = ASSETS[(request.params as { name: string }).name];
    if (!asset) return errorPage(reply, 404, 'Not found', 'There is no file at this address.');
    return reply.header('Cache-Control', 'public, max-age=3600').type(asset.type).send(asset.body);
  });

  await app.register(authRoutes, { site: ctx });
  await app.register(accountRoutes, { site: ctx });
  await app.register(dashboardRoutes, { site: ctx });
  await app.register(savedPages, { site: ctx });
  await app.register(webhookRoutes, { site: ctx });
  const alerts = setInterval(() => {
    sendLowCreditAlerts(app.meterSql, ctx.sendMail, config.SITE_URL).catch((err: Error) =>
      app.log.warn({ err: err.message }, 'low-credit check failed; will retry'),
    );
  }, LOW_CREDIT_CHECK_MS);
  alerts.unref();
  app.addHook('onClose', () => clearInterval(alerts));
  const digests = setInterval(() => {
    sendDigests(app.webhooks.sql, mailer, config.SITE_URL).catch((err: Error) =>
      app.log.warn({ err: err.message }, 'saved-search digests failed; will retry'),
    );
  }, DIGEST_CHECK_MS);
  digests.unref();
  app.addHook('onClose', () => clearInterval(digests));
}
