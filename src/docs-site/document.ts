// What the OpenAPI document adds to what the route schemas say: response descriptions that name what each response is,
// the MCP endpoint (a JSON-RPC route the schemas do not describe), tags, and code samples for every operation. Applied
// once, when @fastify/swagger first builds the document.
import { codeSamples, type Operation } from './code-samples.ts';

/** Human names of the response schemas, by their title (their TypeBox $id or title). */
const NAMES: Record<string, [string, string]> = {
  AccountUsage: ['Account usage', 'account usage'],
  CountyRecord: ['County', 'counties'],
  ParcelHit: ['Parcel', 'parcels'],
  ParcelSuggestion: ['Parcel suggestion', 'parcel suggestions'],
  SaleHit: ['Sale', 'sales'],
  DelinquencyHit: ['Tax delinquency record', 'tax delinquency records'],
  DelinquencyCounts: ['Tax delinquency counts by status', 'tax delinquency counts'],
  TaxDelinquencySource: ['Tax delinquency source', 'tax delinquency sources'],
  DelinquencyFreshness: ['Tax delinquency freshness', 'freshness'],
  TileJson: ['TileJSON 3.0.0 description of the parcel tiles', 'tile descriptions'],
  WebhookEndpoint: ['Webhook endpoint', 'webhook endpoints'],
  WebhookEndpointWithSecret: ['Webhook endpoint with its signing secret (shown only here)', 'webhook endpoints'],
  WebhookTestResult: ['Test event queued', 'test events'],
  WebhookDelivery: ['Webhook delivery', 'webhook deliveries'],
};

const ERRORS: Record<string, string> = {
  '400': 'Bad request: a parameter is missing or invalid (error envelope, free)',
  '401': 'Unauthorized: no valid API key (error envelope, free)',
  '402': 'Payment required: no credits left on the Free Trial (error envelope, free)',
  '403': 'Forbidden: the plan does not include this surface or feature (error envelope, free)',
  '404': 'Not found (error envelope, free)',
  '409': 'Conflict (error envelope, free)',
  '413': 'Payload too large (error envelope, free)',
  '429': 'Rate limited or monthly grant used up: retry after the Retry-After header (error envelope, free)',
  '500': 'Internal error, logged with the request id (error envelope, free)',
  '503': 'Service unavailable: retry with backoff (error envelope, free)',
};

interface Schema {
  title?: string;
  $ref?: string;
  type?: string;
  items?: Schema;
  properties?: Record<string, Schema>;
}

interface Document {
  info: { description?: string };
  paths: Record<string, Record<string, Operation & { responses?: Record<string, { description?: string }> }>>;
  components?: { schemas?: Record<string, Schema> };
  tags?: { name: string; description: string }[];
}

/** What a 2xx response is, from the schema of its `data`: "Parcel", "A page of sales". */
function successName(doc: Document, schema: Schema | undefined): string | null {
  const resolve = (s: Schema | undefined): Schema | undefined =>
    s?.$ref ? doc.components?.schemas?.[s.$ref.split('/').pop()!] : s;
  const data = resolve(schema?.properties?.data);
  if (!data) return null;
  const paged = Boolean(schema?.properties?.pagination);
  if (data.type === 'array') {
    const item = resolve(data.items);
    const plural = item?.title ? NAMES[item.title]?.[1] : undefined;
    if (!plural) return null;
    return paged ? `A page of ${plural}, with pagination` : `All ${plural}`;
  }
  return data.title ? (NAMES[data.title]?.[0] ?? null) : null;
}

/** A 2xx whose data has no known name: a GET's summary says what it returns; other methods say what was done. */
function fallbackName(method: string, code: string, op: Operation): string | null {
  const summary = typeof op.summary === 'string' ? op.summary : null;
  if (!summary) return null;
  if (method === 'get') return summary;
  const done = summary[0]!.toLowerCase() + summary.slice(1);
  return `${code === '201' ? 'Created' : code === '202' ? 'Accepted' : 'Done'}: ${done}`;
}

