// The typed client (clients/typescript) against the running API: every operation of the OpenAPI document called once
// through it, over HTTP, with the values its code samples use; and the client's files are what `make client` makes.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { createFloridaClient } from '../../clients/typescript/index.ts';
import { codeSamples, exampleValue, type Operation } from '../../src/docs-site/code-samples.ts';
import { CLIENT_SCHEMA_PATH, clientSchemaSource } from '../../scripts/client-schema.ts';
import { buildTestApp } from '../helpers/app.ts';

const ctx = await buildTestApp(t);
const { app, key } = ctx;
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
const api = createFloridaClient({ baseUrl, apiKey: key });
const document = (await app.inject({ url: '/v1/openapi.json' })).json() as {
  paths: Record<string, Record<string, Operation & { responses: Record<string, unknown> }>>;
};

t.test('the committed client is generated from the current OpenAPI document (run `make client`)', async (t) => {
  const committed = readFileSync(CLIENT_SCHEMA_PATH, 'utf8');
  t.equal(committed, await clientSchemaSource(app.swagger()), 'clients/typescript/schema.d.ts is current');
});

t.test('typed calls answer with typed data', async (t) => {
  const parcel = await api.GET('/v1/parcels/{id}', { params: { path: { id: 1 } } });
  t.equal(parcel.response.status, 200);
  t.equal(parcel.data?.data.id, 1);
  t.equal(parcel.data?.data.owner_name, 'SMITH JOHN');
  const search = await api.GET('/v1/parcels/search', {
    params: { query: { county: 'miami-dade', query: 'smith john', limit: 2, offset: 0 } },
  });
  t.equal(search.data?.pagination.limit, 2);
  t.ok((search.data?.pagination.total ?? 0) >= 2, 'the fixtures hold several Smiths');
  const missing = await api.GET('/v1/counties/{county}', { params: { path: { county: 'atlantis' } } });
  t.equal(missing.response.status, 404);
  t.equal(missing.error?.error.code, 'not_found', 'errors come back as the typed envelope');
});

t.test('every operation of the document, called once through the client', async (t) => {
  type Caller = (path: string, init: Record<string, unknown>) => Promise<{ response: Response; data?: unknown }>;
  const callers = api as unknown as Record<string, Caller>;
  let called = 0;
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const params = op.parameters ?? [];
      const pick = (where: string) =>
        Object.fromEntries(
          params
            .filter((p) => p.in === where && (p.required || where === 'path'))
            .map((p) => [p.name, exampleValue(p)]),
        );
      const sample = codeSamples(baseUrl, path, method, op)[1]!.source;
      const body = op.requestBody ? JSON.parse(JSON.stringify(bodyOf(op))) : undefined;
      const init: Record<string, unknown> = { params: { path: pick('path'), query: pick('query') } };
      if (body !== undefined) init.body = body;
      if (path === '/api/mcp') {
        init.body = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
        init.headers = { accept: 'application/json, text/event-stream' };
      }
      if (path.endsWith('.mvt')) init.parseAs = 'arrayBuffer';
      const { response } = await callers[method.toUpperCase()]!(path, init);
      const documented = Object.keys(op.responses);
      t.ok(documented.includes(String(response.status)), `${method} ${path}: ${response.status} is documented`);
      t.ok(response.status < 500, `${method} ${path}: not a server error`);
      t.match(
        sample,
        `api.${method.toUpperCase()}('${path}'`,
        `${method} ${path}: its JavaScript sample uses the client`,
      );
      called++;
    }
  }
  t.ok(called >= 30, `${called} operations called`);
});

function bodyOf(op: Operation): unknown {
  const media = op.requestBody?.content?.['application/json'];
  return media?.example ?? (media?.schema as { examples?: unknown[] } | undefined)?.examples?.[0] ?? {};
}
