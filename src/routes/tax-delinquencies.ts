// GET /tax-delinquencies/{search,by-parcel,counts,sources,sources/{county},freshness}.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../errors.ts';
import {
  countTaxDelinquencies,
  getTaxDelinquenciesByParcel,
  getTaxDelinquencyFreshness,
  listTaxDelinquencySources,
  listTaxDelinquencySourcesByCounty,
  searchTaxDelinquencies,
} from '../queries/tax-delinquencies.ts';
import { ErrorEnvelope, ListEnvelope, ObjectEnvelope, commonErrors, meta } from '../schemas/common.ts';
import {
  ByParcelQuery,
  CountsQuery,
  DelinquencyCounts,
  DelinquencyFreshness,
  DelinquencyHit,
  SearchQuery,
  SourcesParams,
  SourcesQuery,
  TaxDelinquencySource,
} from '../schemas/tax-delinquencies.ts';

const tags = ['tax-delinquencies'];

const taxDelinquencies: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/tax-delinquencies/search',
    {
      config: { formats: ['csv'] },
      schema: {
        tags,
        summary: 'Search delinquency and tax-certificate records',
        querystring: SearchQuery,
        response: { 200: ListEnvelope(DelinquencyHit), ...commonErrors },
      },
    },
    async (request) => ({ ...(await searchTaxDelinquencies(app.sql, request.query)), meta: meta(request) }),
  );

  app.get(
    '/tax-delinquencies/by-parcel',
    {
      config: { formats: ['csv'] },
      schema: {
        tags,
        summary: "One parcel's delinquency records, newest tax year first (empty when current or not covered)",
        querystring: ByParcelQuery,
        response: { 200: ListEnvelope(DelinquencyHit), ...commonErrors },
      },
    },
    async (request) => ({ ...(await getTaxDelinquenciesByParcel(app.sql, request.query)), meta: meta(request) }),
  );

  app.get(
    '/tax-delinquencies/counts',
    {
      schema: {
        tags,
        summary: 'Records per status, most frequent first; no status counts as unknown',
        querystring: CountsQuery,
        response: { 200: ObjectEnvelope(DelinquencyCounts), ...commonErrors },
      },
    },
    async (request) => ({ data: await countTaxDelinquencies(app.sql, request.query), meta: meta(request) }),
  );

  app.get(
    '/tax-delinquencies/sources',
    {
      config: { formats: ['csv'] },
      schema: {
        tags,
        summary: 'Delinquency feed sources, one per county and tax year (limit default 100, maximum 500)',
        querystring: SourcesQuery,
        response: { 200: ListEnvelope(TaxDelinquencySource), ...commonErrors },
      },
    },
    async (request) => ({ ...(await listTaxDelinquencySources(app.sql, request.query)), meta: meta(request) }),
  );

  app.get(
    '/tax-delinquencies/sources/:county',
    {
      config: { formats: ['csv'] },
      schema: {
        tags,
        summary: 'Every feed source of one county, newest tax year first (404 for an unknown slug)',
        params: SourcesParams,
        response: { 200: ListEnvelope(TaxDelinquencySource), 404: ErrorEnvelope, ...commonErrors },
      },
    },
    async (request) => {
      const page = await listTaxDelinquencySourcesByCounty(app.sql, request.params.county);
      if (!page) throw notFound(`No county with slug '${request.params.county}'.`);
      return { ...page, meta: meta(request) };
    },
  );

  app.get(
    '/tax-delinquencies/freshness',
    {
      schema: {
        tags,
        summary: 'How current the delinquency data is (object envelope)',
        response: { 200: ObjectEnvelope(DelinquencyFreshness), ...commonErrors },
      },
    },
    async (request) => ({ data: await getTaxDelinquencyFreshness(app.sql), meta: meta(request) }),
  );
};
export default taxDelinquencies;