/** Repository paths in descriptions (docs/formats.md#x) become the served guide that covers them. */
const SERVED_DOCS: Record<string, string> = {
  'formats.md': '/docs/guides/formats-and-tiles',
  'webhooks.md': '/docs/guides/webhooks',
  'search.md': '/docs/guides/search',
  'metering.md': '/docs/guides/rate-limits-and-credits',
  'certificates.md': '/docs/guides/tax-certificates',
};
const servedLink = (text: string) =>
  text.replace(/\bdocs\/([a-z-]+\.md)(#[\w-]+)?/g, (_m, file: string) => SERVED_DOCS[file] ?? '/docs');

/** Every `description` of the document, at any depth, through `servedLink`. */
function serveLinks(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(serveLinks);
  if (!node || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'description' && typeof value === 'string') (node as Record<string, string>)[key] = servedLink(value);
    else serveLinks(value);
  }
}

function describeResponses(
  doc: Document,
  method: string,
  op: Operation & { responses?: Record<string, { description?: string }> },
) {
  for (const [code, response] of Object.entries(op.responses ?? {})) {
    const stock = !response.description || response.description === 'Default Response';
    if (ERRORS[code]) {
      if (stock) response.description = ERRORS[code];
      continue;
    }
    const content = (response as { content?: Record<string, { schema?: Schema }> }).content;
    const name = successName(doc, content?.['application/json']?.schema) ?? fallbackName(method, code, op);
    if (code === '204' && stock) response.description = 'Done: no content';
    else if (name) response.description = stock ? name : `${name}. ${response.description}`;
  }
}

/** What each group of operations is, by the tag its routes give it. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  parcels: 'Parcels: search, lookup by id or parcel id, and each parcel’s sales.',
  sales: 'Recorded sales across parcels.',
  'tax-delinquencies': 'Delinquent taxes and tax certificates from the counties’ feeds.',
  counties: 'The 67 counties and what each holds.',
  tiles: 'Vector tiles of the parcels, for maps.',
  webhooks: 'Endpoints that receive signed events when records change.',
  account: 'Your credits and usage.',
  mcp: 'The Model Context Protocol endpoint for AI agents.',
};

/** POST /api/mcp, described for people and client generators: the route itself is hidden from the schemas. */
const MCP_OPERATION = {
  summary: 'MCP endpoint (JSON-RPC over HTTP) for AI agents',
  description:
    'The Model Context Protocol’s streamable HTTP transport, stateless, with JSON responses: send one JSON-RPC ' +
    'message per POST (`initialize`, `tools/list`, `tools/call`, `ping`) with the same key as REST. A successful ' +
    '`tools/call` costs 1 credit; the rest is free but counts against the per-minute limit. `tools/list` names every ' +
    'tool; each returns `structuredContent` equal to its REST twin’s `data`. See the [MCP guide](/docs/guides/mcp).',
  operationId: 'mcp',
  tags: ['mcp'],
  requestBody: {
    required: true,
    content: {
      'application/json': {
        schema: {
          type: 'object',
          title: 'JsonRpcRequest',
          required: ['jsonrpc', 'method'],
          properties: {
            jsonrpc: { type: 'string', enum: ['2.0'] },
            id: { type: ['string', 'integer'] },
            method: { type: 'string', examples: ['tools/list', 'tools/call', 'initialize'] },
            params: { type: 'object', additionalProperties: true },
          },
        },
        example: {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'get_county', arguments: { county: 'miami-dade' } },
        },
      },
    },
  },
  parameters: [
    {
      name: 'accept',
      in: 'header',
      required: false,
      description: 'MCP clients send `application/json, text/event-stream`; the answer is JSON.',
      schema: { type: 'string', default: 'application/json, text/event-stream' },
    },
  ],
  responses: {
    '200': {
      description: 'JSON-RPC response: a result, or a JSON-RPC error (a tool’s failure is a result with isError)',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            title: 'JsonRpcResponse',
            required: ['jsonrpc'],
            properties: {
              jsonrpc: { type: 'string', enum: ['2.0'] },
              id: { type: ['string', 'integer', 'null'] },
              result: { type: 'object', additionalProperties: true },
              error: {
                type: 'object',
                properties: { code: { type: 'integer' }, message: { type: 'string' } },
              },
            },
          },
        },
      },
    },
    '202': { description: 'Accepted: a notification, which has no answer' },
  } as Record<string, unknown>,
};

/** Adds to a freshly built document, in place; `baseUrl` is where the samples send their requests. */
export function completeDocument<T>(document: T, baseUrl: string): T {
  const doc = document as unknown as Document;
  const mcp = structuredClone(MCP_OPERATION);
  // MCP's refusals before JSON-RPC (a bad key, a body past the limits) are the REST error envelope: the same 400s
  const rest400 = Object.values(doc.paths)
    .flatMap((ops) => Object.values(ops))
    .find((op) => op.responses?.['400'])?.responses?.['400'];
  for (const code of ['400', '401', '429'])
    if (rest400) mcp.responses[code] = { ...rest400, description: ERRORS[code] };
  doc.paths['/api/mcp'] = { post: mcp as unknown as Operation };
  const tags: string[] = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      for (const tag of (op.tags as string[] | undefined) ?? []) if (!tags.includes(tag)) tags.push(tag);
      describeResponses(doc, method, op);
      op['x-codeSamples'] = codeSamples(baseUrl, path, method, op);
    }
  }
  doc.tags = tags.map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? '' }));
  serveLinks(doc);
  return document;
}
