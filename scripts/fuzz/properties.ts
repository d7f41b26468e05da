// Hostile fuzzing shared by test/hostile/fuzz.test.ts and scripts/fuzz.ts: request arbitraries built from the app's
// own OpenAPI document and tools/list, and the checks every answer must pass.
import fc from 'fast-check';

/** How a request presents its key; the key itself is added at send time, so reproductions never contain it. */
export type Auth =
  'bearer' | 'bearer-lowercase' | 'x-api-key' | 'both' | 'none' | 'malformed' | 'unknown' | 'duplicate';

export interface FuzzRequest {
  kind: 'rest' | 'mcp';
  method: 'GET' | 'POST';
  /** Path and query exactly as sent (printable ASCII: everything else is percent-encoded). */
  url: string;
  /** The raw MCP body. */
  body?: string;
  auth: Auth;
}

export interface FuzzResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

interface JsonSchema {
  type?: string;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  format?: string;
  pattern?: string;
  properties?: Record<string, JsonSchema>;
}
interface Param {
  name: string;
  in: string;
  schema?: JsonSchema;
}
export interface Operation {
  path: string;
  params: Param[];
}
export interface ToolInfo {
  name: string;
  inputSchema?: JsonSchema;
}

export const MCP_PATH = '/api/mcp';
export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
export const MAX_URL = 8000;
/** A well-formed key that belongs to nobody. */
const UNKNOWN_KEY = `flprop_live_${'Zz9'.repeat(10)}Zz`;

/** Every GET operation of an OpenAPI document. */
export function operationsOf(doc: { paths?: Record<string, Record<string, { parameters?: Param[] }>> }): Operation[] {
  return Object.entries(doc.paths ?? {}).flatMap(([path, ops]) =>
    ops.get ? [{ path, params: ops.get.parameters ?? [] }] : [],
  );
}

