// A test app with billing on, pointed at a local Stripe double, and Stripe events signed as Stripe signs them.
import Stripe from 'stripe';
import type { LightMyRequestResponse } from 'fastify';
import type { Test } from 'tap';
import { buildTestApp, type TestContext } from '../helpers/app.ts';
import { freePorts } from '../helpers/processes.ts';
import { syncCatalogue } from '../../src/billing/catalogue.ts';
import { StripeDouble } from './stripe-double.ts';
import { eventFixture } from './events.ts';

export const SECRET_KEY = 'sk_test_billingdouble0123456789';
export const WEBHOOK_SECRET = 'whsec_billingtestsecret0123456789';

type Teardown = Pick<Test, 'teardown' | 'same'>;

export interface BillingContext extends TestContext {
  stripe: StripeDouble;
  env: Record<string, string>;
  /** Posts an event to the webhook route, signed with the SDK's test header (or `signature` as given). */
  post: (
    event: object,
    opts?: { signature?: string; timestamp?: number; secret?: string },
  ) => Promise<LightMyRequestResponse>;
  event: typeof eventFixture;
  clean: (t: Teardown) => void;
}

const sdk = new Stripe(SECRET_KEY);

export function sign(payload: string, opts: { timestamp?: number; secret?: string } = {}) {
  return sdk.webhooks.generateTestHeaderString({
    payload,
    secret: opts.secret ?? WEBHOOK_SECRET,
    ...(opts.timestamp !== undefined ? { timestamp: opts.timestamp } : {}),
  });
}

/**
 * A billing app on its own database and Redis prefix, its catalogue synced into the double (stopped at teardown).
 * A test ends with `clean(t)`: no request the double saw is one Stripe would refuse.
 */
export async function billingApp(t: Teardown, env: Record<string, string> = {}): Promise<BillingContext> {
  const stripe = new StripeDouble();
  const [port] = await freePorts(1);
  await stripe.start(port!);
  t.teardown(() => stripe.stop());
  const billingEnv = {
    STRIPE_SECRET_KEY: SECRET_KEY,
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_BASE: stripe.base,
    ...env,
  };
  const ctx = await buildTestApp(t, billingEnv);
  // billing's connection as api_billing on this file's database
  await syncCatalogue(ctx.db.sql, ctx.app.billing!.stripe);
  const post = (event: object, opts: { signature?: string; timestamp?: number; secret?: string } = {}) => {
    const payload = JSON.stringify(event);
    return ctx.app.inject({
      method: 'POST',
      url: '/billing/stripe/webhook',
      headers: { 'content-type': 'application/json', 'stripe-signature': opts.signature ?? sign(payload, opts) },
      payload,
    });
  };
  const clean = (tt: Teardown) => tt.same(stripe.violations, [], 'no request Stripe would refuse');
  return { ...ctx, stripe, env: billingEnv, post, event: eventFixture, clean };
}
