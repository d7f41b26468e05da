// Every /v1 resource, registered once per base path (/v1 and /api/v1) behind authentication and metering.
import type { FastifyPluginAsync } from 'fastify';
import account from './account.ts';
import certificates from './certificates.ts';
import counties from './counties.ts';
import parcels from './parcels.ts';
import sales from './sales.ts';
import savedSearches from './saved-searches.ts';
import taxDelinquencies from './tax-delinquencies.ts';
import tiles from './tiles.ts';
import webhooks from './webhooks.ts';

/** The resources alone, without a guard: what apiRoutes guards (and what a benchmark may serve bare). */
export const resources: FastifyPluginAsync = async (app) => {
  await app.register(account);
  await app.register(counties);
  await app.register(parcels);
  await app.register(sales);
  await app.register(taxDelinquencies);
  await app.register(certificates);
  await app.register(tiles);
  await app.register(webhooks);
  await app.register(savedSearches);
};

const apiRoutes: FastifyPluginAsync = async (app) => {
  app.addHook('onRequest', app.authenticate('rest'));
  app.addHook('onRequest', app.meter('rest'));
  app.addHook('onSend', app.awaitAdmission);
  await app.register(resources);
};
export default apiRoutes;
