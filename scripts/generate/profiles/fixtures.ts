// Profile `fixtures`: fixtures/fixtures.sql, a small, deterministic, realistic data set (six counties, named cases
// first so their ids are small and stable, then a seeded bulk). fixtures/README.md names the cases tests rely on.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dorUseDescription } from '../../../src/importers/codes.ts';
import { countyByCoNo } from '../counties.ts';
import { certificateNumber, certificateSaleDate, isCertified, STRUCK_HOLDER, STRUCK_RATE } from '../delinquency.ts';
import { pad } from '../format.ts';
import { LotGrid, rowMajor, wktRing } from '../geometry.ts';
import { dashedParcelId, stateParcelId } from '../ids.ts';
import {
  BUSINESS_KINDS,
  CERTIFICATE_HOLDERS,
  DIRECTIONS,
  LEGAL_WORDS,
  SUBDIVISION_WORDS,
  SUFFIXES as STREET_SUFFIXES,
  words,
} from '../names.ts';
import { cumulative, Rng } from '../prng.ts';

/** The committed fixtures folder: fixtures.sql here, the import profile's files in import/. */
export const FIXTURES_DIR = new URL('../../../fixtures/', import.meta.url).pathname;

const SEED = 20261122;
const FIXED_TIME = '2026-07-15T06:00:00Z';

const LIBERTY = countyByCoNo(49);
/** The county of a core.counties id (CO_NO - 10). */
const countyOf = (id: number) => countyByCoNo(id + 10);

/** A Liberty parcel id as the fixtures hold them: lot `lot` of section `sec` (`01-1S-07-0000-0010-0000`). */
export const libertyParcelId = (lot: number, sec = (lot % 30) + 1) =>
  dashedParcelId(sec, LIBERTY.twp, LIBERTY.twpDir, LIBERTY.rng, 0, lot, 0);

interface County {
  /** core.counties id: CO_NO - 10. */
  id: number;
  lng: number;
  lat: number;
  bulk: number;
  cities: [city: string, zip: string][];
  parcelId: (n: number, r: Rng) => string;
}

const COUNTIES: County[] = [
  {
    id: 13, // Miami-Dade
    lng: -80.2,
    lat: 25.77,
    bulk: 380,
    cities: [
      ['MIAMI', '33130'],
      ['MIAMI', '33145'],
      ['HIALEAH', '33010'],
      ['MIAMI BEACH', '33139'],
      ['UNINCORPORATED', '33157'],
    ],
    parcelId: (n) => `30${pad(4900 + (n % 100), 4)}${pad(1 + Math.floor(n / 100), 3)}${String(1000 + n).slice(-4)}`,
  },
  {
    id: 6, // Broward
    lng: -80.14,
    lat: 26.12,
    bulk: 300,
    cities: [
      ['FORT LAUDERDALE', '33301'],
      ['HOLLYWOOD', '33019'],
      ['POMPANO BEACH', '33062'],
      ['PEMBROKE PINES', '33024'],
    ],
    parcelId: (n) =>
      n % 7 === 0
        ? `4942${pad(10 + (n % 80), 2)}B${'ABCDEFGH'[n % 8]}${pad(n, 4)}`
        : `4841${pad(10 + (n % 80), 2)}${pad(1 + (n % 60), 2)}${pad(n, 4)}`,
  },
  {
    id: 50, // Palm Beach
    lng: -80.06,
    lat: 26.7,
    bulk: 300,
    cities: [
      ['WEST PALM BEACH', '33401'],
      ['BOCA RATON', '33432'],
      ['JUPITER', '33458'],
      ['UNINCORPORATED', '33411'],
    ],
    parcelId: (n, r) =>
      `${r.pick(['74', '06', '00'])}434${pad(10 + (n % 30), 2)}${pad(1 + (n % 12), 2)}${pad(n % 90, 2)}${pad(n % 1000, 3)}${pad(n, 4)}`.slice(
        0,
        17,
      ),
  },
  {
    id: 29, // Hillsborough
    lng: -82.46,
    lat: 27.95,
    bulk: 250,
    cities: [
      ['TAMPA', '33602'],
      ['TAMPA', '33606'],
      ['BRANDON', '33511'],
      ['PLANT CITY', '33563'],
    ],
    parcelId: (n) => String(1100000000 + n * 2),
  },
  {
    id: 48, // Orange
    lng: -81.38,
    lat: 28.54,
    bulk: 250,
    cities: [
      ['ORLANDO', '32801'],
      ['ORLANDO', '32803'],
      ['WINTER PARK', '32789'],
      ['APOPKA', '32703'],
    ],
    parcelId: (n) => `2922${pad(30 + (n % 9), 2)}${pad(1000 + (n % 9000), 4)}${pad(n, 5)}`,
  },
  {
    id: 39, // Liberty
    lng: -84.88,
    lat: 30.24,
    bulk: 60,
    cities: [
      ['BRISTOL', '32321'],
      ['HOSFORD', '32334'],
      ['UNINCORPORATED', '32321'],
    ],
    parcelId: (n) => libertyParcelId(n),
  },
];
const byId = new Map(COUNTIES.map((c) => [c.id, c]));

