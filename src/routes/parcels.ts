// GET /parcels/search, /parcels/autocomplete, /parcels/by-parcel-id, /parcels/{id}, /parcels/{id}/sales,
// /parcels/{id}/history.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { notFound } from '../errors.ts';
import {
  autocompleteParcels,
  getParcel,
  getParcelByParcelId,
  getParcelHistory,
  searchParcels,
} from '../queries/parcels.ts';
import { listParcelSales } from '../queries/sales.ts';
import { ErrorEnvelope, ListEnvelope, ObjectEnvelope, Meta, commonErrors, meta } from '../schemas/common.ts';
import {
  AutocompleteQuery,
  ByParcelIdQuery,
  PageQuery,
  ParcelHit,
  ParcelParams,
  ParcelRoll,
  ParcelSearchEnvelope,
  ParcelSearchQuery,
  Suggestion,
} from '../schemas/parcels.ts';
import { SaleHit } from '../schemas/sales.ts';

const tags = ['parcels'];

const parcels: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/parcels/search',
    {
      config: { formats: ['csv', 'geojson'] },
      schema: {
        tags,
        summary: 'Search parcels by owner, address, codes, values, last sale and place',
        querystring: ParcelSearchQuery,
        response: { 200: ParcelSearchEnvelope, ...commonErrors },
      },
    },
    async (request) => ({ ...(await searchParcels(app.sql, request.query)), meta: meta(request) }),
  );

  app.get(
    '/parcels/autocomplete',
    {
      schema: {
        tags,
        summary: 'Suggestions for a search box as the user types an owner name or an address',
        querystring: AutocompleteQuery,
        response: { 200: Type.Object({ data: Type.Array(Suggestion), meta: Meta }), ...commonErrors },
      },
    },
    async (request) => ({ data: await autocompleteParcels(app.sql, request.query), meta: meta(request) }),
  );

  app.get(
    '/parcels/by-parcel-id',
    {
      config: { formats: ['geojson'] },
      schema: {
        tags,
        summary: 'One parcel by county and county parcel id (punctuation-insensitive), with its polygon',
        querystring: ByParcelIdQuery,
        response: { 200: ObjectEnvelope(ParcelHit), 404: ErrorEnvelope, ...commonErrors },
      },
    },
    async (request) => {
      const { county, parcel_id } = request.query;
      const parcel = await getParcelByParcelId(app.sql, county, parcel_id);
      if (!parcel) throw notFound(`No parcel '${parcel_id}' in county '${county}'.`);
      return { data: parcel, meta: meta(request) };
    },
  );

  app.get(
    '/parcels/:id',
    {
      config: { formats: ['geojson'] },
      schema: {
        tags,
        summary: 'One parcel by internal id, with its polygon',
        params: ParcelParams,
        response: { 200: ObjectEnvelope(ParcelHit), 404: ErrorEnvelope, ...commonErrors },
      },
    },
    async (request) => {
      const parcel = await getParcel(app.sql, request.params.id);
      if (!parcel) throw notFound(`No parcel with id ${request.params.id}.`);
      return { data: parcel, meta: meta(request) };
    },
  );

  app.get(
    '/parcels/:id/sales',
    {
      config: { formats: ['csv'] },
      schema: {
        tags,
        summary: "A parcel's sale and deed history, newest first",
        params: ParcelParams,
        querystring: PageQuery,
        response: { 200: ListEnvelope(SaleHit), 404: ErrorEnvelope, ...commonErrors },
      },
    },
    async (request) => {
      const sales = await listParcelSales(app.sql, request.params.id, request.query.limit, request.query.offset);
      if (!sales) throw notFound(`No parcel with id ${request.params.id}.`);
      return { ...sales, meta: meta(request) };
    },
  );

  app.get(
    '/parcels/:id/history',
    {
      schema: {
        tags,
        summary: "A parcel's roll years, newest first, with what changed from the year before",
        params: ParcelParams,
        response: { 200: ObjectEnvelope(Type.Array(ParcelRoll)), 404: ErrorEnvelope, ...commonErrors },
      },
    },
    async (request) => {
      const history = await getParcelHistory(app.sql, request.params.id);
      if (!history) throw notFound(`No parcel with id ${request.params.id}.`);
      return { data: history, meta: meta(request) };
    },
  );
};
export default parcels;