export function requestHeaders(req: FuzzRequest, key: string): Record<string, string | string[]> {
  const auth: Record<Auth, Record<string, string | string[]>> = {
    bearer: { authorization: `Bearer ${key}` },
    'bearer-lowercase': { authorization: `bearer ${key}` },
    'x-api-key': { 'x-api-key': key },
    both: { authorization: `Bearer ${key}`, 'x-api-key': key },
    none: {},
    malformed: { authorization: `Bearer ${key} ${key}` },
    unknown: { authorization: `Bearer ${UNKNOWN_KEY}` },
    duplicate: { authorization: [`Bearer ${key}`, `Bearer ${UNKNOWN_KEY}`] },
  };
  return { ...(req.kind === 'mcp' ? MCP_HEADERS : {}), ...auth[req.auth] };
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** A bash word for `s`; runs of a short unit repeated 20 times or more become printf loops, so deep nesting stays short. */
function shellWord(s: string): string {
  const parts: string[] = [];
  let last = 0;
  for (const m of s.matchAll(/(.{1,6}?)\1{19,}/gs)) {
    const unit = m[1]!;
    if (m.index > last) parts.push(`printf %s ${quote(s.slice(last, m.index))}`);
    parts.push(`printf ${quote(`${unit.replace(/[%\\]/g, '$&$&')}%.0s`)} {1..${m[0].length / unit.length}}`);
    last = m.index + m[0].length;
  }
  if (parts.length === 0) return quote(s);
  if (last < s.length) parts.push(`printf %s ${quote(s.slice(last))}`);
  return `"$(${parts.join('; ')})"`;
}

/** A copy-and-paste (bash) reproduction; the shell's $KEY stands for the key. */
export function reproduction(req: FuzzRequest, base = 'http://127.0.0.1:3000'): string {
  const headers = Object.entries(requestHeaders(req, '$KEY')).flatMap(([name, v]) =>
    (Array.isArray(v) ? v : [v]).map((value) => `-H "${name}: ${value}"`),
  );
  const body = req.body === undefined ? [] : [`--data-binary ${shellWord(req.body)}`];
  return ['curl -s -g --path-as-is', ...headers, ...body, shellWord(base + req.url)].join(' ');
}

/** fast-check prints a counterexample as its reproduction rather than as (possibly 30 kB of) JSON. */
function printable(req: FuzzRequest): FuzzRequest {
  return Object.defineProperty(req, fc.toStringMethod, { value: () => reproduction(req) });
}

// --- values ---------------------------------------------------------------------------------------------------

const SAFE = /^[A-Za-z0-9\-._~!$'()*,:@]$/;
/** Percent-encodes everything outside a conservative set (UTF-8; a lone surrogate becomes U+FFFD's bytes). */
function pct(s: string): string {
  let out = '';
  for (const ch of s) {
    if (SAFE.test(ch)) out += ch;
    else for (const b of Buffer.from(ch)) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Sent verbatim: malformed or surprising percent-encodings and form syntax. */
// prettier-ignore
const RAW_JUNK = ['%ZZ', '%', '%%', '%4', '%G0', '%C3%28', '%ED%A0%80', '%FF%FE', '%00', '%2525', '%u0041', '+', '%0D%0A'];
// prettier-ignore
const NUMBERS = [
  '0', '-0', '-1', '1.5', '.5', '5.', '+5', '1e3', '1e308', '-1e308', '1e-320', '1e400', 'NaN', 'Infinity',
  '-Infinity', '9007199254740993', '2147483648', '-2147483649', '99999999999999999999999', '0x1F', '1_000', ' 5',
  '\u0661\u0662', // Arabic-Indic digits
];
// prettier-ignore
const NASTY = [
  "' OR 1=1 --", "'; DROP TABLE parcels; --", '\\', '"', '{"a":1}', '[1,2]', '../../etc/passwd', '<script>',
  '${7*7}', '%s%n', 'null', 'undefined', 'true', '__proto__', 'constructor', 'toString', '\u202e', '\ufeff', '\ud800',
];
const SLUGS = ['miami-dade', 'broward', 'palm-beach', 'orange', 'st-johns', 'Miami-Dade', 'atlantis', 'miami_dade'];
const SAMPLES: Record<string, string[]> = {
  county: SLUGS,
  zip: ['33101', '33101-1234', '331011234', '3310', 'ABCDE'],
  near: ['25.77,-80.19', '25.77', '91,181', 'a,b', '25.77,-80.19,3'],
  point: ['25.77,-80.19', '-80.19,25.77', '0,0'],
  bbox: ['-80.3,25.7,-80.1,25.9', '-80.1,25.9,-80.3,25.7', '1,2,3', '-180,-90,180,90'],
  facets: ['county', 'county,use_code', 'nope', ''],
  parcel_id: ['01-3132-035-0010', 'X-1', '0000', '01 3132 035 0010'],
  status: ['certificate_sold', 'delinquent', 'redeemed', 'nope'],
  query: ['smith john', '123 OAK DR', 'a', 'SMITH'],
};

const textArb = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: fc.integer({ min: 0, max: 31 }).map((c) => String.fromCharCode(c)), maxLength: 4 }),
  fc.constantFrom(...NASTY, ...NUMBERS),
  fc.integer({ min: 200, max: 3000 }).map((n) => 'x'.repeat(n)),
);

/** Plausible values for a schema (and its neighbours just outside), as text. */
function likelyText(schema: JsonSchema | undefined, name: string): fc.Arbitrary<string> {
  if (!schema) return fc.constantFrom(...(SAMPLES[name] ?? ['1']));
  if (schema.enum) return fc.constantFrom(...schema.enum.map(String), 'NOPE');
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => likelyText(s, name)));
  if (schema.type === 'array')
    return fc.array(likelyText(schema.items, name), { maxLength: 5 }).map((a) => a.join(','));
  if (schema.type === 'integer' || schema.type === 'number') {
    const min = schema.minimum ?? -1e6;
    const max = schema.maximum ?? 1e6;
    const ints = fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31 - 1) });
    return fc.oneof(
      ints.map(String),
      fc.constantFrom(String(min - 1), String(max + 1), String(min), String(max)),
      fc.double({ min, max, noNaN: true }).map(String),
    );
  }
  if (schema.type === 'boolean') return fc.constantFrom('true', 'false', '1', '0', 'yes', 'TRUE');
  if (schema.format === 'date')
    return fc.oneof(
      fc
        .date({ min: new Date('1800-01-01'), max: new Date('2200-12-31'), noInvalidDate: true })
        .map((d) => d.toISOString().slice(0, 10)),
      fc.constantFrom('2020-02-30', '2020-13-01', '0000-00-00', '2020-1-1', '99999-01-01'),
    );
  return fc.constantFrom(...(SAMPLES[name] ?? ['a', 'smith', '01-3132-035-0010', 'miami-dade,broward']));
}

