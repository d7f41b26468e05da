// ParcelHit and the parameters of the parcel routes.
import { Type, type Static } from '@sinclair/typebox';
import {
  Amount,
  CodeList,
  CountyList,
  CountySlug,
  DateParam,
  Limit,
  ListParam,
  Meta,
  Offset,
  Pagination,
  StringEnum,
  TextParam,
} from './common.ts';

const Nullable = <
  T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Number> | ReturnType<typeof Type.Integer>,
>(
  schema: T,
) => Type.Union([schema, Type.Null()], { description: schema.description });
const S = (description: string) => Nullable(Type.String({ description }));
const N = (description: string) => Nullable(Type.Number({ description }));

export const ParcelHit = Type.Object(
  {
    id: Type.Integer({ description: 'Internal parcel id: GET /v1/parcels/{id} and /v1/parcels/{id}/sales.' }),
    parcel_id: Type.String({ description: 'County-assigned parcel id (folio, PIN) as the county writes it.' }),
    county_slug: Type.String(),
    county_name: Type.String(),
    owner_name: S('Owner of record.'),
    site_address_full: S('Situs (physical) address.'),
    site_city: S('Situs city; UNINCORPORATED outside cities.'),
    site_state: S('FL.'),
    site_zip: S('Situs ZIP code.'),
    dor_use_code: S('Statewide DOR land-use code, 4 characters (0100 single family, 0400 condominium).'),
    property_use_code: S("The appraiser's own use code."),
    land_use_description: S('Description of the DOR use code.'),
    just_value: N('Just (market) value, dollars.'),
    assessed_value: N('Assessed value (non-school), dollars: just value after caps.'),
    taxable_value: N('Taxable value (non-school), dollars: assessed value after exemptions.'),
    year_built: Nullable(Type.Integer({ description: 'Actual year built; null for vacant land.' })),
    last_sale_date: S('Last sale, YYYY-MM-DD (FDOR dates are month precision: the 1st of the month).'),
    last_sale_price: N('Last sale price, dollars.'),
    centroid_lat: N('Latitude of a point inside the parcel (WGS 84).'),
    centroid_lng: N('Longitude of a point inside the parcel (WGS 84).'),
    geometry: S(
      'GeoJSON Polygon or MultiPolygon (WGS 84) as a JSON string; null in search results and for unmapped parcels.',
    ),
  },
  { $id: 'ParcelHit' },
);
export type ParcelHit = Static<typeof ParcelHit>;

export const PARCEL_SORTS = [
  'relevance',
  'distance',
  'id',
  'just_value_asc',
  'just_value_desc',
  'assessed_value_asc',
  'assessed_value_desc',
  'taxable_value_asc',
  'taxable_value_desc',
  'last_sale_date_asc',
  'last_sale_date_desc',
  'last_sale_price_asc',
  'last_sale_price_desc',
  'year_built_asc',
  'year_built_desc',
] as const;
export const FACETS = ['county', 'dor_use_code', 'property_use_code', 'city', 'zip'] as const;

export const FacetCounts = Type.Record(
  Type.String(),
  Type.Array(Type.Object({ value: Type.Union([Type.String(), Type.Null()]), count: Type.Integer() })),
  {
    description: 'Per facet, counts per value over the whole filtered result, most frequent first, at most 100 values.',
  },
);
export type FacetCounts = Static<typeof FacetCounts>;

/** The answer of GET /v1/parcels/search; without `meta`, the search_parcels tool's structured content. */
export const ParcelSearchEnvelope = Type.Object({
  data: Type.Array(ParcelHit),
  pagination: Pagination,
  meta: Meta,
  facets: Type.Optional(FacetCounts),
});

/** The largest near radius in metres (SQL states the same bound: search.near_radius_max_m()). */
export const NEAR_RADIUS_MAX_M = 50000;

export const ParcelSearchQuery = Type.Object({
  query: Type.Optional(TextParam(200, 'Owner name or site address, case-insensitive and typo-tolerant.')),
  county: Type.Optional(CountyList),
  use_code: Type.Optional(CodeList("The appraiser's property use code(s).")),
  dor_use_code: Type.Optional(CodeList('DOR use code(s): 01, 001 and 0100 all mean single family.')),
  city: Type.Optional(TextParam(80, 'Site city, case-insensitive.')),
  zip: Type.Optional(
    Type.String({ pattern: '^\\d{5}(-?\\d{4})?$', description: 'Site ZIP code (5 digits; ZIP+4 accepted).' }),
  ),
  just_value_min: Type.Optional(Amount('Lowest just value.')),
  just_value_max: Type.Optional(Amount('Highest just value.')),
  assessed_min: Type.Optional(Amount('Lowest assessed value.')),
  assessed_max: Type.Optional(Amount('Highest assessed value.')),
  sale_after: Type.Optional(DateParam('Last sale on or after')),
  sale_before: Type.Optional(DateParam('Last sale on or before')),
  sale_price_min: Type.Optional(Amount('Lowest last-sale price.')),
  sale_price_max: Type.Optional(Amount('Highest last-sale price.')),
  owner_changed_since: Type.Optional(
    Type.Integer({
      minimum: 1900,
      maximum: 2200,
      description: 'Roll year (YYYY): parcels whose owner changed in that roll year or later (docs/history.md).',
    }),
  ),
  just_value_change_min: Type.Optional(
    Type.Number({
      minimum: -100,
      maximum: 1e6,
      finite: true,
      description: 'Lowest just value change against the previous roll year, percent.',
    }),
  ),
  just_value_change_max: Type.Optional(
    Type.Number({
      minimum: -100,
      maximum: 1e6,
      finite: true,
      description: 'Highest just value change against the previous roll year, percent.',
    }),
  ),
  sort: Type.Optional(
    StringEnum(
      PARCEL_SORTS,
      'relevance (default with query), distance (default with near), id (default otherwise), or a field with _asc/_desc; ties by id.',
    ),
  ),
  facets: Type.Optional(
    ListParam(
      Type.String({ maxLength: 200, pattern: '^[a-z_,]+$' }),
      'Facets to count: county, dor_use_code, property_use_code, city, zip.',
    ),
  ),
  near: Type.Optional(
    Type.String({ maxLength: 60, description: 'Centre of a radius search as lat,lng (note: latitude first).' }),
  ),
  radius_m: Type.Optional(
    Type.Number({
      exclusiveMinimum: 0,
      maximum: NEAR_RADIUS_MAX_M,
      finite: true,
      description: `Radius around near in metres, at most ${NEAR_RADIUS_MAX_M}.`,
    }),
  ),
  bbox: Type.Optional(
    Type.String({
      maxLength: 120,
      description: 'Bounding box minLng,minLat,maxLng,maxLat: parcels that intersect it.',
    }),
  ),
  point: Type.Optional(
    Type.String({
      maxLength: 60,
      description:
        'A point as lng,lat (note: longitude first): parcels whose polygon contains it (both neighbours on a shared edge).',
    }),
  ),
  limit: Limit(),
  offset: Offset,
});
export type ParcelSearchQuery = Static<typeof ParcelSearchQuery>;

