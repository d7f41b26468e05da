// FDOR NAL (Name-Address-Legal) roll file -> core.parcels. Rows are routed by their CO_NO; each county present
// is replaced as a whole (a NAL file is the county's full roll).
import type postgres from 'postgres';
import { dorUseCode, dorUseDescription, stateCode } from './codes.ts';
import {
  runImport,
  type Getter,
  type ImportOptions,
  type ImportSummary,
  type Kind,
  type RowContext,
} from './pipeline.ts';
import { int, MAX_BIGINT, RowError, saleMonth, text } from './values.ts';
import { ImportError } from './errors.ts';

/** The 165 physical columns of the public NAL CSV (2026P), in order: the layout of header-less files. */
export const NAL_COLUMNS = [
  'CO_NO',
  'PARCEL_ID',
  'FILE_T',
  'ASMNT_YR',
  'BAS_STRT',
  'ATV_STRT',
  'GRP_NO',
  'DOR_UC',
  'PA_UC',
  'SPASS_CD',
  'JV',
  'JV_CHNG',
  'JV_CHNG_CD',
  'AV_SD',
  'AV_NSD',
  'TV_SD',
  'TV_NSD',
  'JV_HMSTD',
  'AV_HMSTD',
  'JV_NON_HMSTD_RESD',
  'AV_NON_HMSTD_RESD',
  'JV_RESD_NON_RESD',
  'AV_RESD_NON_RESD',
  'JV_CLASS_USE',
  'AV_CLASS_USE',
  'JV_H2O_RECHRGE',
  'AV_H2O_RECHRGE',
  'JV_CONSRV_LND',
  'AV_CONSRV_LND',
  'JV_HIST_COM_PROP',
  'AV_HIST_COM_PROP',
  'JV_HIST_SIGNF',
  'AV_HIST_SIGNF',
  'JV_WRKNG_WTRFNT',
  'AV_WRKNG_WTRFNT',
  'NCONST_VAL',
  'DEL_VAL',
  'PAR_SPLT',
  'DISTR_CD',
  'DISTR_YR',
  'LND_VAL',
  'LND_UNTS_CD',
  'NO_LND_UNTS',
  'LND_SQFOOT',
  'DT_LAST_INSPT',
  'IMP_QUAL',
  'CONST_CLASS',
  'EFF_YR_BLT',
  'ACT_YR_BLT',
  'TOT_LVG_AREA',
  'NO_BULDNG',
  'NO_RES_UNTS',
  'SPEC_FEAT_VAL',
  'MULTI_PAR_SAL1',
  'QUAL_CD1',
  'VI_CD1',
  'SALE_PRC1',
  'SALE_YR1',
  'SALE_MO1',
  'OR_BOOK1',
  'OR_PAGE1',
  'CLERK_NO1',
  'SAL_CHNG_CD1',
  'MULTI_PAR_SAL2',
  'QUAL_CD2',
  'VI_CD2',
  'SALE_PRC2',
  'SALE_YR2',
  'SALE_MO2',
  'OR_BOOK2',
  'OR_PAGE2',
  'CLERK_NO2',
  'SAL_CHNG_CD2',
  'OWN_NAME',
  'OWN_ADDR1',
  'OWN_ADDR2',
  'OWN_CITY',
  'OWN_STATE',
  'OWN_ZIPCD',
  'OWN_STATE_DOM',
  'FIDU_NAME',
  'FIDU_ADDR1',
  'FIDU_ADDR2',
  'FIDU_CITY',
  'FIDU_STATE',
  'FIDU_ZIPCD',
  'FIDU_CD',
  'S_LEGAL',
  'APP_STAT',
  'CO_APP_STAT',
  'MKT_AR',
  'NBRHD_CD',
  'PUBLIC_LND',
  'TAX_AUTH_CD',
  'TWN',
  'RNG',
  'SEC',
  'CENSUS_BK',
  'PHY_ADDR1',
  'PHY_ADDR2',
  'PHY_CITY',
  'PHY_ZIPCD',
  'ALT_KEY',
  'ASS_TRNSFR_FG',
  'PREV_HMSTD_OWN',
  'ASS_DIF_TRNS',
  'CONO_PRV_HM',
  'PARCEL_ID_PRV_HMSTD',
  'YR_VAL_TRNSF',
  'EXMPT_01',
  'EXMPT_02',
  'EXMPT_03',
  'EXMPT_04',
  'EXMPT_05',
  'EXMPT_06',
  'EXMPT_07',
  'EXMPT_08',
  'EXMPT_09',
  'EXMPT_10',
  'EXMPT_11',
  'EXMPT_12',
  'EXMPT_13',
  'EXMPT_14',
  'EXMPT_15',
  'EXMPT_16',
  'EXMPT_17',
  'EXMPT_18',
  'EXMPT_19',
  'EXMPT_20',
  'EXMPT_21',
  'EXMPT_22',
  'EXMPT_23',
  'EXMPT_24',
  'EXMPT_25',
  'EXMPT_26',
  'EXMPT_27',
  'EXMPT_28',
  'EXMPT_29',
  'EXMPT_30',
  'EXMPT_31',
  'EXMPT_32',
  'EXMPT_33',
  'EXMPT_34',
  'EXMPT_35',
  'EXMPT_36',
  'EXMPT_37',
  'EXMPT_38',
  'EXMPT_39',
  'EXMPT_40',
  'EXMPT_41',
  'EXMPT_42',
  'EXMPT_43',
  'EXMPT_44',
  'EXMPT_45',
  'EXMPT_46',
  'EXMPT_80',
  'EXMPT_81',
  'EXMPT_82',
  'SEQ_NO',
  'RS_ID',
  'MP_ID',
  'STATE_PAR_ID',
  'SPC_CIR_CD',
  'SPC_CIR_YR',
  'SPC_CIR_TXT',
] as const;