/** A value as it goes on the wire: encoded text, verbatim junk, or a mix. */
function wireValue(likely: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const raw = fc.constantFrom(...RAW_JUNK);
  return fc.oneof(
    { weight: 5, arbitrary: likely.map(pct) },
    { weight: 3, arbitrary: textArb.map(pct) },
    { weight: 1, arbitrary: raw },
    { weight: 1, arbitrary: fc.tuple(likely, raw, textArb).map(([a, r, b]) => pct(a) + r + pct(b)) },
    { weight: 1, arbitrary: fc.array(textArb, { maxLength: 6 }).map((a) => a.map(pct).join(',')) },
    { weight: 1, arbitrary: fc.constant('') },
  );
}

const authArb: fc.Arbitrary<Auth> = fc.oneof(
  { weight: 30, arbitrary: fc.constant('bearer' as const) },
  { weight: 2, arbitrary: fc.constantFrom('bearer-lowercase' as const, 'x-api-key' as const, 'both' as const) },
  { weight: 1, arbitrary: fc.constantFrom('none' as const, 'malformed' as const, 'unknown' as const) },
  { weight: 1, arbitrary: fc.constant('duplicate' as const) },
);

// --- REST -------------------------------------------------------------------------------------------------------

const unknownName = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'limit[]', 'a[b]', 'q', 'LIMIT', 'county%00', '%ZZ', ''),
  fc.string({ unit: 'grapheme', maxLength: 12 }).map(pct),
);

/** GET requests over every operation, under /v1 and /api/v1. */
export function restRequest(operations: Operation[]): fc.Arbitrary<FuzzRequest> {
  if (operations.length === 0) throw new Error('the OpenAPI document lists no GET operation');
  return fc.oneof(...operations.map(restRequestFor)).map(([path, pairs, auth]) => {
    const kept = [...pairs];
    const url = () => (kept.length ? `${path}?${kept.join('&')}` : path);
    while (url().length > MAX_URL && kept.length) kept.pop();
    return printable({ kind: 'rest', method: 'GET', url: url().slice(0, MAX_URL), auth });
  });
}

function restRequestFor(op: Operation) {
  const schemaOf = (name: string) => op.params.find((p) => p.name === name)?.schema;
  const path = (value: (name: string) => fc.Arbitrary<string>) => {
    const parts = op.path
      .split(/(\{[^}]+\})/)
      .map((s) => (/^\{.+\}$/.test(s) ? value(s.slice(1, -1)) : fc.constant(s)));
    return fc
      .tuple(fc.constantFrom('/v1', '/api/v1'), fc.tuple(...parts), fc.constantFrom('', '', '', '/'))
      .map(([prefix, segments, tail]) => prefix + segments.join('').replace(/^\/v1/, '') + tail);
  };
  const real = op.params.filter((p) => p.in === 'query');
  // plausible requests: some real parameters with plausible values, so the fuzz reaches the queries too
  const someReal = fc
    .tuple(
      ...real.map((p) =>
        fc.oneof(
          { weight: 2, arbitrary: fc.constant(null) },
          { weight: 1, arbitrary: likelyText(p.schema, p.name).map((v) => `${pct(p.name)}=${pct(v)}`) },
        ),
      ),
    )
    .map((pairs) => pairs.filter((x): x is string => x !== null));
  const plausible = fc.tuple(
    path((name) => likelyText(schemaOf(name), name).map(pct)),
    someReal,
    authArb,
  );

  const realPair = real.length
    ? fc.oneof(...real.map((p) => fc.tuple(fc.constant(pct(p.name)), wireValue(likelyText(p.schema, p.name)))))
    : null;
  const anyPair = fc.tuple(unknownName, wireValue(textArb));
  const pairArb = realPair ? fc.oneof({ weight: 4, arbitrary: realPair }, { weight: 1, arbitrary: anyPair }) : anyPair;
  const rendered = fc
    .tuple(pairArb, fc.nat(19))
    .map(([[k, v], form]) => (form === 0 ? k : form === 1 ? `${k}=` : form === 2 ? `=${v}` : `${k}=${v}`));
  // a real parameter given twice, with different values
  const repeated = realPair
    ? fc.option(
        fc.tuple(realPair, realPair).map(([[k, a], [, b]]) => [`${k}=${a}`, `${k}=${b}`]),
        { nil: [] as string[] },
      )
    : fc.constant([] as string[]);
  const pairs = fc.tuple(fc.array(rendered, { maxLength: 8 }), repeated).map(([a, b]) => [...a, ...b]);
  const hostile = fc.tuple(
    path((name) => wireValue(likelyText(schemaOf(name), name))),
    pairs,
    authArb,
  );
  return fc.oneof({ weight: 1, arbitrary: plausible }, { weight: 2, arbitrary: hostile });
}

