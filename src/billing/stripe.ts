// The Stripe client (the official SDK, its API version pinned here) and billing's own database connection.
import Stripe from 'stripe';
import postgres from 'postgres';
import type { Config } from '../config.ts';

/** The API version every request names; the SDK's types describe this one. */
export const STRIPE_API_VERSION = '2026-10-28.endive' as const;

export type BillingConfig = Pick<
  Config,
  'STRIPE_SECRET_KEY' | 'STRIPE_WEBHOOK_SECRET' | 'STRIPE_API_BASE' | 'BILLING_DATABASE_URL' | 'SITE_URL'
>;

export interface Billing {
  stripe: Stripe;
  /** As api_billing: executes billing.* functions only. */
  sql: postgres.Sql;
  webhookSecret: string | undefined;
  siteUrl: string;
}

/** The SDK pointed at Stripe, or at STRIPE_API_BASE (host, port and protocol) when set. */
export function stripeClient(secretKey: string, apiBase?: string): Stripe {
  const base = apiBase ? new URL(apiBase) : null;
  return new Stripe(secretKey, {
    apiVersion: STRIPE_API_VERSION,
    maxNetworkRetries: 2,
    timeout: 20_000,
    ...(base
      ? {
          host: base.hostname,
          port: base.port || (base.protocol === 'https:' ? 443 : 80),
          protocol: base.protocol === 'https:' ? 'https' : 'http',
        }
      : {}),
  });
}

/** Billing's clients, or null when STRIPE_SECRET_KEY is not set (billing off). */
export function createBilling(config: BillingConfig, poolSize = 2): Billing | null {
  if (!config.STRIPE_SECRET_KEY) return null;
  return {
    stripe: stripeClient(config.STRIPE_SECRET_KEY, config.STRIPE_API_BASE),
    sql: postgres(config.BILLING_DATABASE_URL, {
      max: poolSize,
      idle_timeout: 60,
      onnotice: () => {},
      connection: { application_name: 'florida-billing' },
    }),
    webhookSecret: config.STRIPE_WEBHOOK_SECRET,
    siteUrl: config.SITE_URL,
  };
}

/** Our plan or pack behind a Stripe price's lookup key. */
export const lookupKey = (kind: 'plan' | 'pack', item: string) => `${kind}:${item}`;

/** Where the site's payment forms lead (Checkout, the Customer Portal): the site's CSP allows these form targets. */
export function paymentOrigins(config: Pick<Config, 'STRIPE_SECRET_KEY' | 'STRIPE_API_BASE'>): string[] {
  if (!config.STRIPE_SECRET_KEY) return [];
  return config.STRIPE_API_BASE
    ? [new URL(config.STRIPE_API_BASE).origin]
    : ['https://checkout.stripe.com', 'https://billing.stripe.com'];
}
