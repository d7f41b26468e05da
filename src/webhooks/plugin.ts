// The API process's side of webhooks: the api_webhooks connection the management routes write through, and the
// settings they check URLs and seal secrets with. The request path (api_reader) never touches webhooks.
import fp from 'fastify-plugin';
import { createSql, type Sql } from '../plugins/db.ts';
import { LOOPBACK_WARNING, type WebhookSettings } from './settings.ts';

export interface WebhookService {
  /** As api_webhooks: only the SECURITY DEFINER functions of sql/webhooks. */
  sql: Sql;
  settings: WebhookSettings;
}

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: WebhookService;
  }
}

export default fp<{ settings: WebhookSettings }>(
  async (app, opts) => {
    if (opts.settings.allowLoopback) app.log.warn(LOOPBACK_WARNING);
    const sql = createSql(opts.settings.databaseUrl, 2);
    app.decorate('webhooks', { sql, settings: opts.settings });
    app.addHook('onClose', async () => {
      await sql.end({ timeout: 5 });
    });
  },
  { name: 'webhooks' },
);
