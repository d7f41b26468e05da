// /saved-searches: a client's saved parcel and delinquency searches and their matches (docs/saved-searches.md). A
// plan feature like webhooks (Growth, Lead Feed, Enterprise; beta on Pro; 403 feature_not_in_plan elsewhere).
// Management is free of credits and counts against the per-minute limit; a page of matches costs 1 credit, as a
// page of search does.
import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { badRequest, notFound, toApiError } from '../errors.ts';
import { csvColumns, csvStream } from '../formats/csv.ts';
import { requirePlanFeature } from '../plan-features.ts';
import { ErrorEnvelope, ObjectEnvelope, commonErrors, meta } from '../schemas/common.ts';
import { ParcelHit } from '../schemas/parcels.ts';
import { DelinquencyHit } from '../schemas/tax-delinquencies.ts';
import { checkParams } from '../saved-searches/params.ts';
import {
  createSavedSearch,
  deleteSavedSearch,
  getSavedSearch,
  listMatches,
  listSavedSearches,
  updateSavedSearch,
  uuidOf,
  type SavedSearchRow,
} from '../saved-searches/queries.ts';
import {
  CreateSavedSearchBody,
  MatchesEnvelope,
  MatchesQuery,
  SavedSearch,
  SavedSearchParams,
  UpdateSavedSearchBody,
} from '../saved-searches/schemas.ts';

const MAX_BODY = 16 * 1024;
/** The CSV columns of a page of matches: the cursor and time, then the record's fields. */
const csvOf = (hit: object) => [
  'cursor',
  'matched_at',
  ...csvColumns({ properties: { data: { type: 'array', items: hit } } })!,
];
const CSV_COLUMNS = { parcels: csvOf(ParcelHit), tax_delinquencies: csvOf(DelinquencyHit) };

