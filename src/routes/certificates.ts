// GET /tax-delinquencies/{id}/payoff and /parcels/{id}/certificates: certificate arithmetic (docs/certificates.md).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { notFound } from '../errors.ts';
import { getCertificatePayoff, getParcelCertificates } from '../queries/certificates.ts';
import { ErrorEnvelope, ObjectEnvelope, commonErrors, meta } from '../schemas/common.ts';
import { AsOfQuery, CertificatePayoff, ParcelCertificates, RecordParams } from '../schemas/certificates.ts';
import { ParcelParams } from '../schemas/parcels.ts';

const certificates: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/tax-delinquencies/:id/payoff',
    {
      schema: {
        tags: ['tax-delinquencies'],
        summary: "A certificate's payoff on a day (default today in Florida), its deed application date and expiry",
        params: RecordParams,
        querystring: AsOfQuery,
        response: { 200: ObjectEnvelope(CertificatePayoff), 404: ErrorEnvelope, ...commonErrors },
      },
    },
    async (request) => {
      const payoff = await getCertificatePayoff(app.sql, request.params.id, request.query.as_of);
      if (!payoff) throw notFound(`No delinquency record with id ${request.params.id}.`);
      return { data: payoff, meta: meta(request) };
    },
  );

  app.get(
    '/parcels/:id/certificates',
    {
      schema: {
        tags: ['parcels'],
        summary: "A parcel's open certificates with their payoffs, what a deed applicant must redeem, unsold taxes",
        params: ParcelParams,
        querystring: AsOfQuery,
        response: { 200: ObjectEnvelope(ParcelCertificates), 404: ErrorEnvelope, ...commonErrors },
      },
    },
    async (request) => {
      const data = await getParcelCertificates(app.sql, request.params.id, request.query.as_of);
      if (!data) throw notFound(`No parcel with id ${request.params.id}.`);
      return { data, meta: meta(request) };
    },
  );
};
export default certificates;
