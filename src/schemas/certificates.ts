// CertificatePayoff and ParcelCertificates (docs/certificates.md) and their parameters.
import { Type, type Static } from '@sinclair/typebox';
import { DateParam } from './common.ts';

const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Number>>(
  schema: T,
  description: string,
) => Type.Union([schema, Type.Null()], { description });
const Money = (description: string) => Type.Number({ description: `${description} (USD).` });
const Day = (description: string) => Type.String({ description: `${description}, YYYY-MM-DD.` });

const payoffFields = {
  id: Type.String({ description: 'The delinquency record id (DelinquencyHit id).' }),
  county_slug: Type.String(),
  county_parcel_id: Type.String(),
  tax_year: Type.Union([Type.Integer(), Type.Null()]),
  certificate_number: Nullable(Type.String(), 'Tax-certificate number.'),
  status: Nullable(Type.String(), 'Status in the feed.'),
  certificate_holder: Nullable(Type.String(), 'Holder as the feed writes it.'),
  holder_kind: Type.String({ description: 'county (struck to the county, not bought) or individual, on as_of.' }),
  as_of: Day('The day the payoff is for'),
  certificate_date: Day("The certificate's date, the first day of the sale"),
  county_purchase_date: Nullable(Type.String(), 'Day a county-held certificate was bought over the counter.'),
  face_at_issue: Money('Face amount at issue'),
  purchase_months: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Bought from the county by as_of: months of 1.5% from the certificate date to the purchase.',
  }),
  purchase_price: Nullable(Type.Number(), 'Bought from the county by as_of: what the buyer paid, the new face (USD).'),
  face_amount: Money('The face interest runs on'),
  rate: Type.Number({ description: 'Interest rate, percent a year: the bid, or 18 for county-held.' }),
  interest_from: Day('The day interest runs from: the certificate date or the purchase date'),
  months: Type.Integer({ description: 'Months counted, a part of a month as a whole month.' }),
  month_of_issue_counted: Type.Boolean({ description: "The county's reading: whether the first month counts." }),
  computed_interest: Money('face x rate x months / 12'),
  minimum_interest: Money('5% of face (0 for a 0% bid)'),
  minimum_applied: Type.Boolean({ description: 'Whether the 5% minimum replaced the computed interest.' }),
  interest: Money('Interest due'),
  redemption_fee: Money('Redemption fee, kept by the tax collector'),
  payer_pays: Money('What the payer pays: face + interest + fee'),
  holder_receives: Money('What the holder receives: face + interest'),
  deed_application_from: Day('First day the holder may apply for a tax deed'),
  deed_eligible: Type.Boolean({ description: 'Whether as_of is on or after deed_application_from.' }),
  expires_on: Nullable(Type.String(), 'Last day before cancellation; null when the clock is stopped.'),
  rules: Type.Record(Type.String(), Type.String(), {
    description: 'For each number, the code of the rule it came from (docs/certificates.md).',
  }),
};

export const CertificatePayoff = Type.Object(payoffFields, { $id: 'CertificatePayoff' });
export type CertificatePayoff = Static<typeof CertificatePayoff>;

export const ParcelCertificate = Type.Object({
  ...payoffFields,
  redeem_others: Money('What this holder must pay to redeem the other certificates when applying for a deed'),
  deed_application_cost: Money(
    'redeem_others + the unsold delinquent taxes + the deed application fee (current taxes and clerk costs not included)',
  ),
});

export const UnsoldDelinquency = Type.Object({
  id: Type.String(),
  tax_year: Type.Union([Type.Integer(), Type.Null()]),
  status: Nullable(Type.String(), 'Status in the feed.'),
  delinquent_amount: Nullable(Type.Number(), 'USD.'),
  total_due: Nullable(Type.Number(), 'USD.'),
});

export const ParcelCertificates = Type.Object(
  {
    parcel_id: Type.String({ description: 'Internal parcel id.' }),
    county_slug: Type.String(),
    county_parcel_id: Type.String(),
    as_of: Day('The day the payoffs are for'),
    certificates: Type.Array(ParcelCertificate, { description: 'Open certificates, oldest first.' }),
    certificates_total: Money('Sum of payer_pays'),
    unsold_delinquencies: Type.Array(UnsoldDelinquency, {
      description: 'Delinquency records without a certificate (not redeemed), newest tax year first.',
    }),
    unsold_total: Money('Sum of their total_due (delinquent_amount when no total_due)'),
    deed_application_fee: Money("The county's tax deed application fee"),
  },
  { $id: 'ParcelCertificates' },
);
export type ParcelCertificates = Static<typeof ParcelCertificates>;

export const RecordParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Delinquency record id.' }),
});
export const AsOfQuery = Type.Object({
  as_of: Type.Optional(DateParam('The day to compute for; default today in Florida')),
});
