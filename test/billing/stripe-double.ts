// A local stand-in for Stripe's API, for the SDK pointed at it through STRIPE_API_BASE. Every request is checked
// against its operation in Stripe's published OpenAPI description (the subset in fixtures/stripe, made by
// scripts/stripe-openapi-subset.ts) and recorded; every answer is checked against the operation's response schema
// before it is sent. A request Stripe would refuse is answered as Stripe answers it (400, invalid_request_error) and
// recorded in `violations`, which a test asserts empty. Idempotency keys are honoured as Stripe does: the same key
// and parameters replay the first answer; the same key with other parameters is refused.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
// @ts-expect-error qs ships no types here
import qs from 'qs';
import { Ajv, type ValidateFunction } from 'ajv';

type Json = Record<string, unknown>;
type Operation = { parameters?: { name: string; in: string; required?: boolean; schema: Json }[] } & Json;

/** OpenAPI 3.0's `nullable: true` as JSON Schema: the schema, or null. */
function jsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(jsonSchema);
  if (!node || typeof node !== 'object') return node;
  const { nullable, ...rest } = node as Json;
  const out = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, jsonSchema(v)]));
  return nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}

const SPEC = jsonSchema(
  JSON.parse(readFileSync(new URL('../../fixtures/stripe/openapi-subset.json', import.meta.url), 'utf8')),
) as { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Json> } };

const ajv = new Ajv({ strict: false, coerceTypes: true, allErrors: false, validateFormats: false });
ajv.addSchema({ components: SPEC.components }, 'spec');
const compile = (schema: Json) =>
  ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"spec#/components/')) as Json);
// responses are checked without coercion: what is sent is what Stripe's description allows, as is
const strict = new Ajv({ strict: false, coerceTypes: false, allErrors: false, validateFormats: false });
strict.addSchema({ components: SPEC.components }, 'spec');
const compileStrict = (schema: Json) =>
  strict.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"spec#/components/')) as Json);

interface Route {
  method: string;
  template: string;
  pattern: RegExp;
  body?: ValidateFunction;
  query: { name: string; required: boolean; validate: ValidateFunction }[];
  response: ValidateFunction;
}