// Lots are about 30 m x 30 m in a grid 40 lots wide from each county's anchor.
const COLUMNS = 40;
const grids = new Map(COUNTIES.map((c) => [c.id, new LotGrid(c.lng, c.lat, 0.0003, 0.00027)]));
/** The WKT polygon text of lot `index` of a county. */
const polygon = (countyId: number, index: number) =>
  `(${wktRing(...grids.get(countyId)!.lot(...rowMajor(index, COLUMNS)))})`;

const SURNAMES = words(`
SMITH GARCIA RODRIGUEZ JOHNSON WILLIAMS MARTINEZ HERNANDEZ BROWN LOPEZ GONZALEZ JONES PEREZ DAVIS
MILLER SANCHEZ WILSON ANDERSON THOMAS TAYLOR MOORE JACKSON MARTIN LEE THOMPSON WHITE HARRIS CLARK LEWIS ROBINSON WALKER
NGUYEN PATEL KOWALSKI OKAFOR FITZGERALD DESROSIERS VILLANUEVA ABERNATHY QUINTANILLA ZELINSKY OYELARAN HAVERKAMP
MONTGOMERY BALDERRAMA STRZELECKI`);
const FIRSTS = words(`
JOHN MARIA JOSE MARY ROBERT ANA JAMES CARMEN MICHAEL LINDA DAVID PATRICIA CARLOS SUSAN WILLIAM ELENA
RICHARD BARBARA LUIS JENNIFER`);
// The heads of the statewide vocabularies (names.ts), and its street-suffix pairs in this profile's order.
const WORDS = SUBDIVISION_WORDS.slice(0, 10);
const LLC_KINDS = BUSINESS_KINDS.slice(0, 4);
const PLAT_KINDS = LEGAL_WORDS.slice(0, 4);
const STREETS = [
  ...words('OAK MAIN PALM BISCAYNE OCEAN MAGNOLIA CYPRESS LAKE PINE'),
  'CORAL WAY',
  ...words('DIXIE FLAGLER'),
  'ORANGE BLOSSOM',
  ...words('SEMINOLE TAMIAMI HIBISCUS MANGO JACARANDA POINCIANA SAWGRASS'),
];
const SUFFIXES = words('DR ST AVE BLVD RD LN CT TER').map((short) => STREET_SUFFIXES.find(([s]) => s === short)!);

