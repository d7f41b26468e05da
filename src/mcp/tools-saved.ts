// The saved-search MCP tools: save a search, list them, page a search's matches; the same checks and SQL as
// /v1/saved-searches (src/saved-searches/). Saving and listing are free; a page of matches costs a credit.
import { randomBytes, randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { ApiError, notFound } from '../errors.ts';
import { PLAN_FEATURES } from '../plan-features.ts';
import type { AuthContext } from '../plugins/auth.ts';
import { checkParams } from '../saved-searches/params.ts';
import {
  createSavedSearch,
  getSavedSearch,
  listMatches,
  listSavedSearches,
  uuidOf,
} from '../saved-searches/queries.ts';
import { CreateSavedSearchBody, MatchesEnvelope, SavedSearch, SavedSearchParams } from '../saved-searches/schemas.ts';
import { ObjectEnvelope } from '../schemas/common.ts';
import type { Tool } from './tools.ts';

function clientOf(auth: AuthContext): string {
  if (auth.webhooks === 'no') {
    const { name, plans } = PLAN_FEATURES.saved_searches;
    throw new ApiError(403, 'feature_not_in_plan', `${name} is not included in your plan; it is included in ${plans}.`);
  }
  return auth.clientId;
}

const CreateInput = Type.Object({
  name: CreateSavedSearchBody.properties.name,
  resource: CreateSavedSearchBody.properties.resource,
  params: CreateSavedSearchBody.properties.params,
});
const MatchesInput = Type.Object({
  id: SavedSearchParams.properties.id,
  since: Type.Optional(Type.String({ pattern: '^\\d{1,18}$', description: 'next_cursor of the previous call.' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
});

// (typed here rather than through tools.ts's defineTool: tools.ts imports this module)
export const savedSearchTools: Tool[] = [
  {
    name: 'create_saved_search',
    title: 'Save a search to be told its new matches',
    description:
      'Saves a parcel search (resource "parcels", the filters of search_parcels) or a delinquency search (resource ' +
      '"tax_delinquencies", the filters of search_tax_delinquencies, for example {"county": "broward,palm-beach", ' +
      '"min_due": 3000, "status": "delinquent"}). After each import, every record that newly matches it is recorded ' +
      'once; read them with get_saved_search_matches. Free; Growth, Lead Feed and Enterprise plans (beta on Pro).',
    input: CreateInput,
    output: ObjectEnvelope(SavedSearch),
    free: true,
    run: async ({ app, auth }, a) => {
      const clientId = clientOf(auth);
      const { params, args } = checkParams(a.resource, a.params);
      const data = await createSavedSearch(app.webhooks.sql, {
        clientId,
        id: randomUUID(),
        name: a.name,
        resource: a.resource,
        params,
        args,
        endpointIds: [],
        email: null,
        token: randomBytes(24).toString('base64url'),
      });
      return { structured: { data }, summary: `Saved "${data.name}" as ${data.id}.` };
    },
  } satisfies Tool<typeof CreateInput> as unknown as Tool,
  {
    name: 'list_saved_searches',
    title: 'List your saved searches',
    description: 'Your saved searches with their filters, how many matches each has and when it last matched. Free.',
    input: Type.Object({}),
    output: ObjectEnvelope(Type.Array(SavedSearch)),
    free: true,
    run: async ({ app, auth }) => {
      const data = await listSavedSearches(app.webhooks.sql, clientOf(auth));
      return { structured: { data }, summary: `${data.length} saved search${data.length === 1 ? '' : 'es'}.` };
    },
  },
  {
    name: 'get_saved_search_matches',
    title: "A saved search's matches",
    description:
      'The records that newly matched a saved search, oldest first, after `since` (the next_cursor of the previous ' +
      'call; leave it out to start). Each match has its cursor, when it matched and the record as the search returns ' +
      'it. Never skips or repeats a match. 1 credit a call.',
    input: MatchesInput,
    output: MatchesEnvelope,
    run: async ({ app, auth }, a) => {
      const clientId = clientOf(auth);
      const id = uuidOf(a.id);
      if (!(await getSavedSearch(app.webhooks.sql, clientId, id))) throw notFound('No saved search with that id.');
      const limit = a.limit ?? 100;
      const rows = await listMatches(app.webhooks.sql, clientId, id, a.since ?? '0', limit + 1);
      const data = rows.slice(0, limit);
      const next_cursor = data.at(-1)?.cursor ?? a.since ?? '0';
      return {
        structured: { data, next_cursor, has_more: rows.length > limit },
        summary: `${data.length} match${data.length === 1 ? '' : 'es'}${rows.length > limit ? '; more after next_cursor' : ''}.`,
      };
    },
  } satisfies Tool<typeof MatchesInput> as unknown as Tool,
];