const routes: Route[] = Object.entries(SPEC.paths).flatMap(([template, methods]) =>
  Object.entries(methods).map(([method, op]) => {
    const form = (op.requestBody as Json | undefined)?.content as Record<string, { schema: Json }> | undefined;
    const ok = ((op.responses as Json)['200'] as { content: Record<string, { schema: Json }> }).content[
      'application/json'
    ]!.schema;
    return {
      method: method.toUpperCase(),
      template,
      pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '([^/]+)')}$`),
      body: form?.['application/x-www-form-urlencoded']
        ? compile(form['application/x-www-form-urlencoded'].schema)
        : undefined,
      query: (op.parameters ?? [])
        .filter((p) => p.in === 'query')
        .map((p) => ({ name: p.name, required: p.required === true, validate: compile(p.schema) })),
      response: compileStrict(ok),
    };
  }),
);

export interface Recorded {
  method: string;
  path: string;
  operation: string;
  params: Json;
  idempotencyKey: string | undefined;
  stripeVersion: string | undefined;
  replayed: boolean;
}

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
const now = () => Math.floor(Date.now() / 1000);

export class StripeDouble {
  readonly requests: Recorded[] = [];
  readonly violations: string[] = [];
  readonly customers = new Map<string, Json>();
  readonly products = new Map<string, Json>();
  readonly prices = new Map<string, Json>();
  readonly sessions = new Map<string, Json>();
  readonly invoiceItems = new Map<string, Json>();
  private readonly idempotent = new Map<string, { params: string; status: number; body: Json }>();
  /** Called after a request is recorded and before it is answered (a test's chance to act in between). */
  beforeAnswer: ((r: Recorded) => Promise<void> | void) | null = null;
  private server: Server | null = null;
  base = '';

  async start(port: number): Promise<void> {
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((err: Error) => {
        this.violations.push(`double failed: ${err.message}`);
        res.writeHead(500).end();
      });
    });
    this.server.listen(port, '127.0.0.1');
    await once(this.server, 'listening');
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server!.close(resolve));
    this.server = null;
  }

  /** Requests to one operation, e.g. 'POST /v1/invoiceitems'. */
  calls(operation: string): Recorded[] {
    return this.requests.filter((r) => r.operation === operation);
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://double');
    if (req.method === 'GET' && url.pathname.startsWith('/checkout/')) {
      // the hosted Checkout page, as far as a browser test needs one
      const session = this.sessions.get(url.pathname.slice('/checkout/'.length));
      res.writeHead(session ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><title>Stripe Checkout (test double)</title><h1>Checkout ${session?.id ?? 'unknown'}</h1>`,
      );
      return;
    }
    if (!url.pathname.startsWith('/v1/')) {
      res.writeHead(404).end(); // a browser's own requests (favicon.ico): not API calls
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const route = routes.find((r) => r.method === req.method && r.pattern.test(url.pathname));
    if (!route) return this.refuse(res, 404, `Unrecognized request URL (${req.method}: ${url.pathname})`);
    const operation = `${route.method} ${route.template}`;
    const params = (
      route.method === 'GET' ? qs.parse(url.search.slice(1)) : qs.parse(raw, { arrayLimit: 100 })
    ) as Json;
    const record: Recorded = {
      method: route.method,
      path: url.pathname,
      operation,
      params: JSON.parse(JSON.stringify(params)) as Json,
      idempotencyKey: req.headers['idempotency-key'] as string | undefined,
      stripeVersion: req.headers['stripe-version'] as string | undefined,
      replayed: false,
    };
    this.requests.push(record);
    if (!/^Bearer (sk|rk)_test_/.test(req.headers.authorization ?? '')) {
      return this.refuse(res, 401, 'Invalid API Key provided', operation);
    }
    const problem = this.check(route, params);
    if (problem) return this.refuse(res, 400, problem, operation);
    const key = record.idempotencyKey;
    const previous = key ? this.idempotent.get(key) : undefined;
    if (previous) {
      if (previous.params !== raw) {
        return this.refuse(
          res,
          400,
          `Keys for idempotent requests can only be used with the same parameters`,
          operation,
          'idempotency_error',
        );
      }
      record.replayed = true;
      await this.beforeAnswer?.(record);
      res.writeHead(previous.status, { 'content-type': 'application/json', 'idempotent-replayed': 'true' });
      return res.end(JSON.stringify(previous.body));
    }
    const match = route.pattern.exec(url.pathname)!;
    const [status, body] = this.answer(operation, params, match.slice(1));
    if (status === 200 && !route.response(body)) {
      this.violations.push(
        `${operation}: the double's answer is not one Stripe's description allows: ${ajvText(route.response)}`,
      );
    }
    if (key) this.idempotent.set(key, { params: raw, status, body });
    await this.beforeAnswer?.(record);
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') });
    res.end(JSON.stringify(body));
  }

  private check(route: Route, params: Json): string | null {
    if (route.method !== 'GET') {
      if (route.body && !route.body(params)) return `Invalid request: ${ajvText(route.body)}`;
      return null;
    }
    for (const name of Object.keys(params)) {
      if (!route.query.some((q) => q.name === name)) return `Received unknown parameter: ${name}`;
    }
    for (const q of route.query) {
      if (params[q.name] === undefined) {
        if (q.required) return `Missing required param: ${q.name}`;
        continue;
      }
      const holder = { v: params[q.name] };
      if (!q.validate(holder.v)) return `Invalid ${q.name}: ${ajvText(q.validate)}`;
    }
    return null;
  }

  private refuse(res: ServerResponse, status: number, message: string, operation = '', type = 'invalid_request_error') {
    this.violations.push(`${operation || 'request'}: ${message}`);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { type, message } }));
  }

  private answer(operation: string, p: Json, args: string[]): [number, Json] {
    const meta = (p.metadata ?? {}) as Json;
    switch (operation) {
      case 'POST /v1/customers': {
        const c = customer(p, meta);
        this.customers.set(c.id as string, c);
        return [200, c];
      }
      case 'POST /v1/products': {
        const pr = product(p, meta);
        this.products.set(pr.id as string, pr);
        return [200, pr];
      }
      case 'GET /v1/products/{id}': {
        const pr = this.products.get(args[0]!);
        return pr ? [200, pr] : [404, { error: { type: 'invalid_request_error', message: 'No such product' } }];
      }
      case 'POST /v1/prices': {
        if (!this.products.has(p.product as string)) {
          return [
            400,
            { error: { type: 'invalid_request_error', message: `No such product: '${String(p.product)}'` } },
          ];
        }
        if (p.transfer_lookup_key === 'true') {
          for (const old of this.prices.values()) if (old.lookup_key === p.lookup_key) old.lookup_key = null;
        } else if ([...this.prices.values()].some((o) => o.lookup_key === p.lookup_key)) {
          return [400, { error: { type: 'invalid_request_error', message: 'A price with this lookup key exists' } }];
        }
        const pr = price(p, meta);
        this.prices.set(pr.id as string, pr);
        return [200, pr];
      }
      case 'GET /v1/prices': {
        const keys = (p.lookup_keys ?? []) as string[];
        const data = [...this.prices.values()].filter(
          (x) =>
            (keys.length === 0 || keys.includes(x.lookup_key as string)) &&
            (p.active === undefined || String(x.active) === p.active),
        );
        return [200, list('/v1/prices', data)];
      }
      case 'POST /v1/checkout/sessions': {
        if (!this.customers.has(p.customer as string)) {
          return [
            400,
            { error: { type: 'invalid_request_error', message: `No such customer: '${String(p.customer)}'` } },
          ];
        }
        const items = p.line_items as { price: string }[];
        const pr = this.prices.get(items[0]!.price);
        if (!pr)
          return [400, { error: { type: 'invalid_request_error', message: `No such price: '${items[0]!.price}'` } }];
        if ((pr.type === 'recurring') !== (p.mode === 'subscription')) {
          return [400, { error: { type: 'invalid_request_error', message: 'The price type does not fit the mode' } }];
        }
        const s = session(p, meta, this.base, pr);
        this.sessions.set(s.id as string, s);
        return [200, s];
      }
      case 'POST /v1/billing_portal/sessions':
        if (!this.customers.has(p.customer as string)) {
          return [
            400,
            { error: { type: 'invalid_request_error', message: `No such customer: '${String(p.customer)}'` } },
          ];
        }
        return [200, portal(p, this.base)];
      case 'POST /v1/invoiceitems': {
        if (!this.customers.has(p.customer as string)) {
          return [
            400,
            { error: { type: 'invalid_request_error', message: `No such customer: '${String(p.customer)}'` } },
          ];
        }
        const ii = invoiceItem(p, meta);
        this.invoiceItems.set(ii.id as string, ii);
        return [200, ii];
      }
      case 'GET /v1/invoiceitems': {
        const gte = Number((p.created as Json | undefined)?.gte ?? 0);
        const data = [...this.invoiceItems.values()].filter(
          (x) => (!p.customer || x.customer === p.customer) && (x.date as number) >= gte,
        );
        return [200, list('/v1/invoiceitems', data.reverse())];
      }
      default:
        return [404, { error: { type: 'invalid_request_error', message: `not served by the double: ${operation}` } }];
    }
  }

  /** The Checkout Session as Stripe puts it in a completion event: paid, with its subscription or payment intent. */
  completedSession(sessionId: string): Json {
    const s = this.sessions.get(sessionId);
    if (!s) throw new Error(`no session ${sessionId}`);
    return {
      ...s,
      status: 'complete',
      payment_status: 'paid',
      ...(s.mode === 'subscription' ? { subscription: id('sub') } : { payment_intent: id('pi') }),
    };
  }
}

