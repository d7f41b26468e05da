// SaleHit and the parameters of sale search.
import { Type, type Static } from '@sinclair/typebox';
import { Amount, CodeList, CountyList, DateParam, Limit, Offset, StringEnum } from './common.ts';

const S = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

export const SaleHit = Type.Object(
  {
    id: Type.String({ description: 'Sale id.' }),
    county_slug: Type.String(),
    county_parcel_id: Type.String({ description: 'Parcel id as the county writes it.' }),
    sale_date: Type.String({ description: 'YYYY-MM-DD (FDOR sales are month precision: the 1st of the month).' }),
    sale_price: Type.Union([Type.Number(), Type.Null()], { description: 'Dollars.' }),
    book: S('Official records book.'),
    page: S('Official records page.'),
    instrument_number: S('Clerk instrument number.'),
    deed_code: S('Raw deed / instrument code (WD warranty deed, QCD quit-claim …); null when the source has none.'),
    qualification_code: S('Raw FDOR sale qualification code (01 qualified arm’s length, 11 disqualified …).'),
    grantor: S('Seller; null when the source (FDOR SDF) has none.'),
    grantee: S('Buyer; null when the source has none.'),
  },
  { $id: 'SaleHit' },
);
export type SaleHit = Static<typeof SaleHit>;

export const SaleSearchQuery = Type.Object({
  county: Type.Optional(CountyList),
  from: Type.Optional(DateParam('Sales on or after')),
  to: Type.Optional(DateParam('Sales on or before')),
  min_price: Type.Optional(Amount('Lowest sale price.')),
  max_price: Type.Optional(Amount('Highest sale price.')),
  use_code: Type.Optional(CodeList('DOR use code(s) recorded with the sale: 01, 001 and 0100 all mean single family.')),
  sort: Type.Optional(
    StringEnum(
      ['date_newest', 'date_oldest', 'price_desc', 'price_asc'] as const,
      'date_newest (default), date_oldest, price_desc, price_asc; ties by id.',
    ),
  ),
  limit: Limit(),
  offset: Offset,
});
export type SaleSearchQuery = Static<typeof SaleSearchQuery>;
