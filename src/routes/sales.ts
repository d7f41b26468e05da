// GET /sales/search.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { searchSales } from '../queries/sales.ts';
import { ListEnvelope, commonErrors, meta } from '../schemas/common.ts';
import { SaleHit, SaleSearchQuery } from '../schemas/sales.ts';

const sales: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/sales/search',
    {
      config: { formats: ['csv'] },
      schema: {
        tags: ['sales'],
        summary: 'Search recorded sales (deed transfers)',
        querystring: SaleSearchQuery,
        response: { 200: ListEnvelope(SaleHit), ...commonErrors },
      },
    },
    async (request) => ({ ...(await searchSales(app.sql, request.query)), meta: meta(request) }),
  );
};
export default sales;