// --- MCP --------------------------------------------------------------------------------------------------------

/** JSON text inserted verbatim by `toJson` (numbers JSON.stringify cannot write, nesting deeper than is polite). */
class RawJson {
  constructor(readonly text: string) {}
}

/** An object whose own keys may be __proto__ or constructor (an object literal would set the prototype instead). */
function obj(entries: [string, unknown][]): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true });
  return o;
}

/** JSON.stringify, but RawJson goes in verbatim and own __proto__ keys are kept; undefined members are left out. */

function toJson(v: unknown): string {
  if (v instanceof RawJson) return v.text;
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .filter(([, x]) => x !== undefined)
      .map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

// a tuple, not chain: the depth then shrinks to the smallest that still fails
const deep = fc
  .tuple(fc.integer({ min: 20, max: 6000 }), fc.boolean())
  .map(([d, arrays]) => new RawJson(arrays ? '['.repeat(d) + ']'.repeat(d) : '{"a":'.repeat(d) + '1' + '}'.repeat(d)));
const protoObj = fc
  .tuple(fc.constantFrom('__proto__', 'constructor', 'prototype'), fc.jsonValue({ maxDepth: 2 }))
  .map(([k, v]) => obj([[k, v]]));
const junkJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: textArb },
  { weight: 1, arbitrary: fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -1, 0, 0.5, -0, null, true, [], {}) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('1e400', '-1e400', '1e-400', '1234567890123456789012345').map((t) => new RawJson(t)),
  },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: protoObj },
);

/** Plausible JSON for a tool's input schema, or junk. */
function jsonFor(schema: JsonSchema | undefined, name: string): fc.Arbitrary<unknown> {
  const likely = (): fc.Arbitrary<unknown> => {
    if (!schema) return likelyText(undefined, name);
    if (schema.enum) return fc.constantFrom(...schema.enum);
    if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => jsonFor(s, name)));
    if (schema.type === 'array') return fc.array(jsonFor(schema.items, name), { maxLength: 4 });
    if (schema.type === 'integer' || schema.type === 'number' || schema.type === 'boolean')
      return likelyText(schema, name).map((s) => (schema.type === 'boolean' ? s === 'true' : Number(s)));
    return likelyText(schema, name);
  };
  return fc.oneof({ weight: 4, arbitrary: likely() }, { weight: 1, arbitrary: junkJson });
}

