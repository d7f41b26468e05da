// CountyRecord and the counties routes' parameters.
import { Type, type Static } from '@sinclair/typebox';
import { CountySlug } from './common.ts';

const NullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

export const CountyRecord = Type.Object(
  {
    id: Type.String({ description: 'Opaque county id.' }),
    countyName: Type.String({ description: 'Display name, for example Miami-Dade.' }),
    countySlug: Type.String({ description: 'Lowercase URL slug, for example miami-dade.' }),
    countyFips: NullableString('5-digit FIPS code (Miami-Dade is 12086).'),
    dorCountyNumber: NullableString('Revenue-department county number 01-67 (FDOR CO_NO minus 10).'),
    propertyAppraiserUrl: NullableString('County property-appraiser site.'),
    taxCollectorUrl: NullableString('County tax-collector site.'),
    taxCertificateSaleUrl: NullableString('Tax-certificate sale portal.'),
    taxCertificateVendor: NullableString('Certificate-sale vendor, for example LienHub or RealTaxLien.'),
    parcelCount: Type.Integer({ description: 'Parcels loaded for the county; 0 when none.' }),
    lastImportAt: NullableString('ISO 8601 UTC time of the last successful parcel import; null when none.'),
    createdAt: Type.String({ description: 'ISO 8601 UTC row creation time.' }),
    updatedAt: Type.String({ description: 'ISO 8601 UTC row update time.' }),
  },
  { $id: 'CountyRecord' },
);
export type CountyRecord = Static<typeof CountyRecord>;

export const CountyParams = Type.Object({ county: CountySlug });
