// The front door: / and /status. A browser gets a page for people; a program (Accept naming JSON, */* or nothing)
// gets JSON: at / an index of where everything is, at /status the readiness probe's answer. The plans on the page come
// from the plan table through site.plans(), on a connection of the account site's role, read at most once a minute.
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Config } from '../config.ts';
import { createSql } from '../plugins/db.ts';
import { MCP_PATH } from '../mcp/server.ts';
import { chromeAssets, PRODUCT, sendPage } from '../site/chrome.ts';
import { plans, type PlanRow } from '../site/queries.ts';
import { API_VERSION } from '../docs-site/version.ts';
import { prefersHtml } from './negotiate.ts';
import { landingPage, statusPage, type Readiness } from './page.ts';

const PLANS_TTL_MS = 60_000;

/** What a program finds at /: every public entry point, relative to this server. */
export const INDEX = {
  name: PRODUCT,
  description:
    "Florida parcels, recorded sales and tax certificates from the counties' public rolls, over REST and MCP.",
  version: API_VERSION,
  links: {
    openapi: '/v1/openapi.json',
    docs: '/docs',
    reference: '/docs/reference',
    quick_start: '/docs/guides/quick-start',
    changelog: '/docs/changelog',
    api: '/v1',
    mcp: MCP_PATH,
    explorer: '/explorer',
    signup: '/account/signup',
    account: '/account',
    status: '/status',
  },
};

const landing: FastifyPluginAsync<{ config: Config }> = async (app, { config }) => {
  const sql = createSql(config.SITE_DATABASE_URL, 1);
  app.addHook('onClose', async () => sql.end({ timeout: 5 }));
  await app.register(chromeAssets);

  let cache: { at: number; rows: PlanRow[] } | null = null;
  const planRows = async () => {
    if (!cache || Date.now() - cache.at > PLANS_TTL_MS) cache = { at: Date.now(), rows: await plans(sql) };
    return cache.rows;
  };
  const negotiated = (reply: FastifyReply) => reply.header('Vary', 'Accept');

  const hidden = { schema: { hide: true } };
  app.get('/', hidden, async (request, reply) => {
    negotiated(reply);
    if (!prefersHtml(request.headers.accept)) return INDEX;
    return sendPage(reply, landingPage(await planRows(), config.SITE_URL));
  });
  app.get('/status', hidden, async (request, reply) => {
    negotiated(reply);
    const ready = await app.inject({ url: '/readyz' });
    const body = ready.json() as Readiness;
    if (!prefersHtml(request.headers.accept)) return reply.code(ready.statusCode).send(body);
    return sendPage(reply, statusPage(body, new Date()), ready.statusCode);
  });
};
export default landing;