/** The columns this importer reads, with the spellings seen in other years and exports. */
const USED = [
  'CO_NO',
  'PARCEL_ID',
  'ASMNT_YR',
  'DOR_UC',
  'PA_UC',
  'JV',
  'AV_SD',
  'AV_NSD',
  'TV_SD',
  'TV_NSD',
  'LND_VAL',
  'LND_SQFOOT',
  'EFF_YR_BLT',
  'ACT_YR_BLT',
  'TOT_LVG_AREA',
  'NO_BULDNG',
  'NO_RES_UNTS',
  'SALE_PRC1',
  'SALE_YR1',
  'SALE_MO1',
  'SALE_PRC2',
  'SALE_YR2',
  'SALE_MO2',
  'OWN_NAME',
  'OWN_ADDR1',
  'OWN_ADDR2',
  'OWN_CITY',
  'OWN_STATE',
  'OWN_ZIPCD',
  'S_LEGAL',
  'PHY_ADDR1',
  'PHY_ADDR2',
  'PHY_CITY',
  'PHY_ZIPCD',
  'ALT_KEY',
  'STATE_PAR_ID',
] as const;

/** The exemption amount columns (EXMPT_01 … EXMPT_82): kept in the roll history, keyed by their code. */
const EXEMPTIONS = NAL_COLUMNS.filter((c) => c.startsWith('EXMPT_'));

const ALIASES: Record<string, string[]> = {
  CO_NO: ['CONO', 'COUNTY_NO', 'CNTY_NO'],
  PARCEL_ID: ['PARCELID', 'PARCEL_NO', 'PARCELNO'],
  ASMNT_YR: ['ASSMNT_YR', 'ASMT_YR', 'ASSESSMENT_YEAR'],
  DOR_UC: ['DORUC', 'DOR_USE_CD'],
  PA_UC: ['PAUC', 'PA_USE_CD'],
  LND_SQFOOT: ['LND_SQ_FOOT', 'LAND_SQFOOT'],
  EFF_YR_BLT: ['EFF_YR_BUILT'],
  ACT_YR_BLT: ['ACT_YR_BUILT'],
  TOT_LVG_AREA: ['TOT_LVG_AR', 'TOTLVGAR', 'TOT_LIV_AREA'],
  NO_BULDNG: ['NO_BLDNG', 'NO_BUILDNG', 'NO_BUILDINGS'],
  NO_RES_UNTS: ['NO_RES_UNT', 'NO_RES_UNITS'],
  SALE_PRC1: ['SALEPRC1', 'SALE_PRICE1'],
  SALE_PRC2: ['SALEPRC2', 'SALE_PRICE2'],
  OWN_ZIPCD: ['OWN_ZIP', 'OWN_ZIPCODE'],
  PHY_ZIPCD: ['PHY_ZIP', 'PHY_ZIPCODE'],
  S_LEGAL: ['LEGAL', 'S_LEGAL_DESC'],
  STATE_PAR_ID: ['STATE_PARCEL_ID', 'STATE_PARID'],
};

export const NAL_STAGE_COLUMNS = [
  'county_id',
  'parcel_id',
  'roll_year',
  'owner_name',
  'owner_address1',
  'owner_address2',
  'owner_city',
  'owner_state',
  'owner_zip',
  'site_address_full',
  'site_city',
  'site_state',
  'site_zip',
  'dor_use_code',
  'property_use_code',
  'land_use_description',
  'just_value',
  'assessed_value',
  'taxable_value',
  'land_value',
  'year_built',
  'effective_year_built',
  'living_area_sqft',
  'land_area_sqft',
  'building_count',
  'residential_units',
  'legal_description',
  'state_parcel_id',
  'alt_key',
  'last_sale_date',
  'last_sale_price',
  'exemptions',
] as const;

/** CO_NO (11-77) -> county id; shared with the SDF importer. */
export function countyOfRow(get: Getter, ctx: RowContext): number {
  const raw = get('CO_NO');
  const coNo = int('CO_NO', raw, 0, 99);
  const county = coNo === null ? undefined : ctx.counties.byCoNo(coNo);
  if (!county) throw new RowError(`CO_NO: '${raw ?? ''}' is not a Florida county number (11-77)`);
  return county.id;
}

export function parcelIdOf(get: Getter, column = 'PARCEL_ID'): string {
  const id = get(column)?.trim();
  if (!id) throw new RowError(`${column}: missing`);
  return id;
}

