// GET /counties and GET /counties/{county}.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { notFound } from '../errors.ts';
import { getCounty, listCounties } from '../queries/counties.ts';
import { ObjectEnvelope, commonErrors, meta, ErrorEnvelope } from '../schemas/common.ts';
import { CountyParams, CountyRecord } from '../schemas/counties.ts';

const counties: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/counties',
    {
      config: { formats: ['csv'] },
      schema: {
        tags: ['counties'],
        summary: 'All 67 Florida counties, alphabetical by name',
        response: { 200: ObjectEnvelope(Type.Array(CountyRecord)), ...commonErrors },
      },
    },
    async (request) => ({ data: await listCounties(app.sql), meta: meta(request) }),
  );

  app.get(
    '/counties/:county',
    {
      schema: {
        tags: ['counties'],
        summary: 'One county by slug',
        params: CountyParams,
        response: { 200: ObjectEnvelope(CountyRecord), 404: ErrorEnvelope, ...commonErrors },
      },
    },
    async (request) => {
      const county = await getCounty(app.sql, request.params.county);
      if (!county) throw notFound(`No county with slug '${request.params.county}'.`);
      return { data: county, meta: meta(request) };
    },
  );
};
export default counties;