function ajvText(v: ValidateFunction): string {
  return (v.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`).join('; ');
}

const list = (url: string, data: Json[]): Json => ({ object: 'list', data, has_more: false, url });

function customer(p: Json, meta: Json): Json {
  return {
    id: id('cus'),
    object: 'customer',
    created: now(),
    livemode: false,
    email: (p.email as string) ?? null,
    name: (p.name as string) ?? null,
    metadata: meta,
    balance: 0,
    currency: null,
    default_source: null,
    delinquent: false,
    description: null,
    discount: null,
    invoice_prefix: randomBytes(4).toString('hex').toUpperCase(),
    invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
    phone: null,
    preferred_locales: [],
    shipping: null,
    tax_exempt: 'none',
    test_clock: null,
  };
}

function product(p: Json, meta: Json): Json {
  return {
    id: id('prod'),
    object: 'product',
    active: true,
    created: now(),
    updated: now(),
    livemode: false,
    name: p.name,
    description: null,
    images: [],
    metadata: meta,
    package_dimensions: null,
    shippable: null,
    statement_descriptor: null,
    tax_code: null,
    unit_label: null,
    url: null,
    default_price: null,
    attributes: [],
    type: 'service',
  };
}

function price(p: Json, meta: Json): Json {
  const recurring = p.recurring as Json | undefined;
  return {
    id: id('price'),
    object: 'price',
    active: true,
    billing_scheme: 'per_unit',
    created: now(),
    currency: p.currency,
    livemode: false,
    lookup_key: (p.lookup_key as string) ?? null,
    metadata: meta,
    nickname: null,
    product: p.product,
    recurring: recurring
      ? {
          aggregate_usage: null,
          interval: recurring.interval,
          interval_count: 1,
          trial_period_days: null,
          usage_type: 'licensed',
        }
      : null,
    tax_behavior: 'unspecified',
    tiers_mode: null,
    transform_quantity: null,
    type: recurring ? 'recurring' : 'one_time',
    unit_amount: Number(p.unit_amount),
    unit_amount_decimal: String(p.unit_amount),
  };
}

function session(p: Json, meta: Json, base: string, pr: Json): Json {
  const sid = `cs_test_${randomBytes(16).toString('hex')}`;
  return {
    id: sid,
    object: 'checkout.session',
    after_expiration: null,
    allow_promotion_codes: null,
    amount_subtotal: pr.unit_amount,
    amount_total: pr.unit_amount,
    automatic_tax: { enabled: false, status: null },
    billing_address_collection: null,
    cancel_url: p.cancel_url,
    client_reference_id: (p.client_reference_id as string) ?? null,
    consent: null,
    consent_collection: null,
    currency: 'usd',
    customer: p.customer,
    customer_creation: null,
    customer_details: null,
    customer_email: null,
    expires_at: now() + 86400,
    livemode: false,
    locale: null,
    metadata: meta,
    mode: p.mode,
    payment_intent: null,
    payment_link: null,
    payment_method_options: null,
    payment_method_types: ['card'],
    payment_status: 'unpaid',
    phone_number_collection: { enabled: false },
    recovered_from: null,
    setup_intent: null,
    shipping: null,
    shipping_address_collection: null,
    shipping_options: [],
    shipping_rate: null,
    status: 'open',
    submit_type: null,
    subscription: null,
    success_url: p.success_url,
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    url: `${base}/checkout/${sid}`,
  };
}

function portal(p: Json, base: string): Json {
  const pid = id('bps');
  return {
    id: pid,
    object: 'billing_portal.session',
    configuration: id('bpc'),
    created: now(),
    customer: p.customer,
    livemode: false,
    locale: null,
    on_behalf_of: null,
    return_url: p.return_url,
    url: `${base}/portal/${pid}`,
  };
}

function invoiceItem(p: Json, meta: Json): Json {
  const t = now();
  return {
    id: id('ii'),
    object: 'invoiceitem',
    amount: Number(p.amount),
    currency: p.currency,
    customer: p.customer,
    date: t,
    description: (p.description as string) ?? null,
    discountable: true,
    discounts: null,
    invoice: null,
    livemode: false,
    metadata: meta,
    period: { end: t, start: t },
    price: null,
    proration: false,
    quantity: 1,
    subscription: null,
    tax_rates: null,
    test_clock: null,
    unit_amount: Number(p.amount),
    unit_amount_decimal: String(p.amount),
  };
}
