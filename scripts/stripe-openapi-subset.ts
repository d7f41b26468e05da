// Extracts from Stripe's published OpenAPI description (github.com/stripe/openapi, openapi/spec3.json) the operations
// the billing code calls and every schema they reference, into fixtures/stripe/openapi-subset.json: the local Stripe
// double of test/billing validates requests and its own answers against it, without the network.
//   node --import tsx scripts/stripe-openapi-subset.ts <spec3.json> [source note]
import { readFileSync, writeFileSync } from 'node:fs';

/** The operations src/billing calls (method and path as the description names them). */
export const OPERATIONS: [string, string][] = [
  ['post', '/v1/customers'],
  ['get', '/v1/products/{id}'],
  ['post', '/v1/products'],
  ['get', '/v1/prices'],
  ['post', '/v1/prices'],
  ['post', '/v1/checkout/sessions'],
  ['post', '/v1/billing_portal/sessions'],
  ['post', '/v1/invoiceitems'],
  ['get', '/v1/invoiceitems'],
];

type Json = Record<string, unknown>;

function subset(spec: Json, source: string): Json {
  const schemas = (spec.components as Json).schemas as Record<string, Json>;
  const paths: Record<string, Json> = {};
  const wanted = new Set<string>();
  const visit = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') {
          const name = v.replace('#/components/schemas/', '');
          if (!wanted.has(name)) {
            wanted.add(name);
            visit(schemas[name]);
          }
        } else visit(v);
      }
    }
  };
  for (const [method, path] of OPERATIONS) {
    const op = ((spec.paths as Json)[path] as Json | undefined)?.[method] as Json | undefined;
    if (!op) throw new Error(`the description has no ${method.toUpperCase()} ${path}`);
    const { description: _d, ...kept } = op;
    (paths[path] ??= {})[method] = kept;
    visit(kept);
  }
  wanted.add('error');
  visit(schemas.error);
  // prose is dropped; a property that is itself named `description` (a map of properties' names) is kept
  const strip = (node: unknown, names = false): unknown => {
    if (Array.isArray(node)) return node.map((n) => strip(n));
    if (!node || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node)
        .filter(([k]) => names || (k !== 'description' && k !== 'x-stripeResource' && k !== 'x-stripeOperations'))
        .map(([k, v]) => [k, strip(v, k === 'properties' && !names)]),
    );
  };
  return {
    openapi: spec.openapi,
    info: { version: (spec.info as Json).version, source },
    paths: strip(paths),
    components: { schemas: Object.fromEntries([...wanted].sort().map((n) => [n, strip(schemas[n])])) },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file, source = 'stripe/openapi openapi/spec3.json'] = process.argv.slice(2);
  if (!file) {
    console.error('usage: stripe-openapi-subset.ts <spec3.json> [source note]');
    process.exit(2);
  }
  const out = new URL('../fixtures/stripe/openapi-subset.json', import.meta.url);
  writeFileSync(out, `${JSON.stringify(subset(JSON.parse(readFileSync(file, 'utf8')) as Json, source))}\n`);
  console.log(`wrote ${out.pathname}`);
}
