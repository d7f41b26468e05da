// TypeBox shapes of the saved-search API (docs/saved-searches.md).
import { Type, type Static } from '@sinclair/typebox';
import { Meta } from '../schemas/common.ts';

const SEARCH_ID = '^ss_[0-9a-f]{32}$';
const ENDPOINT_ID = '^ep_[0-9a-f]{32}$';

export const SavedSearchParams = Type.Object({
  id: Type.String({ pattern: SEARCH_ID, description: 'Saved search id (ss_…).' }),
});

const Deliver = Type.Object(
  {
    webhook_endpoints: Type.Optional(
      Type.Array(Type.String({ pattern: ENDPOINT_ID }), {
        maxItems: 10,
        description: 'Your webhook endpoints (ep_…) that get saved_search.matched events.',
      }),
    ),
    email: Type.Optional(
      Type.Union([Type.Literal('daily'), Type.Literal('weekly'), Type.Null()], {
        description: 'An email digest of new matches to the account email, daily or weekly; null for none.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CreateSavedSearchBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    resource: Type.Union([Type.Literal('parcels'), Type.Literal('tax_delinquencies')], {
      description: 'parcels (GET /v1/parcels/search) or tax_delinquencies (GET /v1/tax-delinquencies/search).',
    }),
    params: Type.Record(Type.String(), Type.Unknown(), {
      description:
        "The search endpoint's filter parameters, as in its URL (limit, offset, sort and facets are ignored).",
    }),
    deliver: Type.Optional(Deliver),
  },
  { additionalProperties: false },
);
export type CreateSavedSearchBody = Static<typeof CreateSavedSearchBody>;

export const UpdateSavedSearchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    deliver: Type.Optional(Deliver),
  },
  { additionalProperties: false },
);

export const SavedSearch = Type.Object({
  id: Type.String(),
  name: Type.String(),
  resource: Type.String(),
  params: Type.Record(Type.String(), Type.String()),
  deliver: Type.Object({
    webhook_endpoints: Type.Array(Type.String()),
    email: Type.Union([Type.String(), Type.Null()]),
  }),
  match_count: Type.Integer(),
  last_matched_at: Type.Union([Type.String(), Type.Null()]),
  beta: Type.Boolean({ description: 'true on Pro, where saved searches are a beta.' }),
  created_at: Type.String(),
  updated_at: Type.String(),
});

export const MatchesQuery = Type.Object({
  since: Type.Optional(
    Type.String({
      pattern: '^\\d{1,18}$',
      description: 'The next_cursor of the previous page; left out, the first match.',
    }),
  ),
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
  format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')])),
});

export const Match = Type.Object({
  cursor: Type.String({ description: 'This match as a cursor: since=<cursor> pages after it.' }),
  matched_at: Type.String(),
  record: Type.Record(Type.String(), Type.Unknown(), {
    description: 'The record when it matched: a ParcelHit or a DelinquencyHit, as the search endpoint returns it.',
  }),
});

export const MatchesEnvelope = Type.Object({
  data: Type.Array(Match),
  next_cursor: Type.String({ description: 'since= for the next page: the last cursor of this one, or since itself.' }),
  has_more: Type.Boolean(),
  meta: Meta,
});
