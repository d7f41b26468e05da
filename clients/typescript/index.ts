// A typed client for the Florida Property API: openapi-fetch over the types that openapi-typescript generates from
// the API's OpenAPI document (schema.d.ts). Every path, parameter, body and response is checked by the compiler:
//
//   const api = createFloridaClient({ baseUrl: 'https://…', apiKey: process.env.FLPROP_KEY });
//   const { data, error } = await api.GET('/v1/parcels/{id}', { params: { path: { id: 1 } } });
//
// `error` is the error envelope ({ error: { code, message, request_id } }) when the status is not 2xx.
import createClient from 'openapi-fetch';
import type { paths } from './schema.d.ts';

export type { components, operations, paths } from './schema.d.ts';

export interface FloridaClientOptions {
  /** Where the API is, without a trailing slash, for example https://api.example.com. */
  baseUrl: string;
  /** A flprop_live_… or flprop_test_… key, sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  /** A fetch of your own (a proxy's, a test's); the global fetch by default. */
  fetch?: typeof globalThis.fetch;
}

export function createFloridaClient(opts: FloridaClientOptions) {
  return createClient<paths>({
    baseUrl: opts.baseUrl,
    headers: opts.apiKey ? { Authorization: `Bearer ${opts.apiKey}` } : {},
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
}
