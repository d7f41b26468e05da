// The signed-in pages: the overview (plan, credits by bucket, this month's usage), keys (create, shown once; revoke
// after a confirmation), usage (chart, table, CSV), the quick start; and the public plans page.
import type { FastifyInstance } from 'fastify';
import { displayKey, generateKey, hashKey } from '../accounts/keys.ts';
import { html } from './html.ts';
import { UUID, field } from './form.ts';
import { keysPage, overviewPage, plansPage, quickstartPage, revokePage, usagePage } from './account-pages.ts';
import { messagePage } from './auth-pages.ts';
import * as q from './queries.ts';
import { csv, dayRange, fileName } from './usage.ts';
import { badRangePage } from './dashboard-pages.ts';
import type { Site } from './index.ts';
import billingRoutes from './billing-routes.ts';
import { billingBlock, shopSection } from './billing-pages.ts';
import { accountBilling } from '../billing/checkout.ts';

export default async function accountRoutes(app: FastifyInstance, opts: { site: Site }) {
  const site = opts.site;
  const { sql, config } = site;
  const base = config.SITE_URL;
  await app.register(billingRoutes, { site }); // /account/billing/*: the shop, when billing is on

  app.get('/', async (request, reply) => {
    const user = site.requireUser(request, reply);
    if (!user) return reply;
    const session = request.siteSession!.hash;
    const [account, credits] = await site.withPending(user.client_id, (live, test) =>
      Promise.all([q.account(sql, session, live, test), q.accountCredits(sql, session, live)]),
    );
    const billing = app.billing ? await accountBilling(app.billing, user.client_id) : null;
    const query = request.query as Record<string, unknown>;
    const notice =
      query.welcome !== undefined
        ? html`Welcome! Your Free Trial has 500 credits. <a href="/account/keys">Create your first key</a> to start.`
        : query.password !== undefined
          ? 'Your password is changed; every other device was signed out.'
          : null;
    return site.render(
      reply,
      { title: account.name, current: '/account', notice: notice ? { kind: 'ok', text: notice } : null },
      () =>
        billing ? html`${overviewPage(account, credits)}${billingBlock(billing)}` : overviewPage(account, credits),
    );
  });

  app.get('/keys', async (request, reply) => {
    if (!site.requireUser(request, reply)) return reply;
    const keys = await q.listKeys(sql, request.siteSession!.hash);
    const revoked = (request.query as Record<string, unknown>).revoked;
    // only a key's display form is echoed, so a crafted link cannot put other words on the page
    const notice =
      typeof revoked === 'string' && /^flprop_(?:live|test)_…[0-9A-Za-z]{4}$/.test(revoked)
        ? `Key ${revoked} is revoked.`
        : null;
    return site.render(
      reply,
      { title: 'API keys', current: '/account/keys', notice: notice ? { kind: 'ok', text: notice } : null },
      (csrf) => keysPage(csrf, base, keys, null),
    );
  });

  app.post('/keys', async (request, reply) => {
    if (!site.requireUser(request, reply)) return reply;
    const session = request.siteSession!.hash;
    const mode = field(request.body, 'mode', 10);
    const name = field(request.body, 'name', 200);
    const failed = async (status: number, message: string, on = 'mode') => {
      const keys = await q.listKeys(sql, session);
      return site.render(reply, { title: 'API keys', current: '/account/keys', status }, (csrf) =>
        keysPage(csrf, base, keys, null, { [on]: message }),
      );
    };
    if (mode !== 'live' && mode !== 'test') return failed(400, 'Choose live or test.');
    const key = generateKey(mode);
    let row: q.KeyRow;
    try {
      row = await q.createKey(sql, session, mode, hashKey(config.API_KEY_SECRET, key), displayKey(key), name);
    } catch (err) {
      const e = err as { code?: string; message: string };
      if (e.code === '22023') return failed(400, e.message, e.message.startsWith('name:') ? 'name' : 'mode');
      throw err;
    }
    const keys = await q.listKeys(sql, session);
    // the one answer that holds the raw key: rendered here, never stored or redirected to
    return site.render(reply, { title: 'API keys', current: '/account/keys', status: 201 }, (csrf) =>
      keysPage(csrf, base, keys, { key, row }),
    );
  });

  const badRange = (reply: Parameters<Site['render']>[0], message: string) =>
    site.render(reply, { title: 'Usage', current: '/account/usage', status: 400 }, () => badRangePage(message));

  const keyOf = async (session: Buffer, id: string) => (UUID.test(id) ? q.getKey(sql, session, id) : undefined);
  const noKey = (reply: Parameters<Site['render']>[0]) =>
    site.render(reply, { title: 'No such key', status: 404, current: '/account/keys' }, () =>
      messagePage('No key of yours has this address.', { href: '/account/keys', label: 'Your keys' }),
    );

  app.get('/keys/:id/revoke', async (request, reply) => {
    if (!site.requireUser(request, reply)) return reply;
    const key = await keyOf(request.siteSession!.hash, (request.params as { id: string }).id);
    if (!key) return noKey(reply);
    if (key.status === 'revoked') return reply.redirect('/account/keys', 303);
    return site.render(reply, { title: 'Revoke a key', current: '/account/keys' }, (csrf) => revokePage(csrf, key));
  });

  app.post('/keys/:id/revoke', async (request, reply) => {
    if (!site.requireUser(request, reply)) return reply;
    const id = (request.params as { id: string }).id;
    const revoked = UUID.test(id) ? await q.revokeKey(sql, request.siteSession!.hash, id) : undefined;
    if (!revoked) return noKey(reply);
    // as the accounts service does: every API process re-reads the client before its next admission
    await app.redis
      .del(`st:${revoked.client_id}`, `st:${revoked.client_id}:test`)
      .catch((err: Error) => request.log.warn({ err: err.message }, 'revocation reaches API processes by NOTIFY only'));
    return reply.redirect(`/account/keys?revoked=${encodeURIComponent(revoked.display)}`, 303);
  });

  app.get('/usage', async (request, reply) => {
    if (!site.requireUser(request, reply)) return reply;
    const range = dayRange(request.query);
    if (typeof range === 'string') return badRange(reply, range);
    const rows = await q.usageDaily(sql, request.siteSession!.hash, range.from, range.to);
    return site.render(reply, { title: 'Usage', current: '/account/usage' }, () => usagePage(range, rows));
  });

  // The site's own download of the account's usage: not the API's CSV output, so no plan gates it.
  app.get('/usage.csv', async (request, reply) => {
    if (!site.requireUser(request, reply)) return reply;
    const range = dayRange(request.query);
    if (typeof range === 'string') return badRange(reply, range);
    const rows = await q.usageDaily(sql, request.siteSession!.hash, range.from, range.to);
    return reply
      .header('Cache-Control', 'no-store')
      .header('Content-Disposition', `attachment; filename="${fileName('usage', range)}"`)
      .type('text/csv; charset=utf-8')
      .send(csv(rows));
  });

  app.get('/quickstart', async (request, reply) => {
    if (!site.requireUser(request, reply)) return reply;
    const keys = await q.listKeys(sql, request.siteSession!.hash);
    return site.render(reply, { title: 'Quick start', current: '/account/quickstart' }, () =>
      quickstartPage(base, keys),
    );
  });

  app.get('/plans', async (request, reply) => {
    const [plans, packs] = await Promise.all([q.plans(sql), q.packs(sql)]);
    const user = request.siteSession?.user ?? null;
    const billing = app.billing && user ? await accountBilling(app.billing, user.client_id) : null;
    const subscribed = billing !== null && (billing.stripe_status !== null || billing.checkouts > 0);
    return site.render(reply, { title: 'Plans and credit packs', current: '/account/plans' }, (csrf) =>
      plansPage(
        plans,
        packs,
        user?.plan ?? null,
        config.SUPPORT_EMAIL,
        app.billing ? shopSection(csrf, plans, packs, user?.plan ?? null, subscribed) : null,
      ),
    );
  });
}
