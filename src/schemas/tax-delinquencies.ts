// DelinquencyHit, TaxDelinquencySource, freshness and counts and their parameters.
import { Type, type Static } from '@sinclair/typebox';
import {
  Amount,
  CountyList,
  CountySlug,
  DateParam,
  Limit,
  Offset,
  PAGE_LIMIT_MAX,
  StringEnum,
  TextParam,
} from './common.ts';

const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Number>>(
  schema: T,
  description: string,
) => Type.Union([schema, Type.Null()], { description });
const NullableString = (description: string) => Nullable(Type.String(), description);
const NullableNumber = (description: string) => Nullable(Type.Number(), description);

export const DelinquencyHit = Type.Object(
  {
    id: Type.String({ description: 'Opaque record id.' }),
    county_slug: Type.String({ description: 'County slug, for example miami-dade.' }),
    county_parcel_id: Type.String({ description: 'Parcel id as the county writes it.' }),
    tax_year: Type.Union([Type.Integer(), Type.Null()], { description: 'Tax year the delinquency is for.' }),
    status: NullableString('certificate_sold, delinquent, redeemed, open, struck ...; null when the feed gives none.'),
    delinquent_amount: NullableNumber('Delinquent amount in USD.'),
    total_due: NullableNumber('Total amount due in USD.'),
    certificate_number: NullableString('Tax-certificate number.'),
    certificate_sale_date: NullableString('Certificate sale date, YYYY-MM-DD.'),
    owner_name: NullableString('Owner name as the feed writes it.'),
    site_address_full: NullableString('Site address.'),
    source_vendor: NullableString('Feed vendor, for example LienHub or RealTaxLien.'),
    face_amount: NullableNumber('Certificate face amount in USD.'),
    certificate_holder: NullableString('Certificate holder (bidder or the county when struck).'),
    certificate_interest_rate: NullableNumber('Certificate interest rate, percent (0-18).'),
    bid_rate: NullableNumber('Winning bid rate, percent.'),
    deed_application_from: NullableString(
      'Open certificates: the first day its holder may apply for a tax deed (April 1 of the second year after its date, s. 197.502), YYYY-MM-DD.',
    ),
    expires_on: NullableString(
      'Open certificates: the last day before it is cancelled, 7 years after its date (s. 197.482), YYYY-MM-DD; null when a deed application or proceeding stopped the clock.',
    ),
    payoff_today: NullableNumber(
      'Open certificates: what redeeming it costs today in Florida in USD (payer_pays of /tax-delinquencies/{id}/payoff); null when it has no payoff today.',
    ),
  },
  { $id: 'DelinquencyHit' },
);
export type DelinquencyHit = Static<typeof DelinquencyHit>;

export const TaxDelinquencySource = Type.Object(
  {
    id: Type.String(),
    countyId: Type.String(),
    countySlug: Type.String(),
    taxYear: Type.Integer(),
    vendor: Type.String({ description: 'Source vendor name.' }),
    saleUrl: Type.String({ description: 'Certificate-sale portal address.' }),
    downloadUrl: NullableString('Bulk download address, when there is one.'),
    sourceKind: Type.String({ description: 'For example cert_sale_portal, bulk_download.' }),
    requiresLogin: Type.Boolean(),
    lastCheckedAt: NullableString('ISO 8601 UTC.'),
    lastSuccessAt: NullableString('ISO 8601 UTC.'),
    lastError: NullableString('Last error of the feed, if any.'),
    active: Type.Boolean(),
    notes: Type.String(),
    createdAt: Type.String({ description: 'ISO 8601 UTC.' }),
    updatedAt: Type.String({ description: 'ISO 8601 UTC.' }),
  },
  { $id: 'TaxDelinquencySource' },
);
export type TaxDelinquencySource = Static<typeof TaxDelinquencySource>;

export const DelinquencyFreshness = Type.Object(
  {
    total: Type.Integer({ description: 'Delinquency records loaded.' }),
    latest_tax_year: Type.Union([Type.Integer(), Type.Null()], { description: 'Newest tax year loaded.' }),
    last_ingested_at: NullableString('ISO 8601 UTC time records were last ingested.'),
    last_source_success_at: NullableString('ISO 8601 UTC time of the latest successful source check.'),
  },
  { $id: 'DelinquencyFreshness' },
);
export type DelinquencyFreshness = Static<typeof DelinquencyFreshness>;

export const StatusCount = Type.Object({ status: Type.String(), count: Type.Integer() });
export type StatusCount = Static<typeof StatusCount>;
export const DelinquencyCounts = Type.Object(
  {
    county: Type.Union([Type.String(), Type.Null()], { description: 'Applied county scope; null is statewide.' }),
    tax_year: Type.Union([Type.Integer(), Type.Null()], { description: 'Applied tax year; null is all years.' }),
    counts: Type.Array(StatusCount, { description: 'Descending count, ties by status name.' }),
  },
  { $id: 'DelinquencyCounts' },
);

const TaxYear = Type.Integer({ minimum: 1900, maximum: 2100, description: 'Tax year, for example 2024.' });
export const SearchQuery = Type.Object({
  county: Type.Optional(CountyList),
  tax_year: Type.Optional(TaxYear),
  status: Type.Optional(TextParam(40, "Status, case-insensitive; 'unknown' matches records with no status.")),
  min_due: Type.Optional(Amount('Lowest total_due in dollars, inclusive.')),
  max_due: Type.Optional(Amount('Highest total_due in dollars, inclusive.')),
  parcel_id: Type.Optional(TextParam(100, 'County parcel id, punctuation-insensitive.')),
  owner: Type.Optional(TextParam(200, 'Owner name, case-insensitive contains.')),
  vendor: Type.Optional(TextParam(80, 'Source vendor, case-insensitive.')),
  certificate_number: Type.Optional(TextParam(80, 'Tax-certificate number, exact.')),
  deed_eligible: Type.Optional(
    Type.Boolean({
      description:
        'true: open certificates whose deed application date has passed and that have not expired (today in Florida); false: every other record.',
    }),
  ),
  expires_before: Type.Optional(DateParam('Open certificates expiring strictly before this day')),
  expires_after: Type.Optional(DateParam('Open certificates expiring strictly after this day')),
  sort: Type.Optional(
    StringEnum(
      ['due_desc', 'due_asc', 'year_newest', 'expires_soonest'],
      'due_desc (default), due_asc, year_newest or expires_soonest (open certificates first, soonest expiry first); ties by id.',
    ),
  ),
  limit: Limit(),
  offset: Offset,
});
export type SearchQuery = Static<typeof SearchQuery>;

export const ByParcelQuery = Type.Object({
  parcel_id: TextParam(100, 'County parcel id, punctuation-insensitive.'),
  county: Type.Optional(CountySlug),
  limit: Limit(),
  offset: Offset,
});

export const CountsQuery = Type.Object({
  county: Type.Optional(CountySlug),
  tax_year: Type.Optional(TaxYear),
});

export const SOURCES_MAX_LIMIT = PAGE_LIMIT_MAX;
export const SourcesQuery = Type.Object({
  county: Type.Optional(CountySlug),
  vendor: Type.Optional(TextParam(80, 'Vendor name, case-insensitive contains.')),
  source_kind: Type.Optional(TextParam(40, 'Source kind, for example cert_sale_portal or bulk_download.')),
  active: Type.Optional(Type.Boolean({ description: 'true: only active sources; false: only inactive.' })),
  limit: Limit(SOURCES_MAX_LIMIT, 100),
  offset: Offset,
});

export const SourcesParams = Type.Object({ county: CountySlug });
