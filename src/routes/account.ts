// GET /account/usage: the calling key's client, this UTC month, including requests not yet flushed.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { getAccountUsage } from '../queries/account.ts';
import { AccountUsage } from '../schemas/account.ts';
import { ObjectEnvelope, commonErrors, meta } from '../schemas/common.ts';
import { periodOf } from '../metering/periods.ts';

const account: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/account/usage',
    {
      config: { free: true },
      schema: {
        tags: ['account'],
        summary: "This month's usage of the calling key's client",
        response: { 200: ObjectEnvelope(AccountUsage), ...commonErrors },
      },
    },
    async (request) => {
      const auth = request.auth!;
      const data = await app.withPendingUsage(auth, periodOf(Date.now()), (pending) =>
        getAccountUsage(app.primarySql, auth.clientId, auth.mode, pending),
      );
      return { data, meta: meta(request) };
    },
  );
};
export default account;
