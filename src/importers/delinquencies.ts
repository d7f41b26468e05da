// Tax-delinquency / certificate lists -> core.tax_delinquencies, in the documented standard CSV or a tax-collector
// export (same columns under the collector's names, told apart by the header alone). Every attempt, failed or not,
// is recorded on the county's core.tax_delinquency_sources row for the tax year.
import type postgres from 'postgres';
import { ImportError } from './errors.ts';
import {
  runImport,
  type Getter,
  type ImportOptions,
  type ImportSummary,
  type Kind,
  type RowContext,
} from './pipeline.ts';
import { date, int, money, rate, RowError, text } from './values.ts';

/** The standard format's header, in order (the generator writes it too). */
export const STANDARD_COLUMNS = [
  'county',
  'parcel_id',
  'tax_year',
  'status',
  'delinquent_amount',
  'total_due',
  'certificate_number',
  'certificate_sale_date',
  'owner_name',
  'site_address_full',
  'source_vendor',
  'face_amount',
  'certificate_holder',
  'certificate_interest_rate',
  'bid_rate',
] as const;

/** Read when present, never written by the generator: the day a county-held certificate was bought (s. 197.4725). */
const READ_COLUMNS = [...STANDARD_COLUMNS, 'county_purchase_date'] as const;

/** Collector layout: `Folio,Tax Year,Cert #,Status,Owner,Situs Address,Advertised Amt,Face Amt,Interest Rate,Amount Due,Sale Date,Holder`. */
const ALIASES: Record<string, string[]> = {
  parcel_id: ['Folio', 'Parcel', 'Parcel Number', 'Account'],
  tax_year: ['Tax Yr'],
  certificate_number: ['Cert #', 'Cert No', 'Certificate'],
  owner_name: ['Owner', 'Owner Name'],
  site_address_full: ['Situs Address', 'Property Address', 'Situs'],
  delinquent_amount: ['Advertised Amt', 'Advertised Amount'],
  face_amount: ['Face Amt', 'Face Value'],
  certificate_interest_rate: ['Interest Rate', 'Int Rate'],
  total_due: ['Amount Due', 'Total Due', 'Redemption Amount'],
  certificate_sale_date: ['Sale Date', 'Issued Date'],
  certificate_holder: ['Holder', 'Certificate Holder', 'Bidder'],
  source_vendor: ['Vendor'],
  county_purchase_date: ['Purchase Date', 'County Purchase Date', 'Date Purchased'],
};

/** The staging row: the standard columns, the county resolved to its id. */
const STAGE_COLUMNS = ['county_id', ...READ_COLUMNS.slice(1)] as const;

/** Collector wording -> the API's status values; anything else is kept, lower case, spaces as underscores. */
const STATUS: Record<string, string> = {
  sold: 'certificate_sold',
  issued: 'certificate_sold',
  'certificate sold': 'certificate_sold',
  'certificate issued': 'certificate_sold',
  struck: 'struck',
  'struck to county': 'struck',
  'county held': 'struck',
  'county-held': 'struck',
  redeemed: 'redeemed',
  paid: 'redeemed',
  advertised: 'delinquent',
  unpaid: 'delinquent',
  delinquent: 'delinquent',
  open: 'open',
};

export function normalizeStatus(s: string | undefined): string | null {
  const t = text(s)?.toLowerCase() ?? null;
  if (t === null) return null;
  const v = STATUS[t] ?? t.replace(/[\s-]+/g, '_');
  if (v.length > 40) throw new RowError(`status: longer than 40 characters: '${s}'`);
  return v;
}

