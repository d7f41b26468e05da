// Billing in the API process (docs/billing.md): `app.billing` (null when STRIPE_SECRET_KEY is unset: billing off)
// and the inbound route POST /billing/stripe/webhook, outside /v1 and without an API key: Stripe's signature over
// the raw body is the authentication. A bad or stale signature is a 400 and changes nothing; a verified event is
// applied once (billing.apply_event) and answered 200, a replay too.
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type Stripe from 'stripe';
import { ApiError, badRequest } from '../errors.ts';
import { startBillingWorker } from './worker.ts';
import { createBilling, type Billing, type BillingConfig } from './stripe.ts';

declare module 'fastify' {
  interface FastifyInstance {
    billing: Billing | null;
  }
}

/** Stripe's events are a few kilobytes; anything larger is refused unread. */
const EVENT_BODY_LIMIT = 256 * 1024;
/** How old a signature's timestamp may be (Stripe's own default): older is a replayed capture. */
export const SIGNATURE_TOLERANCE_S = 300;

async function billingPlugin(app: FastifyInstance, opts: { config: BillingConfig }) {
  const billing = createBilling(opts.config);
  app.decorate('billing', billing);
  if (!billing) return;
  // the daily overage job runs in serving processes only (not in an app a test or a script builds without listening)
  let stopWorker: (() => Promise<void>) | null = null;
  app.addHook('onListen', async () => {
    stopWorker = await startBillingWorker(
      billing,
      opts.config.BILLING_DATABASE_URL,
      app.log.child({ component: 'billing' }),
    );
  });
  app.addHook('onClose', async () => {
    await stopWorker?.();
    await billing.sql.end({ timeout: 5 });
  });
  await app.register(async (scope) => {
    // the signature is over the exact bytes Stripe sent: keep them unparsed
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: EVENT_BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    scope.post('/billing/stripe/webhook', async (request, reply) => {
      if (!billing.webhookSecret) {
        throw new ApiError(503, 'service_unavailable', 'STRIPE_WEBHOOK_SECRET is not set: events cannot be verified');
      }
      const signature = request.headers['stripe-signature'];
      if (typeof signature !== 'string' || !Buffer.isBuffer(request.body)) {
        throw badRequest('a Stripe-Signature header and the event body are required');
      }
      let event: Stripe.Event;
      try {
        event = billing.stripe.webhooks.constructEvent(
          request.body,
          signature,
          billing.webhookSecret,
          SIGNATURE_TOLERANCE_S,
        );
      } catch (err) {
        throw badRequest(`the event's signature does not verify: ${(err as Error).message}`);
      }
      let applied: { outcome: string; client_id: string | null };
      try {
        const [row] = await billing.sql<{ outcome: string; client_id: string | null }[]>`
          SELECT outcome, client_id
            FROM billing.apply_event(${billing.sql.json(JSON.parse(request.body.toString('utf8')) as never)})`;
        applied = row!;
      } catch (err) {
        if ((err as { code?: string }).code === '22023') throw badRequest((err as Error).message);
        throw err;
      }
      const { outcome, client_id: clientId } = applied;
      request.log.info({ stripeEvent: event.id, type: event.type, outcome }, 'stripe event');
      // every API process re-reads a changed client at once (NOTIFY accounts_changed, and its balance deleted here)
      if (outcome === 'applied' && clientId) {
        await app.redis.del(`st:${clientId}`, `st:${clientId}:test`).catch(() => {});
      }
      return reply.send({ received: true, outcome });
    });
  });
}

export default fp(billingPlugin, { name: 'billing' });