export const ParcelParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: 2147483647, description: 'Internal parcel id.' }),
});
export const ByParcelIdQuery = Type.Object({
  county: CountySlug,
  parcel_id: TextParam(100, 'County-assigned parcel id; punctuation-insensitive (01-3132-035-0010 = 0131320350010).'),
});
export const PageQuery = Type.Object({ limit: Limit(), offset: Offset });

/** The most suggestions autocomplete gives (SQL states the same bound: search.autocomplete_limit_max()). */
export const AUTOCOMPLETE_LIMIT_MAX = 20;
export const AutocompleteQuery = Type.Object({
  q: TextParam(
    200,
    'What the user has typed so far: owner name or site address; the last word is read as the start of a word.',
  ),
  county: Type.Optional(CountyList),
  limit: Limit(AUTOCOMPLETE_LIMIT_MAX, 10),
});
export type AutocompleteQuery = Static<typeof AutocompleteQuery>;

export const Suggestion = Type.Object({
  id: Type.Integer({ description: 'Internal parcel id (GET /v1/parcels/{id}).' }),
  label: Type.String({ description: 'What to show: the address with its city, or the owner name, whichever matched.' }),
  owner_name: Type.Union([Type.String(), Type.Null()]),
  site_address_full: Type.Union([Type.String(), Type.Null()]),
  site_city: Type.Union([Type.String(), Type.Null()]),
  county: Type.String({ description: 'County slug.' }),
});
export type Suggestion = Static<typeof Suggestion>;

const B = (description: string) => Type.Union([Type.Boolean(), Type.Null()], { description });
const I = (description: string) => Type.Union([Type.Integer(), Type.Null()], { description });

/** A sale that explains an owner change in the roll history (SaleHit's deed fields). */
export const HistorySale = Type.Object({
  id: Type.String(),
  sale_date: Type.String({ description: 'YYYY-MM-DD (FDOR sale dates are the 1st of the month).' }),
  sale_price: N('Dollars.'),
  book: S('Official records book.'),
  page: S('Official records page.'),
  instrument_number: S('Clerk instrument number.'),
  qualification_code: S("FDOR qualification code (01 = qualified arm's-length sale)."),
  grantor: S('Seller.'),
  grantee: S('Buyer.'),
});

/** One roll year of a parcel (api.parcel_roll). */
export const ParcelRoll = Type.Object({
  roll_year: Type.Integer({ description: 'Roll (assessment) year: values and owner as of January 1.' }),
  previous_roll_year: I('The roll year before on file, which the change fields compare with; null on the oldest row.'),
  owner_name: S('Owner of record.'),
  owner_address1: S('Mailing address, line 1.'),
  owner_address2: S('Mailing address, line 2.'),
  owner_city: S('Mailing city.'),
  owner_state: S('Mailing state (two letters).'),
  owner_zip: S('Mailing ZIP.'),
  site_address_full: S('Situs address that year.'),
  dor_use_code: S('DOR use code that year.'),
  property_use_code: S("The appraiser's use code that year."),
  just_value: N('Just (market) value, dollars.'),
  assessed_value: N('Assessed value (non-school), dollars.'),
  taxable_value: N('Taxable value (non-school), dollars.'),
  land_value: N('Land value, dollars.'),
  building_value: N('Just value minus land value (buildings and other improvements), dollars.'),
  living_area_sqft: I('Total living area, square feet.'),
  exemptions: Type.Union([Type.Record(Type.String(), Type.Number()), Type.Null()], {
    description:
      'Exemption amounts the roll carries, by FDOR exemption code ({"01": 25000}: homestead); null when none.',
  }),
  owner_changed: B('Owner name differs from the previous roll year (compared normalized); null on the oldest row.'),
  just_value_change: N("Just value minus the previous roll year's, dollars."),
  just_value_change_pct: N('Just value change against the previous roll year, percent (2 decimals).'),
  use_code_changed: B('DOR or appraiser use code differs from the previous roll year.'),
  sales: Type.Array(HistorySale, {
    description: 'When the owner changed: the SDF sales dated between the two rolls (January 1 each), newest first.',
  }),
});
export type ParcelRoll = Static<typeof ParcelRoll>;