function argumentsFor(tool: ToolInfo): fc.Arbitrary<unknown> {
  const odd = fc.tuple(fc.oneof(fc.constantFrom('__proto__', 'constructor', ''), fc.string()), junkJson);
  const real = Object.entries(tool.inputSchema?.properties ?? {}).map(([k, s]) =>
    fc.tuple(fc.constant(k), jsonFor(s, k)),
  );
  const entry = real.length
    ? fc.oneof({ weight: 5, arbitrary: fc.oneof(...real) }, { weight: 1, arbitrary: odd })
    : odd;
  return fc.oneof(
    { weight: 8, arbitrary: fc.array(entry, { maxLength: 6 }).map(obj) },
    { weight: 1, arbitrary: junkJson },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

const idArb = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 1e6 }) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(0, -1, 1.5, 2 ** 53 + 1, null, {}, [], true, '') },
);
const INITIALIZE = {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 'fuzz', version: '1.0.0' },
};

/** One JSON-RPC message, mostly well-formed, as a value (not yet JSON). */
function messageArb(tools: ToolInfo[]): fc.Arbitrary<unknown> {
  const request = (
    method: fc.Arbitrary<unknown>,
    params: fc.Arbitrary<unknown>,
    version: fc.Arbitrary<unknown> = fc.constant('2.0'),
  ) => fc.tuple(version, idArb, method, params).map(([jsonrpc, id, m, p]) => ({ jsonrpc, id, method: m, params: p }));
  const realCall = fc
    .constantFrom(...tools)
    .chain((t) => argumentsFor(t).map((args) => ({ name: t.name, arguments: args })));
  const unknownCall = fc.tuple(textArb, argumentsFor({ name: '' })).map(([name, args]) => ({ name, arguments: args }));
  const oddParams = fc.oneof(
    fc.constant(undefined),
    fc.constantFrom<unknown>(null, 'x', 1, [], {}, { arguments: {} }, { name: 1 }, { name: ['get_county'] }),
    junkJson,
  );
  const call = fc.constant('tools/call');
  return fc.oneof(
    { weight: 12, arbitrary: request(call, realCall) },
    { weight: 1, arbitrary: request(call, unknownCall) },
    { weight: 2, arbitrary: request(call, oddParams) },
    { weight: 1, arbitrary: request(fc.constant('initialize'), fc.oneof(fc.constant(INITIALIZE), oddParams)) },
    { weight: 1, arbitrary: request(fc.constantFrom('tools/list', 'ping'), oddParams) },
    {
      weight: 1,
      arbitrary: request(fc.oneof(fc.constantFrom('resources/list', 'rpc.discover', 'tools/'), textArb), oddParams),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom('notifications/initialized', 'notifications/cancelled', 'tools/call'), oddParams)
        .map(([method, params]) => ({ jsonrpc: '2.0', method, params })),
    },
    {
      weight: 1,
      arbitrary: request(
        fc.constant('ping'),
        fc.constant(undefined),
        fc.constantFrom('1.0', 2, '2.0 ', null, undefined),
      ),
    },
  );
}

const MALFORMED = ['', '{', '{"jsonrpc":"2.0",', '\u0000', 'nul', '[1,]', '{"a":1}{}', '\ufeff{}'];

/** POST /api/mcp bodies: single messages, batches, non-objects, malformed and deeply nested text. */
export function mcpRequest(tools: ToolInfo[]): fc.Arbitrary<FuzzRequest> {
  if (tools.length === 0) throw new Error('tools/list returned no tool');
  const message = messageArb(tools);
  const body = fc.oneof(
    { weight: 12, arbitrary: message.map(toJson) },
    { weight: 1, arbitrary: fc.array(message, { maxLength: 3 }).map(toJson) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, 42, 'x', true, {}).map(toJson) },
    { weight: 1, arbitrary: fc.oneof(fc.constantFrom(...MALFORMED), fc.string({ maxLength: 30 })) },
    { weight: 1, arbitrary: deep.map(toJson) },
  );
  return fc
    .tuple(body, authArb)
    .map(([b, auth]) => printable({ kind: 'mcp', method: 'POST', url: MCP_PATH, body: b, auth }));
}

// --- checks -----------------------------------------------------------------------------------------------------