const money = (col: string, get: Getter) => int(col, get(col), 0, MAX_BIGINT);

/** The exemptions a row fills, as JSON text {"01": 50000, …} (code -> amount, zeros left out); null when none. */
function exemptionsOf(get: Getter): string | null {
  const filled = EXEMPTIONS.map((c) => [c.slice(6), money(c, get)] as const).filter(([, v]) => v !== null && v > 0);
  return filled.length ? JSON.stringify(Object.fromEntries(filled)) : null;
}

function mapRow(get: Getter, ctx: RowContext) {
  const countyId = countyOfRow(get, ctx);
  const parcelId = parcelIdOf(get);
  const dor = dorUseCode(get('DOR_UC'));
  const siteAddr1 = text(get('PHY_ADDR1'));
  const siteAddr2 = text(get('PHY_ADDR2'));
  const site = siteAddr1 && siteAddr2 ? `${siteAddr1} ${siteAddr2}` : (siteAddr1 ?? siteAddr2);
  const siteCity = text(get('PHY_CITY'));
  const zipDigits = (get('PHY_ZIPCD') ?? '').replace(/\D/g, '');
  const siteZip = zipDigits.length >= 5 && !/^0+$/.test(zipDigits) ? zipDigits.slice(0, 5) : null;
  // Two sale slots, slot 1 not guaranteed newer: the later month wins (slot 1 on a tie).
  const d1 = saleMonth('SALE_YR1', get('SALE_YR1'), get('SALE_MO1'));
  const d2 = saleMonth('SALE_YR2', get('SALE_YR2'), get('SALE_MO2'));
  const use2 = d2 !== null && (d1 === null || d2 > d1);
  const saleDate = use2 ? d2 : d1;
  const salePrice =
    saleDate === null
      ? null
      : int(use2 ? 'SALE_PRC2' : 'SALE_PRC1', get(use2 ? 'SALE_PRC2' : 'SALE_PRC1'), 0, MAX_BIGINT, true);
  return [
    countyId,
    parcelId,
    int('ASMNT_YR', get('ASMNT_YR'), 1900, 2200, true),
    text(get('OWN_NAME')),
    text(get('OWN_ADDR1')),
    text(get('OWN_ADDR2')),
    text(get('OWN_CITY')),
    stateCode(text(get('OWN_STATE'))),
    text(get('OWN_ZIPCD')),
    site,
    siteCity,
    site || siteCity ? 'FL' : null,
    siteZip,
    dor,
    text(get('PA_UC')),
    dorUseDescription(dor),
    money('JV', get),
    money('AV_NSD', get) ?? money('AV_SD', get),
    money('TV_NSD', get) ?? money('TV_SD', get),
    money('LND_VAL', get),
    int('ACT_YR_BLT', get('ACT_YR_BLT'), 1600, 2200, true),
    int('EFF_YR_BLT', get('EFF_YR_BLT'), 1600, 2200, true),
    int('TOT_LVG_AREA', get('TOT_LVG_AREA'), 0, 2_147_483_647, true),
    int('LND_SQFOOT', get('LND_SQFOOT'), 0, MAX_BIGINT),
    int('NO_BULDNG', get('NO_BULDNG'), 0, 2_147_483_647),
    int('NO_RES_UNTS', get('NO_RES_UNTS'), 0, 2_147_483_647),
    text(get('S_LEGAL')),
    text(get('STATE_PAR_ID')),
    text(get('ALT_KEY')),
    saleDate,
    salePrice,
    exemptionsOf(get),
  ];
}

export const nalKind: Kind = {
  kind: 'nal',
  label: 'a NAL roll file',
  stage: 'ingest.nal_stage',
  stageColumns: NAL_STAGE_COLUMNS,
  layout: {
    columns: [...USED, ...EXEMPTIONS],
    aliases: ALIASES,
    required: ['CO_NO', 'PARCEL_ID', 'OWN_NAME', 'JV', ['AV_NSD', 'AV_SD'], ['TV_NSD', 'TV_SD']],
    positional: NAL_COLUMNS,
  },
  replaces: { count: 'deleted', verb: 'delete', noun: 'parcels' },
  check: (ctx) => {
    if (ctx.county) throw new ImportError('--county is not used by nal: rows are routed by their CO_NO');
  },
  row: mapRow,
  dedupeKey: 'x.county_id, x.parcel_id',
  // the history partitions the merge writes, created before its transaction (creating one locks the table); a dry
  // run creates none (ingest.merge_rolls counts the rows of a missing one as new)
  prestage: async (sql, loadId, options) => {
    if (!options.dryRun) await sql`SELECT ingest.prepare_rolls(${loadId})`;
    return [];
  },
  merge: async (tx: postgres.TransactionSql, loadId, countyId) => {
    const [r] = await tx<{ inserted: number; updated: number; deleted: number; parcel_count: number }[]>`
      SELECT inserted::int, updated::int, deleted::int, parcel_count FROM ingest.merge_nal(${loadId}, ${countyId}::smallint)`;
    return { ...r! };
  },
};

export const importNal = (options: ImportOptions): Promise<ImportSummary> => runImport(nalKind, options);
