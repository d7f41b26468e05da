// A cookie-keeping client of the account site over app.inject, and the mail the site writes to the log (no SMTP_URL
// in tests), for the site's route tests.
import type { LightMyRequestResponse } from 'fastify';
import type { TestContext } from '../helpers/app.ts';
import { WINDOW_SECONDS } from '../../src/site/throttle.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

/** Every message the site has written to the log so far, oldest first. */
export function mails(ctx: TestContext): Mail[] {
  return ctx.logs.filter((line) => line.includes('"mail":')).map((line) => (JSON.parse(line) as { mail: Mail }).mail);
}

/**
 * The newest message to `to`, waiting for it (mail is sent after the answer, usually within milliseconds); the minute
 * only bounds a hang, however busy the machine.
 */
export async function lastMail(ctx: TestContext, to: string, after = 0): Promise<Mail> {
  const until = Date.now() + 60_000;
  for (;;) {
    const found = mails(ctx)
      .slice(after)
      .filter((m) => m.to === to);
    if (found.length > 0) return found.at(-1)!;
    if (Date.now() > until) throw new Error(`no mail to ${to} within a minute`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A wait until the next throttle window of the site starts, when the current one has less than `roomMs` left. The
 * limits count in fixed 15-minute windows of the clock, so attempts that straddle a window's end start counting again;
 * a test that counts attempts up to a limit waits first, with room for its slowest run on a busy machine (and a file
 * limit that covers the wait).
 */
export const roomInThrottleWindow = (roomMs: number) => async () => {
  const windowMs = WINDOW_SECONDS * 1000;
  const left = windowMs - (Date.now() % windowMs);
  if (left < roomMs) await new Promise((resolve) => setTimeout(resolve, left + 100));
};

/** The first link in a message. */
export const linkIn = (mail: Mail) => /https?:\/\/\S+/.exec(mail.text)![0];
/** A link's path and query, to follow it on the app under test whatever SITE_URL says. */
export const pathOf = (link: string) => {
  const u = new URL(link);
  return `${u.pathname}${u.search}`;
};

export const csrfIn = (body: string) => /name="_csrf" value="([^"]+)"/.exec(body)?.[1];

/** A browser without a browser: keeps cookies, reads the CSRF token of the last page, submits forms. */
export class Agent {
  readonly cookies = new Map<string, string>();
  lastBody = '';

  constructor(
    private readonly ctx: TestContext,
    readonly remoteAddress = '127.0.0.1',
  ) {}

  private keep(res: LightMyRequestResponse) {
    for (const c of res.cookies as { name: string; value: string; expires?: Date; maxAge?: number }[]) {
      if (c.value === '' || c.maxAge === 0 || (c.expires && c.expires.getTime() <= Date.now()))
        this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    if ((res.headers['content-type'] ?? '').toString().startsWith('text/html')) this.lastBody = res.body;
    return res;
  }

  cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(url: string, headers: Record<string, string> = {}) {
    return this.keep(
      await this.ctx.app.inject({
        method: 'GET',
        url,
        remoteAddress: this.remoteAddress,
        headers: { cookie: this.cookieHeader(), ...headers },
      }),
    );
  }

  /** POSTs a form; with `from`, first GETs that page and sends its CSRF token, as a browser would. */
  async post(
    url: string,
    fields: Record<string, string>,
    opts: { from?: string; headers?: Record<string, string> } = {},
  ) {
    const form = { ...fields };
    if (opts.from) {
      await this.get(opts.from);
      const token = csrfIn(this.lastBody);
      if (!token) throw new Error(`no CSRF token on ${opts.from}`);
      form._csrf ??= token;
    }
    return this.keep(
      await this.ctx.app.inject({
        method: 'POST',
        url,
        remoteAddress: this.remoteAddress,
        headers: {
          cookie: this.cookieHeader(),
          'content-type': 'application/x-www-form-urlencoded',
          ...opts.headers,
        },
        payload: new URLSearchParams(form).toString(),
      }),
    );
  }
}

let counter = 0;
/** An email no other test uses. */
export const uniqueEmail = (what = 'user') => `${what}-${process.pid}-${Date.now()}-${++counter}@example.com`;
export const GOOD_PASSWORD = 'correct horse battery staple';

/** Signs up through the emailed link and returns the signed-in agent and the new client's id. */
export async function signUp(
  ctx: TestContext,
  opts: { email?: string; name?: string; password?: string; remoteAddress?: string } = {},
) {
  const email = opts.email ?? uniqueEmail();
  // an address of its own, so that signing up many accounts in a test file stays under the per-address limit
  const agent = new Agent(ctx, opts.remoteAddress ?? `10.250.${(counter >> 8) & 255}.${counter++ & 255}`);
  const before = mails(ctx).length;
  const res = await agent.post(
    '/account/signup',
    { name: opts.name ?? 'Test Co', email, password: opts.password ?? GOOD_PASSWORD },
    { from: '/account/signup' },
  );
  if (res.statusCode !== 200) throw new Error(`signup answered ${res.statusCode}: ${res.body.slice(0, 500)}`);
  const confirm = pathOf(linkIn(await lastMail(ctx, email, before)));
  const done = await agent.post(
    '/account/signup/confirm',
    { token: new URL(`http://x${confirm}`).searchParams.get('token')! },
    { from: confirm },
  );
  if (done.statusCode !== 303) throw new Error(`confirm answered ${done.statusCode}`);
  const [row] = await ctx.db.sql<{ id: string }[]>`SELECT id FROM accounts.clients WHERE email = ${email}`;
  return { agent, email, clientId: row!.id, password: opts.password ?? GOOD_PASSWORD };
}

/** The page's visible text, roughly: tags removed, whitespace collapsed, entities of the escaper decoded. */
export function textOf(body: string): string {
  return body
    .replace(/<script[\s\S]*?<\/script>/g, '')
    .replace(/<\/?(?:strong|code|a|span|em)(?:\s[^>]*)?>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
}
