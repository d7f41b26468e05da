// Every /v1 resource, registered once per base path (/v1 and /api/v1). Auth and metering hooks go on this scope.
import type { FastifyPluginAsync } from 'fastify';
import account from './account.ts';
import counties from './counties.ts';
import parcels from './parcels.ts';
import sales from './sales.ts';
import taxDelinquencies from './tax-delinquencies.ts';

/**
 * `guard: 'none'` (or 'auth') serves the routes without auth and metering, and 'auth+round trip' with auth and
 * metering's bare Redis round trip (plugins/round-trip-floor.ts): only the overhead benchmark does that.
 */
export interface ApiRoutesOptions {
  guard?: 'auth+meter' | 'auth+round trip' | 'auth' | 'none';
}

const apiRoutes: FastifyPluginAsync<ApiRoutesOptions> = async (app, opts) => {
  const guard = opts.guard ?? 'auth+meter';
  if (guard !== 'none') app.addHook('onRequest', app.authenticate('rest'));
  if (guard === 'auth+meter') {
    app.addHook('onRequest', app.meter('rest'));
    app.addHook('onSend', app.awaitAdmission);
  }
  if (guard === 'auth+round trip') {
    app.addHook('onRequest', app.roundTrip.onRequest);
    app.addHook('onSend', app.roundTrip.onSend);
  }
  await app.register(account);
  await app.register(counties);
  await app.register(parcels);
  await app.register(sales);
  await app.register(taxDelinquencies);
};
export default apiRoutes;
