// FDOR SDF (Sale Data File) -> core.sales, upserted on the sale's natural key. FDOR sales carry no names and no
// deed type: grantor, grantee and deed_code stay NULL. Dates have month precision: the 1st of SALE_YR/SALE_MO.
import { dorUseCode } from './codes.ts';
import { ImportError } from './errors.ts';
import { countyOfRow, parcelIdOf } from './nal.ts';
import {
  runImport,
  type Getter,
  type ImportOptions,
  type ImportSummary,
  type Kind,
  type RowContext,
} from './pipeline.ts';
import { int, MAX_BIGINT, RowError, saleMonth, text } from './values.ts';

/** The 23 columns of the public SDF CSV (2026P), in order: the layout of header-less (legacy) files. */
export const SDF_COLUMNS = [
  'CO_NO',
  'PARCEL_ID',
  'ASMNT_YR',
  'ATV_STRT',
  'GRP_NO',
  'DOR_UC',
  'NBRHD_CD',
  'MKT_AR',
  'CENSUS_BK',
  'SALE_ID_CD',
  'SAL_CHG_CD',
  'VI_CD',
  'OR_BOOK',
  'OR_PAGE',
  'CLERK_NO',
  'QUAL_CD',
  'SALE_YR',
  'SALE_MO',
  'SALE_PRC',
  'MULTI_PAR_SAL',
  'RS_ID',
  'MP_ID',
  'STATE_PARCEL_ID',
] as const;

const ALIASES: Record<string, string[]> = {
  CO_NO: ['CONO', 'COUNTY_NO', 'CNTY_NO'],
  PARCEL_ID: ['PARCELID', 'PARCEL_NO', 'PARCELNO'],
  SAL_CHG_CD: ['SAL_CHNG_CD', 'SALE_CHG_CD'],
  STATE_PARCEL_ID: ['STATE_PAR_ID'],
  SALE_PRC: ['SALE_PRICE', 'SALEPRC'],
  QUAL_CD: ['QUAL_CODE', 'SALE_QUAL_CD'],
  MULTI_PAR_SAL: ['MULTI_PAR_SALE', 'MULTIPAR'],
  DOR_UC: ['DORUC', 'DOR_USE_CD'],
  CLERK_NO: ['CLERK_NUM', 'INSTRUMENT_NO'],
};

const STAGE_COLUMNS = [
  'county_id',
  'parcel_id',
  'sale_date',
  'sale_price',
  'book',
  'page',
  'instrument_number',
  'qualification_code',
  'vacant_improved',
  'multi_parcel',
  'sale_id_code',
  'dor_use_code',
] as const;

function mapRow(get: Getter, ctx: RowContext) {
  const countyId = countyOfRow(get, ctx);
  const parcelId = parcelIdOf(get);
  const saleDate = saleMonth('SALE_YR', get('SALE_YR'), get('SALE_MO'));
  if (saleDate === null) throw new RowError('SALE_YR: missing');
  const multi = text(get('MULTI_PAR_SAL'));
  return [
    countyId,
    parcelId,
    saleDate,
    int('SALE_PRC', get('SALE_PRC'), 0, MAX_BIGINT, true),
    text(get('OR_BOOK')),
    text(get('OR_PAGE')),
    text(get('CLERK_NO')),
    text(get('QUAL_CD')), // verbatim: code lists changed over the years, `1` is not silently `01`
    text(get('VI_CD')),
    multi === null ? false : !/^(N|NO|0|F|FALSE)$/i.test(multi),
    text(get('SALE_ID_CD')),
    dorUseCode(get('DOR_UC')),
  ];
}

export const sdfKind: Kind = {
  kind: 'sdf',
  label: 'an SDF sales file',
  stage: 'ingest.sdf_stage',
  stageColumns: STAGE_COLUMNS,
  layout: {
    columns: SDF_COLUMNS,
    aliases: ALIASES,
    required: ['CO_NO', 'PARCEL_ID', 'SALE_YR', 'SALE_MO'],
    positional: SDF_COLUMNS,
  },
  check: (ctx) => {
    if (ctx.county) throw new ImportError('--county is not used by sdf: rows are routed by their CO_NO');
  },
  row: mapRow,
  dedupeKey: 'x.county_id, x.parcel_id, x.sale_date, x.book, x.page, x.instrument_number, x.sale_price',
  merge: async (tx, loadId, countyId) => {
    const [r] = await tx<{ inserted: number; updated: number }[]>`
      SELECT inserted::int, updated::int FROM ingest.merge_sdf(${loadId}, ${countyId}::smallint)`;
    return { ...r! };
  },
};

export const importSdf = (options: ImportOptions): Promise<ImportSummary> => runImport(sdfKind, options);