const REQUEST_ID = /^req_[0-9a-f]{24}$/;
const STACK_TRACE = /\n\s+at |\bat \S+ \(|\.(?:ts|js|mjs|cjs):\d+:\d+/;
/** Answered over HTTP before (or instead of) JSON-RPC: these carry the REST envelope. */
const MCP_REFUSALS = new Set([401, 402, 403, 405, 413, 429]);
/** Presented no usable key of ours: any success is a hole. */
const UNAUTHENTICATED = new Set<Auth>(['none', 'malformed', 'unknown', 'duplicate']);

type Json = { ok: true; value: unknown } | { ok: false };
function parse(text: string): Json {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const clip = (s: string, n = 120) => (s.length > n ? `${s.slice(0, n)}…` : s);
function header(res: FuzzResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v.join(', ') : v === undefined ? undefined : String(v);
}

function messageProblems(message: unknown, where: string): string[] {
  if (typeof message !== 'string') return [`${where} is not a string`];
  const out: string[] = [];
  if (STACK_TRACE.test(message)) out.push(`${where} contains a stack trace: ${clip(message)}`);
  if (/ZodError/.test(message)) out.push(`${where} mentions ZodError`);
  // a serialized validator report ('[\n {\n "expected": ...') is internals, not a message for a client
  if (/^\s*[[{]/.test(message) || /"(?:expected|code|path)"\s*:/.test(message))
    out.push(`${where} is a raw validation dump: ${clip(JSON.stringify(message))}`);
  return out;
}

/** The REST error envelope: exactly { error: { code, message, request_id } }, request_id = X-Request-Id. */
function envelopeProblems(res: FuzzResponse, value: unknown): string[] {
  if (!isObject(value)) return [`error body is not an object: ${clip(res.body)}`];
  const out: string[] = [];
  const keys = Object.keys(value);
  if (keys.join() !== 'error') out.push(`error body has keys [${keys.join(', ')}], want exactly [error]`);
  const e = value.error;
  if (!isObject(e)) return [...out, `error is not an object: ${clip(res.body)}`];
  const errorKeys = Object.keys(e).sort().join(', ');
  if (errorKeys !== 'code, message, request_id')
    out.push(`error has keys [${errorKeys}], want exactly [code, message, request_id]`);
  if (typeof e.code !== 'string') out.push('error.code is not a string');
  out.push(...messageProblems(e.message, 'error.message'));
  if (typeof e.request_id !== 'string' || !REQUEST_ID.test(e.request_id))
    out.push(`error.request_id ${JSON.stringify(e.request_id)} does not match ${REQUEST_ID}`);
  else if (header(res, 'x-request-id') !== e.request_id)
    out.push(`X-Request-Id ${JSON.stringify(header(res, 'x-request-id'))} differs from error.request_id`);
  return out;
}

function jsonRpcProblems(value: unknown, sent: unknown): string[] {
  if (Array.isArray(value)) return ['answered a batch (an array); batches should get one -32600 error'];
  if (!isObject(value)) return ['not a JSON-RPC response object'];
  const out: string[] = [];
  if (value.jsonrpc !== '2.0') out.push(`jsonrpc is ${JSON.stringify(value.jsonrpc)}, want "2.0"`);
  if ('result' in value === 'error' in value) out.push('want exactly one of result / error');
  const id = value.id;
  if (!(typeof id === 'string' || typeof id === 'number' || id === null))
    out.push(`id ${JSON.stringify(id)} is not a string, number or null`);
  if ('result' in value && isObject(sent) && id !== sent.id)
    out.push(`result for id ${JSON.stringify(id)}, sent id ${JSON.stringify(sent.id)}`);
  // a tool's own internal error (its 500) for whatever arguments a client sent
  const content = isObject(value.result) && Array.isArray(value.result.content) ? value.result.content : [];
  if (isObject(value.result) && value.result.isError === true) {
    for (const part of content) {
      if (isObject(part) && typeof part.text === 'string' && /^Internal error/.test(part.text)) {
        out.push(`tool error is the server's own: ${clip(part.text)}`);
      }
    }
  }
  if ('error' in value) {
    const e = value.error;
    if (!isObject(e)) return [...out, 'error is not an object'];
    if (!Number.isInteger(e.code)) out.push(`error.code ${JSON.stringify(e.code)} is not an integer`);
    // -32603 is the server blaming itself: for a client's malformed request that is the JSON-RPC 500
    if (e.code === -32603) out.push('internal error (-32603) for a client request');
    out.push(...messageProblems(e.message, 'error.message'));
  }
  return out;
}

/** Everything wrong with one answer; empty when it passes. */
export function check(req: FuzzRequest, res: FuzzResponse, elapsedMs: number, maxMs: number): string[] {
  const out: string[] = [];
  if (res.status >= 500) out.push(`${res.status}: a server error`);
  if (elapsedMs > maxMs) out.push(`took ${Math.round(elapsedMs)} ms, over ${maxMs} ms`);
  if (res.status >= 200 && res.status < 300 && UNAUTHENTICATED.has(req.auth))
    out.push(`${res.status} for a request with auth '${req.auth}' (no single valid key)`);
  if (req.kind === 'mcp' && res.status === 202 && res.body === '') {
    const sent = parse(req.body ?? '');
    // JSON-RPC notifications and responses get no answer; anything with a method and an id needs one
    if (!sent.ok || !isObject(sent.value) || ('method' in sent.value && 'id' in sent.value))
      out.push('202 with no body: nothing answered a request that needs an answer');
    return out;
  }
  // answers in other standard formats: CSV and GeoJSON when asked for (format= or Accept), a vector tile (204 when
  // empty) and the TileJSON document of the tiles
  if (req.kind === 'rest' && res.status >= 200 && res.status < 300) {
    const type = header(res, 'content-type') ?? '';
    const url = new URL(req.url, 'http://x');
    const asked = url.searchParams.get('format');
    if (type.startsWith('text/csv')) {
      if (asked !== null && asked !== 'csv') out.push(`CSV for format=${asked}`);
      if (!/^[A-Za-z_]+(,[A-Za-z_]+)*\r?\n/.test(res.body))
        out.push(`a CSV answer without a header row: ${clip(res.body)}`);
      return out;
    }
    if (type.startsWith('application/geo+json')) {
      const doc = parse(res.body);
      if (!doc.ok || !isObject(doc.value) || !['Feature', 'FeatureCollection'].includes(String(doc.value.type)))
        out.push('a GeoJSON answer that is not a Feature or a FeatureCollection');
      return out;
    }
    if (/^\/(api\/)?v1\/tiles\//.test(url.pathname)) {
      if (/\.json\/*$/.test(url.pathname)) {
        const doc = parse(res.body);
        if (!doc.ok || !isObject(doc.value) || !('tilejson' in doc.value)) out.push('a 2xx TileJSON without tilejson');
      } else if (res.status !== 204 && !type.startsWith('application/vnd.mapbox-vector-tile'))
        out.push(`a tile with content-type ${JSON.stringify(type)}`);
      return out;
    }
  }
  const body = parse(res.body);
  if (!body.ok) return [...out, `body is not JSON: ${clip(JSON.stringify(res.body))}`];
  const type = header(res, 'content-type') ?? '';
  if (!type.startsWith('application/json')) out.push(`content-type ${JSON.stringify(type)}, want application/json`);
  if (req.kind === 'rest') {
    if (res.status >= 400) out.push(...envelopeProblems(res, body.value));
    else if (res.status >= 200 && res.status < 300) {
      if (!isObject(body.value) || !('data' in body.value)) out.push(`a ${res.status} without data`);
    } else out.push(`unexpected status ${res.status}`);
    return out;
  }
  const sent = parse(req.body ?? '');
  const restShaped = isObject(body.value) && !('jsonrpc' in body.value) && isObject(body.value.error);
  if (MCP_REFUSALS.has(res.status) || (res.status === 400 && restShaped)) {
    out.push(...envelopeProblems(res, body.value));
    const message = isObject(body.value) && isObject(body.value.error) ? String(body.value.error.message) : '';
    if (sent.ok && /not valid JSON/i.test(message)) out.push(`valid JSON refused as invalid: ${clip(message)}`);
    return out;
  }
  return [...out, ...jsonRpcProblems(body.value, sent.ok ? sent.value : undefined)];
}