/** DOR use codes (the 4-character form the API stores) with the county's local code, a draw weight and a base value. */
interface Use {
  code: string;
  local: string;
  weight: number;
  base: number;
  vacant?: boolean;
  gov?: boolean;
  condo?: boolean;
}
const USES: Use[] = [
  { code: '0100', local: '0101', weight: 52, base: 420_000 },
  { code: '0400', local: '0404', weight: 15, base: 310_000, condo: true },
  { code: '0000', local: '0000', weight: 8, base: 90_000, vacant: true },
  { code: '0800', local: '0803', weight: 4, base: 650_000 },
  { code: '0300', local: '0310', weight: 2, base: 4_200_000 },
  { code: '0200', local: '0202', weight: 2, base: 140_000 },
  { code: '1100', local: '1100', weight: 3, base: 1_100_000 },
  { code: '1700', local: '1700', weight: 3, base: 1_600_000 },
  { code: '2100', local: '2100', weight: 1, base: 900_000 },
  { code: '4800', local: '4800', weight: 2, base: 2_300_000 },
  { code: '5100', local: '5100', weight: 2, base: 180_000, vacant: true },
  { code: '7100', local: '7100', weight: 1, base: 1_200_000 },
  { code: '8600', local: '8600', weight: 2, base: 750_000, gov: true, vacant: true },
];
const USE_CUM = cumulative(USES.map((u) => u.weight));
const useByCode = new Map(USES.map((u) => [u.code, u]));

type Value = string | number | boolean | null;
const lit = (v: Value): string => {
  if (v === null) return 'NULL';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v.startsWith('\u0000SQL:')) return v.slice(5);
  return `'${v.replace(/'/g, "''")}'`;
};
const rawSql = (s: string) => `\u0000SQL:${s}`;

function inserts(table: string, columns: string[], data: Value[][]): string {
  const out: string[] = [];
  for (let i = 0; i < data.length; i += 200) {
    const batch = data.slice(i, i + 200).map((r) => `  (${r.map(lit).join(', ')})`);
    out.push(`INSERT INTO ${table} (${columns.join(', ')}) VALUES\n${batch.join(',\n')};`);
  }
  return out.join('\n');
}

const PARCEL_COLUMNS = words(`county_id parcel_id roll_year owner_name owner_address1 owner_city owner_state owner_zip
site_address_full site_city site_state site_zip dor_use_code property_use_code land_use_description just_value
assessed_value taxable_value land_value year_built effective_year_built living_area_sqft land_area_sqft building_count
residential_units legal_description state_parcel_id alt_key last_sale_date last_sale_price geom created_at updated_at`);
const SALE_COLUMNS = words(`county_id parcel_id sale_date sale_price book page instrument_number deed_code
qualification_code vacant_improved multi_parcel grantor grantee dor_use_code source created_at`);
const SOURCE_COLUMNS = words(`county_id tax_year vendor sale_url download_url source_kind requires_login last_checked_at
last_success_at last_error active notes created_at updated_at`);
const DELINQUENCY_COLUMNS = words(`county_id parcel_id tax_year status delinquent_amount total_due certificate_number
certificate_sale_date owner_name site_address_full source_vendor face_amount certificate_holder
certificate_interest_rate bid_rate ingested_at created_at updated_at`);

const QUAL = ['01', '01', '01', '02', '05', '11', '12', '30', '37'];
const DEEDS = ['WD', 'WD', 'WD', 'QCD', 'TD', 'CT', null];
const HOLDERS = CERTIFICATE_HOLDERS.slice(0, 6);
const STATUSES: (string | null)[] = [
  ...words('certificate_sold certificate_sold certificate_sold certificate_sold delinquent delinquent'),
  ...words('redeemed redeemed open struck'),
  null,
  null,
];

interface Parcel {
  county_id: number;
  parcel_id: string;
  owner_name: string | null;
  site_address_full: string | null;
  site_city: string | null;
  site_zip: string | null;
  dor_use_code: string;
  geomWkt: string | null;
  last_sale_date: string | null;
  last_sale_price: number | null;
  just_value?: number;
  taxable_value?: number;
}

