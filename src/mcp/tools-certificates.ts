// MCP tools of certificate arithmetic (docs/certificates.md): a certificate's payoff and a parcel's certificates,
// over the same src/queries/ as REST.
import { Type, type TSchema } from '@sinclair/typebox';
import { notFound } from '../errors.ts';
import { getCertificatePayoff, getParcelCertificates } from '../queries/certificates.ts';
import { AsOfQuery, CertificatePayoff, ParcelCertificates, RecordParams } from '../schemas/certificates.ts';
import { ObjectEnvelope } from '../schemas/common.ts';
import { ParcelParams } from '../schemas/parcels.ts';
import type { Tool } from './tools.ts';

// tools.ts imports this module to list its tools, so a value imported back from tools.ts would not exist yet while
// this one loads: only its types are imported, and defineTool's one-line cast is repeated here.
const defineTool = <S extends TSchema>(tool: Tool<S>) => tool as unknown as Tool;

const usd = (n: number) => `$${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
const RULES =
  'Florida chapter 197: interest at the bid rate (18% for county-held) per month from the first of each month, a ' +
  'part of a month counted whole; at least 5% of face unless the bid was 0%; a $6.25 redemption fee the tax ' +
  'collector keeps; deed application from April 1 of the second year after the certificate date; cancellation 7 ' +
  'years after it. Amounts are dollars; each number carries a rule code in `rules`.';

export const certificateTools = [
  defineTool({
    name: 'get_certificate_payoff',
    title: "A tax certificate's payoff and deadlines",
    description:
      'What redeeming one tax certificate costs on a day (`as_of`, YYYY-MM-DD, default today in Florida): face, ' +
      'rate, months counted, interest, whether the 5% minimum applied, the fee, what the payer pays and what the ' +
      'holder receives, the date the holder may apply for a tax deed and whether it has come, and the expiry. `id` ' +
      `is a delinquency record id from search_tax_delinquencies or get_parcel_tax_delinquencies. ${RULES} A record ` +
      'without a certificate, one redeemed or cancelled, or an as_of before the certificate date is an error that ' +
      'says which.',
    input: Type.Object({ id: RecordParams.properties.id, as_of: AsOfQuery.properties.as_of }),
    output: ObjectEnvelope(CertificatePayoff),
    run: async ({ app }, { id, as_of }) => {
      const data = await getCertificatePayoff(app.sql, id, as_of);
      if (!data) throw notFound(`No delinquency record with id ${id}.`);
      return {
        structured: { data },
        summary:
          `Certificate ${data.certificate_number ?? data.id} on ${data.as_of}: ${data.months} months at ${data.rate}%, ` +
          `interest ${usd(data.interest)}${data.minimum_applied ? ' (the 5% minimum)' : ''}; the payer pays ` +
          `${usd(data.payer_pays)}, the holder receives ${usd(data.holder_receives)}. Deed application from ` +
          `${data.deed_application_from}${data.expires_on ? `; expires ${data.expires_on}` : ''}.`,
      };
    },
  }),
  defineTool({
    name: 'get_parcel_certificates',
    title: "A parcel's open tax certificates and what a deed applicant must pay",
    description:
      'Every open tax certificate of one parcel (`id` from search_parcels or get_parcel) with its payoff on `as_of` ' +
      '(default today in Florida), and for each what its holder must pay to apply for a tax deed: redeem the ' +
      'other certificates (redeem_others) plus the delinquent taxes not yet sold and the county fee ' +
      `(deed_application_cost; current taxes and clerk costs not included). Also lists the unsold delinquencies. ${RULES}`,
    input: Type.Object({ id: ParcelParams.properties.id, as_of: AsOfQuery.properties.as_of }),
    output: ObjectEnvelope(ParcelCertificates),
    run: async ({ app }, { id, as_of }) => {
      const data = await getParcelCertificates(app.sql, id, as_of);
      if (!data) throw notFound(`No parcel with id ${id}.`);
      return {
        structured: { data },
        summary:
          `${data.certificates.length} open certificates on ${data.county_parcel_id} (${data.county_slug}) as of ` +
          `${data.as_of}, payoff ${usd(data.certificates_total)}; ${data.unsold_delinquencies.length} unsold ` +
          `delinquencies, ${usd(data.unsold_total)}.`,
      };
    },
  }),
];