function mapRow(get: Getter, ctx: RowContext) {
  const slug = text(get('county'));
  let countyId: number;
  if (slug) {
    const c = ctx.counties.find(slug);
    if (!c) throw new RowError(`county: unknown county '${slug}'`);
    if (ctx.county && c.id !== ctx.county.id)
      throw new RowError(`county: '${slug}' is not --county ${ctx.county.slug}`);
    countyId = c.id;
  } else if (ctx.county) countyId = ctx.county.id;
  else throw new RowError('county: missing (pass --county)');
  const parcelId = text(get('parcel_id'));
  if (!parcelId) throw new RowError('parcel_id: missing');
  const taxYear = int('tax_year', get('tax_year'), 1900, 2200) ?? ctx.options.taxYear ?? null;
  if (taxYear === null) throw new RowError('tax_year: missing (pass --tax-year)');
  ctx.seen.add(`${countyId}:${taxYear}`);
  const interest = rate('certificate_interest_rate', get('certificate_interest_rate'));
  return [
    countyId,
    parcelId,
    taxYear,
    normalizeStatus(get('status')),
    money('delinquent_amount', get('delinquent_amount')),
    money('total_due', get('total_due')),
    text(get('certificate_number')),
    date('certificate_sale_date', get('certificate_sale_date')),
    text(get('owner_name')),
    text(get('site_address_full')),
    text(get('source_vendor')) ?? ctx.options.vendor ?? ctx.counties.get(countyId).tax_certificate_vendor,
    money('face_amount', get('face_amount')),
    text(get('certificate_holder')),
    interest,
    // Collector exports have one rate: the winning bid is the certificate's interest rate.
    ctx.header.index.bid_rate! >= 0 ? rate('bid_rate', get('bid_rate')) : interest,
    date('county_purchase_date', get('county_purchase_date')),
  ];
}

/** (county, tax year) pairs whose source row records this attempt. */
function sourcePairs(ctx: RowContext | null, options: ImportOptions, countyId: number | null): [number, number][] {
  const pairs = new Set(ctx?.seen ?? []);
  if (countyId !== null && options.taxYear !== undefined) pairs.add(`${countyId}:${options.taxYear}`);
  return [...pairs].map((p) => p.split(':').map(Number) as [number, number]);
}

export const delinquencyKind: Kind = {
  kind: 'delinquencies',
  label: 'a delinquency list',
  stage: 'ingest.delinquency_stage',
  stageColumns: STAGE_COLUMNS,
  layout: {
    columns: READ_COLUMNS,
    aliases: ALIASES,
    required: ['parcel_id', ['delinquent_amount', 'total_due']],
  },
  countyColumn: 'county',
  replaces: { count: 'deleted', verb: 'delete', noun: 'delinquency records' },
  check: (ctx) => {
    if (ctx.header.index.county! < 0 && !ctx.county) {
      throw new ImportError(`${ctx.options.file}: no county column; pass --county`);
    }
  },
  row: mapRow,
  dedupeKey: 'x.county_id, x.tax_year, core.normalize_parcel_id(x.parcel_id), x.certificate_number',
  merge: async (tx, loadId, countyId) => {
    const [r] = await tx<{ inserted: number; updated: number; deleted: number }[]>`
      SELECT inserted::int, updated::int, deleted::int FROM ingest.merge_delinquencies(${loadId}, ${countyId}::smallint)`;
    return { ...r! };
  },
  onSuccess: async (tx, ctx) => {
    for (const [county, year] of sourcePairs(ctx, ctx.options, ctx.county?.id ?? null)) {
      await record(tx, county, year, ctx.options.vendor ?? null, null);
    }
  },
  onFailure: async (sql, ctx, options, message) => {
    const countyId = ctx?.county?.id ?? (await countyIdOf(sql, options.county));
    for (const [county, year] of sourcePairs(ctx, options, countyId)) {
      await record(sql, county, year, options.vendor ?? null, message);
    }
  },
};

const record = (
  sql: postgres.Sql | postgres.TransactionSql,
  county: number,
  year: number,
  vendor: string | null,
  error: string | null,
) => sql`SELECT ingest.record_delinquency_source(${county}::smallint, ${year}::smallint, ${vendor}, ${error})`;

async function countyIdOf(sql: postgres.Sql, key: string | undefined): Promise<number | null> {
  if (key === undefined) return null;
  const [row] = await sql<{ id: number }[]>`
    SELECT id::int FROM core.counties WHERE slug = lower(${key}) OR lower(name) = lower(${key})`;
  return row?.id ?? null;
}

export const importDelinquencies = (options: ImportOptions): Promise<ImportSummary> =>
  runImport(delinquencyKind, options);