const savedSearches: FastifyPluginAsyncTypebox = async (app) => {
  const { sql } = app.webhooks;
  const tags = ['saved-searches'];
  const gate = 'Growth, Lead Feed and Enterprise; beta on Pro.';
  const errors = { ...commonErrors, 404: ErrorEnvelope };
  const missing = () => notFound('No saved search with that id.');
  const shown = (request: FastifyRequest, row: SavedSearchRow) => ({
    ...row,
    beta: request.auth!.webhooks === 'beta',
  });
  /** The client, once the request is admitted (nothing is written for a refused one) and its plan has the feature. */
  const client = async (request: FastifyRequest) => {
    const refusal = request.admission ? await request.admission.catch(toApiError) : null;
    if (refusal) throw refusal;
    await requirePlanFeature(request, 'saved_searches');
    return request.auth!.clientId;
  };
  const endpointIds = (ids: string[] | undefined) => ids?.map(uuidOf);

  app.addHook('preParsing', async (request) => {
    const length = Number(request.headers['content-length'] ?? 0);
    if (length > MAX_BODY) throw badRequest(`body: must be at most ${MAX_BODY} bytes (16 KB)`);
  });

  app.post(
    '/saved-searches',
    {
      bodyLimit: MAX_BODY,
      config: { free: true },
      schema: {
        tags,
        summary: 'Save a parcel or delinquency search; its new matches are delivered after each import',
        description: `Free of credits. ${gate}`,
        body: CreateSavedSearchBody,
        response: { 201: ObjectEnvelope(SavedSearch), ...errors },
      },
    },
    async (request, reply) => {
      const clientId = await client(request);
      const b = request.body;
      const { params, args } = checkParams(b.resource, b.params);
      const row = await createSavedSearch(sql, {
        clientId,
        id: randomUUID(),
        name: b.name,
        resource: b.resource,
        params,
        args,
        endpointIds: endpointIds(b.deliver?.webhook_endpoints) ?? [],
        email: b.deliver?.email ?? null,
        token: randomBytes(24).toString('base64url'),
      });
      reply.code(201);
      return { data: shown(request, row), meta: meta(request) };
    },
  );

  app.get(
    '/saved-searches',
    {
      config: { free: true },
      schema: {
        tags,
        summary: "The client's saved searches, oldest first",
        description: gate,
        response: { 200: ObjectEnvelope(Type.Array(SavedSearch)), ...commonErrors },
      },
    },
    async (request) => {
      const rows = await listSavedSearches(sql, await client(request));
      return { data: rows.map((r) => shown(request, r)), meta: meta(request) };
    },
  );

  app.get(
    '/saved-searches/:id',
    {
      config: { free: true },
      schema: {
        tags,
        summary: 'One saved search',
        description: gate,
        params: SavedSearchParams,
        response: { 200: ObjectEnvelope(SavedSearch), ...errors },
      },
    },
    async (request) => {
      const row = await getSavedSearch(sql, await client(request), uuidOf(request.params.id));
      if (!row) throw missing();
      return { data: shown(request, row), meta: meta(request) };
    },
  );

  app.patch(
    '/saved-searches/:id',
    {
      bodyLimit: MAX_BODY,
      config: { free: true },
      schema: {
        tags,
        summary: 'Change a saved search (name, params, deliver)',
        description: `Fields left out stay; matches already recorded stay. ${gate}`,
        params: SavedSearchParams,
        body: UpdateSavedSearchBody,
        response: { 200: ObjectEnvelope(SavedSearch), ...errors },
      },
    },
    async (request) => {
      const clientId = await client(request);
      const id = uuidOf(request.params.id);
      const current = await getSavedSearch(sql, clientId, id);
      if (!current) throw missing();
      const b = request.body;
      const checked = b.params === undefined ? undefined : checkParams(current.resource, b.params);
      const row = await updateSavedSearch(sql, clientId, id, {
        name: b.name,
        params: checked?.params,
        args: checked?.args,
        endpointIds: endpointIds(b.deliver?.webhook_endpoints),
        email: b.deliver?.email,
      });
      if (!row) throw missing();
      return { data: shown(request, row), meta: meta(request) };
    },
  );

  app.delete(
    '/saved-searches/:id',
    {
      config: { free: true },
      schema: {
        tags,
        summary: 'Delete a saved search and its matches',
        description: gate,
        params: SavedSearchParams,
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (request, reply) => {
      if (!(await deleteSavedSearch(sql, await client(request), uuidOf(request.params.id)))) throw missing();
      reply.code(204);
      return null;
    },
  );

  app.get(
    '/saved-searches/:id/matches',
    {
      schema: {
        tags,
        summary: "A saved search's matches after a cursor, oldest first (1 credit a page)",
        description: `Page with since=<next_cursor>: never skips or repeats a match. format=csv on plans with CSV. ${gate}`,
        params: SavedSearchParams,
        querystring: MatchesQuery,
        response: { 200: MatchesEnvelope, ...errors },
      },
    },
    async (request, reply) => {
      const clientId = await client(request);
      const { since = '0', limit, format } = request.query;
      if (format === 'csv') await requirePlanFeature(request, 'csv');
      const search = await getSavedSearch(sql, clientId, uuidOf(request.params.id));
      if (!search) throw missing();
      const rows = await listMatches(sql, clientId, uuidOf(request.params.id), since, limit + 1);
      const page = rows.slice(0, limit);
      const nextCursor = page.at(-1)?.cursor ?? since;
      const hasMore = rows.length > limit;
      if (format === 'csv') {
        reply.header('content-type', 'text/csv; charset=utf-8');
        reply.header('x-next-cursor', nextCursor);
        reply.header('x-has-more', String(hasMore));
        const flat = page.map((m) => ({ cursor: m.cursor, matched_at: m.matched_at, ...m.record }));
        return reply.send(csvStream(flat, CSV_COLUMNS[search.resource]) as never);
      }
      return { data: page, next_cursor: nextCursor, has_more: hasMore, meta: meta(request) };
    },
  );
};
export default savedSearches;