/** The SQL text of fixtures/fixtures.sql and a one-line summary of what it holds. */
export function fixturesSql(): { sql: string; summary: string } {
  const r = new Rng(SEED);

  const owner = (): string => {
    const s = r.skewed(SURNAMES, 1.4);
    const f = r.pick(FIRSTS);
    const style = r.next();
    if (style < 0.5) return `${s} ${f}`;
    if (style < 0.68) return `${s} ${f} & ${r.pick(FIRSTS)}`;
    if (style < 0.74) return `${f} ${s}`;
    if (style < 0.84) return `${r.pick(WORDS)} ${r.pick(LLC_KINDS)} LLC`;
    if (style < 0.92) return `${f} ${s} REVOCABLE TRUST`;
    if (style < 0.96) return `${s} ${f} TR`;
    return `EST OF ${s} ${f}`;
  };

  const address = (condo: boolean): string => {
    const [short, long] = r.pick(SUFFIXES);
    const dir = r.chance(0.25) ? `${r.pick(DIRECTIONS)} ` : '';
    const street = `${r.int(1, 19999)} ${dir}${r.skewed(STREETS, 1.4)} ${r.chance(0.8) ? short : long}`;
    return condo ? `${street} ${r.pick(['UNIT', 'APT', '#'])} ${r.int(1, 40)}${pad(r.int(1, 12), 2)}` : street;
  };

  const parcels: Parcel[] = [];
  const cellsUsed = new Map<number, number>();
  const nextCell = (countyId: number): number => {
    const n = cellsUsed.get(countyId) ?? 0;
    cellsUsed.set(countyId, n + 1);
    return n;
  };
  const square = (countyId: number) => `MULTIPOLYGON(${polygon(countyId, nextCell(countyId))})`;

  // ---- Named cases (fixtures/README.md) -----------------------------------------------------------------------
  const named = (p: Partial<Parcel> & Pick<Parcel, 'county_id' | 'parcel_id' | 'dor_use_code'>) =>
    parcels.push({
      owner_name: null,
      site_address_full: null,
      site_city: null,
      site_zip: null,
      geomWkt: square(p.county_id),
      last_sale_date: null,
      last_sale_price: null,
      ...p,
    });
  named({
    county_id: 13,
    parcel_id: '0131320350010',
    owner_name: 'SMITH JOHN',
    site_address_full: '123 OAK DR',
    site_city: 'MIAMI',
    site_zip: '33130',
    dor_use_code: '0100',
    last_sale_date: '2021-03-01',
    last_sale_price: 455000,
  });
  named({
    county_id: 13,
    parcel_id: '0131320350020',
    owner_name: 'SMITH JOHN & MARY',
    site_address_full: '125 OAK DRIVE',
    site_city: 'MIAMI',
    site_zip: '33130',
    dor_use_code: '0100',
    last_sale_date: '2019-08-01',
    last_sale_price: 389000,
  });
  named({
    county_id: 13,
    parcel_id: '3049120012531',
    owner_name: 'JOHN SMITH',
    site_address_full: '500 BRICKELL AVE UNIT 1203',
    site_city: 'MIAMI',
    site_zip: '33131',
    dor_use_code: '0400',
    last_sale_date: '2023-11-01',
    last_sale_price: 610000,
  });
  named({
    county_id: 13,
    parcel_id: '3049120012532',
    owner_name: 'SMYTH JOHN',
    site_address_full: '500 BRICKELL AVE APT 1204',
    site_city: 'MIAMI',
    site_zip: '33131',
    dor_use_code: '0400',
  });
  {
    // a two-part multipolygon (cells a and a + 2 of Miami-Dade's first row); the county's parcel lies between them
    const a = nextCell(13);
    nextCell(13);
    const b = nextCell(13);
    parcels.push({
      county_id: 13,
      parcel_id: '0141370300010',
      owner_name: 'SUNSHINE HOLDINGS LLC',
      site_address_full: '200 NW 2ND AVE',
      site_city: 'MIAMI',
      site_zip: '33128',
      dor_use_code: '1100',
      geomWkt: `MULTIPOLYGON(${polygon(13, a)}, ${polygon(13, b)})`,
      last_sale_date: '2018-05-01',
      last_sale_price: 2400000,
    });
    cellsUsed.set(13, b + 1);
    parcels.push({
      county_id: 13,
      parcel_id: '0141370300020',
      owner_name: 'MIAMI-DADE COUNTY',
      site_address_full: null,
      site_city: null,
      site_zip: null,
      dor_use_code: '8600',
      geomWkt: `MULTIPOLYGON(${polygon(13, a + 1)})`,
      last_sale_date: null,
      last_sale_price: null,
      taxable_value: 0,
    });
  }
  named({
    county_id: 6,
    parcel_id: '494213BA0140',
    owner_name: 'GARCIA MARIA',
    site_address_full: '3000 N OCEAN BLVD # 5',
    site_city: 'FORT LAUDERDALE',
    site_zip: '33308',
    dor_use_code: '0400',
    last_sale_date: '2022-02-01',
    last_sale_price: 520000,
  });
  named({
    county_id: 6,
    parcel_id: '494213010140',
    owner_name: 'RODRIGUEZ JOSE & ANA',
    site_address_full: '3000 N OCEAN BLVD # 6',
    site_city: 'FORT LAUDERDALE',
    site_zip: '33308',
    dor_use_code: '0400',
  });
  named({
    county_id: 6,
    parcel_id: '474135010090',
    owner_name: 'MARY JONES REVOCABLE TRUST',
    site_address_full: '1500 SE 17TH ST',
    site_city: 'FORT LAUDERDALE',
    site_zip: '33316',
    dor_use_code: '0100',
    last_sale_date: '2015-06-01',
    last_sale_price: 610000,
  });
  named({
    county_id: 50,
    parcel_id: '30424111060000210',
    owner_name: 'EST OF WILLIAMS ROBERT',
    site_address_full: '742 EVERGREEN TER',
    site_city: 'WEST PALM BEACH',
    site_zip: '33401',
    dor_use_code: '0100',
    last_sale_date: '1998-04-01',
    last_sale_price: 125000,
  });
  named({
    county_id: 50,
    parcel_id: '00424430000010010',
    owner_name: 'JONES MARY TR',
    site_address_full: '18 S OCEAN BLVD',
    site_city: 'BOCA RATON',
    site_zip: '33432',
    dor_use_code: '0100',
  });
  named({
    county_id: 29,
    parcel_id: '1174807202',
    owner_name: 'WELLS FARGO BANK NA',
    site_address_full: '4100 W KENNEDY BLVD',
    site_city: 'TAMPA',
    site_zip: '33609',
    dor_use_code: '1700',
    last_sale_date: '2020-10-01',
    last_sale_price: 3150000,
  });
  named({
    county_id: 48,
    parcel_id: '322313760000070',
    owner_name: 'MAGIC CITY HOLDINGS LLC',
    site_address_full: '1 N ORANGE AVE',
    site_city: 'ORLANDO',
    site_zip: '32801',
    dor_use_code: '1700',
    last_sale_date: '2024-01-01',
    last_sale_price: 8900000,
  });
  named({
    county_id: 39,
    parcel_id: '01-1S-07-0000-0010-0000',
    owner_name: 'JOHNSON ROBERT',
    site_address_full: '10 HWY 20 E',
    site_city: 'BRISTOL',
    site_zip: '32321',
    dor_use_code: '5100',
  });
  named({
    county_id: 39,
    parcel_id: '01-1S-07-0000-0020-0000',
    owner_name: 'CONFIDENTIAL OWNER',
    site_address_full: null,
    site_city: null,
    site_zip: null,
    dor_use_code: '0000',
    geomWkt: null,
  });
  const NAMED = parcels.length;

  // ---- Bulk ----------------------------------------------------------------------------------------------------
  for (const c of COUNTIES) {
    const seen = new Set(parcels.map((p) => `${p.county_id}:${p.parcel_id}`));
    for (let n = 1; n <= c.bulk; n++) {
      let id = c.parcelId(n + 10, r);
      while (seen.has(`${c.id}:${id}`)) id = c.parcelId(n + 10 + r.int(1000, 9000), r);
      seen.add(`${c.id}:${id}`);
      const use = c.id === 39 && r.chance(0.4) ? useByCode.get('5100')! : USES[r.weighted(USE_CUM)]!;
      const [city, zip] = r.pick(c.cities);
      const hasAddress = !(use.vacant && r.chance(0.6));
      const sold = r.chance(0.5);
      parcels.push({
        county_id: c.id,
        parcel_id: id,
        owner_name: use.gov ? `${countyOf(c.id).name.toUpperCase()} COUNTY` : owner(),
        site_address_full: hasAddress ? address(Boolean(use.condo)) : null,
        site_city: hasAddress ? city : null,
        site_zip: hasAddress ? zip : null,
        dor_use_code: use.code,
        geomWkt: r.chance(0.01) ? null : square(c.id),
        last_sale_date: sold ? `${r.int(1996, 2025)}-${pad(r.int(1, 12), 2)}-01` : null,
        last_sale_price: null,
      });
    }
  }

  // ---- Values and the rest of each row -------------------------------------------------------------------------
  const countyFactor: Record<number, number> = { 13: 1.3, 6: 1.15, 50: 1.4, 29: 1.0, 48: 1.0, 39: 0.35 };
  const rows = parcels.map((p, index) => {
    const use = useByCode.get(p.dor_use_code)!;
    const just =
      p.just_value ?? Math.round((use.base * countyFactor[p.county_id]! * (0.5 + r.next() * 1.2)) / 100) * 100;
    const assessed = Math.round((just * (0.55 + r.next() * 0.45)) / 100) * 100;
    const homestead = p.dor_use_code === '0100' && r.chance(0.45);
    const taxable =
      p.taxable_value ?? (use.gov || use.code === '7100' ? 0 : Math.max(0, assessed - (homestead ? 50000 : 0)));
    const built = use.vacant ? null : r.int(1948, 2024);
    const salePrice = p.last_sale_date
      ? (p.last_sale_price ?? Math.round((just * (0.55 + r.next() * 0.6)) / 100) * 100)
      : null;
    p.last_sale_price = salePrice;
    const [oc, oz] = r.pick(byId.get(p.county_id)!.cities);
    const outOfState = r.chance(0.15);
    return [
      p.county_id,
      p.parcel_id,
      2025,
      p.owner_name,
      outOfState
        ? `${r.int(10, 999)} ${r.pick(['MAPLE', 'ELM', 'BROADWAY'])} ${r.pick(['ST', 'AVE'])}`
        : (p.site_address_full ?? `PO BOX ${r.int(100, 9999)}`),
      outOfState ? r.pick(['NEW YORK', 'ATLANTA', 'TORONTO']) : oc === 'UNINCORPORATED' ? 'MIAMI' : oc,
      outOfState ? r.pick(['NY', 'GA', 'ON']) : 'FL',
      outOfState ? r.pick(['10001', '30301', 'M5V 2T6']) : oz,
      p.site_address_full,
      p.site_city,
      p.site_address_full ? 'FL' : null,
      p.site_zip,
      p.dor_use_code,
      use.local,
      dorUseDescription(use.code),
      just,
      assessed,
      taxable,
      Math.round(just * 0.3),
      built,
      built === null ? null : Math.min(2025, built + r.int(0, 15)),
      built === null ? null : r.int(700, 4200),
      r.int(4000, 20000),
      built === null ? 0 : 1,
      use.code === '0800' ? r.int(2, 9) : use.code === '0300' ? r.int(10, 120) : built === null ? 0 : 1,
      `LOT ${r.int(1, 40)} BLK ${r.int(1, 30)} ${r.pick(WORDS)} ${r.pick(PLAT_KINDS)} PB ${r.int(10, 190)}-${r.int(1, 99)}`,
      stateParcelId(p.county_id + 10, 0, index, r.int(0, 9999), 0),
      r.chance(0.3) ? String(1_000_000 + index) : null,
      p.last_sale_date,
      salePrice,
      p.geomWkt ? rawSql(`ST_GeomFromText('${p.geomWkt}', 4326)`) : null,
      FIXED_TIME,
      FIXED_TIME,
    ] as Value[];
  });

  // ---- Sales: history for about 40% of sold parcels, the newest equal to the parcel's last sale ---------------
  const saleRows: Value[][] = [];
  parcels.forEach((p, index) => {
    if (!p.last_sale_date) return;
    const history = index < NAMED ? (p.parcel_id === '0131320350010' ? 3 : 1) : r.chance(0.4) ? r.int(1, 4) : 0;
    let date = p.last_sale_date;
    let price = p.last_sale_price!;
    for (let k = 0; k < history; k++) {
      const qual = k === 0 && index < NAMED ? '01' : r.pick(QUAL);
      saleRows.push([
        p.county_id,
        p.parcel_id,
        date,
        qual === '11' ? 100 : price,
        String(20000 + r.int(0, 15000)),
        String(r.int(1, 4999)),
        `${date.slice(0, 4)}R${pad(r.int(1, 999999), 6)}`,
        r.pick(DEEDS),
        qual,
        p.dor_use_code === '0000' ? 'V' : 'I',
        qual === '05',
        r.chance(0.5) ? `${r.pick(SURNAMES)} ${r.pick(FIRSTS)}` : null,
        r.chance(0.5) ? p.owner_name : null,
        p.dor_use_code,
        'sdf',
        FIXED_TIME,
      ]);
      const years = r.int(2, 9);
      date = `${Number(date.slice(0, 4)) - years}-${pad(r.int(1, 12), 2)}-01`;
      price = Math.round((price * (0.6 + r.next() * 0.3)) / 100) * 100;
    }
  });

  // ---- Delinquency sources: per county and tax year, active / inactive / login-only / failing -----------------
  const sourceRows: Value[][] = [];
  for (const [countyId, url] of [
    [13, 'https://lienhub.com'],
    [6, 'https://lienhub.com'],
    [50, 'https://palmbeachfl.realtaxlien.com'],
    [29, 'https://lienhub.com'],
  ] as [number, string][]) {
    for (const year of [2023, 2024, 2025]) {
      const failing = countyId === 29 && year === 2025;
      sourceRows.push([
        countyId,
        year,
        countyOf(countyId).vendor,
        url,
        countyId === 50 ? `https://palmbeachfl.realtaxlien.com/downloads/${year}-certificates.csv` : null,
        countyId === 50 ? 'bulk_download' : 'cert_sale_portal',
        countyId === 6,
        '2026-07-14T05:00:00Z',
        failing ? '2026-06-20T05:00:00Z' : '2026-07-14T05:00:00Z',
        failing ? 'HTTP 503 from the certificate-sale portal' : null,
        year !== 2023,
        countyId === 6
          ? 'Portal requires a bidder login; list fetched with a registered account.'
          : year === 2023
            ? 'Sale closed; kept for history.'
            : '',
        FIXED_TIME,
        FIXED_TIME,
      ]);
    }
  }

  // ---- Delinquency and certificate records ---------------------------------------------------------------------
  const delinquencyRows: Value[][] = [];
  const keyTaken = new Set<string>();
  let certSeq = 1000;
  const delinquency = (
    p: { county_id: number; parcel_id: string; owner_name: string | null; site_address_full: string | null },
    year: number,
    status: string | null,
    amount?: number,
  ) => {
    const key = `${p.county_id}:${year}:${p.parcel_id.replace(/[^A-Za-z0-9]/g, '').toUpperCase()}`;
    if (keyTaken.has(key)) return;
    keyTaken.add(key);
    const delinquent = amount ?? Math.round((200 + r.next() * 14800) * 100) / 100;
    const total = Math.round((delinquent * 1.03 + 6.25 + 1.5 + r.next() * 40) * 100) / 100;
    const certified = isCertified(status);
    const struck = status === 'struck';
    const bid = struck ? STRUCK_RATE : Math.round(r.next() * 72) / 4;
    delinquencyRows.push([
      p.county_id,
      p.parcel_id,
      year,
      status,
      delinquent,
      total,
      certified ? certificateNumber(year, certSeq++) : null,
      certified ? certificateSaleDate(year) : null,
      r.chance(0.9) ? p.owner_name : null,
      r.chance(0.85) ? p.site_address_full : null,
      countyOf(p.county_id).vendor,
      certified ? Math.round(total * 1.05 * 100) / 100 : null,
      certified ? (struck ? STRUCK_HOLDER : r.pick(HOLDERS)) : null,
      certified ? bid : null,
      certified ? bid : null,
      FIXED_TIME,
      FIXED_TIME,
      FIXED_TIME,
    ]);
  };
  // Named: one Miami-Dade parcel with three years and three statuses; a redeemed certificate; a collector account
  // number that is not a parcel id; an exact tie in Palm Beach 2022 (3 delinquent, 3 redeemed, 1 struck).
  const first = parcels[0]!;
  delinquency(first, 2022, 'redeemed', 3120.55);
  delinquency(first, 2023, 'certificate_sold', 3388.1);
  delinquency(first, 2024, 'delinquent', 3512.4);
  delinquency(
    { county_id: 6, parcel_id: '494213BA0140', owner_name: 'GARCIA MARIA', site_address_full: '3000 N OCEAN BLVD # 5' },
    2024,
    'struck',
    412.0,
  );
  delinquency(
    { county_id: 29, parcel_id: 'A0380975910', owner_name: 'TAMPA BAY VENTURES LLC', site_address_full: null },
    2024,
    'open',
    1875.0,
  );
  const palmBeach = parcels.filter((p) => p.county_id === 50);
  words('delinquent delinquent delinquent redeemed redeemed redeemed struck').forEach((status, i) =>
    delinquency(palmBeach[i + 2]!, 2022, status),
  );
  for (const p of parcels.slice(NAMED)) {
    if (![13, 6, 50, 29].includes(p.county_id) || !r.chance(0.33)) continue;
    for (const year of [2023, 2024, 2025]) {
      if (r.chance(0.45)) delinquency(p, year, r.pick(STATUSES));
    }
  }

  const sql = `-- Generated by scripts/gen-fixtures.ts; do not edit by hand (fixtures/README.md describes the cases).
BEGIN;
${inserts('core.parcels', PARCEL_COLUMNS, rows)}
UPDATE core.parcels SET centroid = ST_PointOnSurface(geom) WHERE geom IS NOT NULL;
${inserts('core.sales', SALE_COLUMNS, saleRows)}
${inserts('core.tax_delinquency_sources', SOURCE_COLUMNS, sourceRows)}
${inserts('core.tax_delinquencies', DELINQUENCY_COLUMNS, delinquencyRows)}
UPDATE core.counties c SET parcel_count = n.count, last_import_at = '${FIXED_TIME}', updated_at = '${FIXED_TIME}'
  FROM (SELECT county_id, count(*) AS count FROM core.parcels GROUP BY county_id) n WHERE n.county_id = c.id;
INSERT INTO core.load_history (county_id, kind, file_name, status, rows_read, rows_loaded, started_at, finished_at)
SELECT county_id, 'fixtures', 'fixtures/fixtures.sql', 'succeeded', count(*), count(*), '${FIXED_TIME}', '${FIXED_TIME}'
  FROM core.parcels GROUP BY county_id ORDER BY county_id;
COMMIT;
`;
  const summary =
    `fixtures: ${parcels.length} parcels (${NAMED} named), ${saleRows.length} sales, ${sourceRows.length} sources, ` +
    `${delinquencyRows.length} delinquency records`;
  return { sql, summary };
}

/** Writes `dir`/fixtures.sql (by default the committed one) and returns the summary line. */
export function writeFixtures(dir = FIXTURES_DIR): string {
  const { sql, summary } = fixturesSql();
  writeFileSync(join(dir, 'fixtures.sql'), sql);
  return summary;
}
