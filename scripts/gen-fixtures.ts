// Writes fixtures/fixtures.sql: a small, deterministic, realistic data set (six counties, named cases first so
// their ids are small and stable, then a seeded bulk). Byte-identical on every run: `npx tsx scripts/gen-fixtures.ts`.
// fixtures/README.md names the cases tests rely on.
import { writeFileSync } from 'node:fs';

/** mulberry32: a tiny seeded PRNG. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(20261122);
const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
/** Zipf-like pick: early entries are much more frequent (heavy-tailed names and streets). */
const zipf = <T>(xs: readonly T[]): T => xs[Math.min(xs.length - 1, Math.floor(xs.length * Math.pow(rand(), 1.4)))]!;
const chance = (p: number) => rand() < p;

const FIXED_TIME = '2026-07-15T06:00:00Z';

interface County {
  id: number;
  name: string;
  lng: number;
  lat: number;
  bulk: number;
  cities: [string, string][]; // city, zip
  parcelId: (n: number) => string;
}

const COUNTIES: County[] = [
  {
    id: 13,
    name: 'Miami-Dade',
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
    parcelId: (n) =>
      `30${String(4900 + (n % 100)).padStart(4, '0')}${String(1 + Math.floor(n / 100)).padStart(3, '0')}${String(1000 + n).slice(-4)}`,
  },
  {
    id: 6,
    name: 'Broward',
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
        ? `4942${String(10 + (n % 80)).padStart(2, '0')}B${'ABCDEFGH'[n % 8]}${String(n).padStart(4, '0')}`
        : `4841${String(10 + (n % 80)).padStart(2, '0')}${String(1 + (n % 60)).padStart(2, '0')}${String(n).padStart(4, '0')}`,
  },
  {
    id: 50,
    name: 'Palm Beach',
    lng: -80.06,
    lat: 26.7,
    bulk: 300,
    cities: [
      ['WEST PALM BEACH', '33401'],
      ['BOCA RATON', '33432'],
      ['JUPITER', '33458'],
      ['UNINCORPORATED', '33411'],
    ],
    parcelId: (n) =>
      `${pick(['74', '06', '00'])}434${String(10 + (n % 30)).padStart(2, '0')}${String(1 + (n % 12)).padStart(2, '0')}${String(n % 90).padStart(2, '0')}${String(n % 1000).padStart(3, '0')}${String(n).padStart(4, '0')}`.slice(
        0,
        17,
      ),
  },
  {
    id: 29,
    name: 'Hillsborough',
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
    id: 48,
    name: 'Orange',
    lng: -81.38,
    lat: 28.54,
    bulk: 250,
    cities: [
      ['ORLANDO', '32801'],
      ['ORLANDO', '32803'],
      ['WINTER PARK', '32789'],
      ['APOPKA', '32703'],
    ],
    parcelId: (n) =>
      `2922${String(30 + (n % 9)).padStart(2, '0')}${String(1000 + (n % 9000)).padStart(4, '0')}${String(n).padStart(5, '0')}`,
  },
  {
    id: 39,
    name: 'Liberty',
    lng: -84.88,
    lat: 30.24,
    bulk: 60,
    cities: [
      ['BRISTOL', '32321'],
      ['HOSFORD', '32334'],
      ['UNINCORPORATED', '32321'],
    ],
    parcelId: (n) => `${String(1 + (n % 30)).padStart(2, '0')}-1S-07-0000-${String(n).padStart(4, '0')}-0000`,
  },
];
const byId = new Map(COUNTIES.map((c) => [c.id, c]));

// Lots are about 30 m x 30 m; neighbours share edges exactly (coordinates come from integer grid steps).
const LOT_W = 0.0003;
const LOT_H = 0.00027;
const COLUMNS = 40;
const coord = (v: number) => v.toFixed(7);
function cell(c: County, index: number): [number, number, number, number] {
  const i = index % COLUMNS;
  const j = Math.floor(index / COLUMNS);
  return [c.lng + i * LOT_W, c.lat + j * LOT_H, c.lng + (i + 1) * LOT_W, c.lat + (j + 1) * LOT_H];
}
const ring = ([x0, y0, x1, y1]: [number, number, number, number]) =>
  `((${coord(x0)} ${coord(y0)}, ${coord(x1)} ${coord(y0)}, ${coord(x1)} ${coord(y1)}, ${coord(x0)} ${coord(y1)}, ${coord(x0)} ${coord(y0)}))`;

const SURNAMES = [
  'SMITH',
  'GARCIA',
  'RODRIGUEZ',
  'JOHNSON',
  'WILLIAMS',
  'MARTINEZ',
  'HERNANDEZ',
  'BROWN',
  'LOPEZ',
  'GONZALEZ',
  'JONES',
  'PEREZ',
  'DAVIS',
  'MILLER',
  'SANCHEZ',
  'WILSON',
  'ANDERSON',
  'THOMAS',
  'TAYLOR',
  'MOORE',
  'JACKSON',
  'MARTIN',
  'LEE',
  'THOMPSON',
  'WHITE',
  'HARRIS',
  'CLARK',
  'LEWIS',
  'ROBINSON',
  'WALKER',
  'NGUYEN',
  'PATEL',
  'KOWALSKI',
  'OKAFOR',
  'FITZGERALD',
  'DESROSIERS',
  'VILLANUEVA',
  'ABERNATHY',
  'QUINTANILLA',
  'ZELINSKY',
  'OYELARAN',
  'HAVERKAMP',
  'MONTGOMERY',
  'BALDERRAMA',
  'STRZELECKI',
];
const FIRSTS = [
  'JOHN',
  'MARIA',
  'JOSE',
  'MARY',
  'ROBERT',
  'ANA',
  'JAMES',
  'CARMEN',
  'MICHAEL',
  'LINDA',
  'DAVID',
  'PATRICIA',
  'CARLOS',
  'SUSAN',
  'WILLIAM',
  'ELENA',
  'RICHARD',
  'BARBARA',
  'LUIS',
  'JENNIFER',
];
const WORDS = [
  'SUNSHINE',
  'CORAL',
  'BAYSIDE',
  'PALM',
  'GATOR',
  'ATLANTIC',
  'GULF',
  'MANGROVE',
  'EVERGLADES',
  'KEYSTONE',
];
const STREETS = [
  'OAK',
  'MAIN',
  'PALM',
  'BISCAYNE',
  'OCEAN',
  'MAGNOLIA',
  'CYPRESS',
  'LAKE',
  'PINE',
  'CORAL WAY',
  'DIXIE',
  'FLAGLER',
  'ORANGE BLOSSOM',
  'SEMINOLE',
  'TAMIAMI',
  'HIBISCUS',
  'MANGO',
  'JACARANDA',
  'POINCIANA',
  'SAWGRASS',
];
const SUFFIXES: [string, string][] = [
  ['DR', 'DRIVE'],
  ['ST', 'STREET'],
  ['AVE', 'AVENUE'],
  ['BLVD', 'BOULEVARD'],
  ['RD', 'ROAD'],
  ['LN', 'LANE'],
  ['CT', 'COURT'],
  ['TER', 'TERRACE'],
];
const USES: {
  code: string;
  local: string;
  text: string;
  weight: number;
  base: number;
  vacant?: boolean;
  gov?: boolean;
  condo?: boolean;
}[] = [
  { code: '0100', local: '0101', text: 'SINGLE FAMILY', weight: 52, base: 420_000 },
  { code: '0400', local: '0404', text: 'CONDOMINIUM', weight: 15, base: 310_000, condo: true },
  { code: '0000', local: '0000', text: 'VACANT RESIDENTIAL', weight: 8, base: 90_000, vacant: true },
  { code: '0800', local: '0803', text: 'MULTI-FAMILY LESS THAN 10 UNITS', weight: 4, base: 650_000 },
  { code: '0300', local: '0310', text: 'MULTI-FAMILY 10 UNITS OR MORE', weight: 2, base: 4_200_000 },
  { code: '0200', local: '0202', text: 'MOBILE HOME', weight: 2, base: 140_000 },
  { code: '1100', local: '1100', text: 'STORES, ONE STORY', weight: 3, base: 1_100_000 },
  { code: '1700', local: '1700', text: 'OFFICE BUILDING, ONE STORY', weight: 3, base: 1_600_000 },
  { code: '2100', local: '2100', text: 'RESTAURANT, CAFETERIA', weight: 1, base: 900_000 },
  { code: '4800', local: '4800', text: 'WAREHOUSING, DISTRIBUTION TERMINAL', weight: 2, base: 2_300_000 },
  { code: '5100', local: '5100', text: 'CROPLAND SOIL CAPABILITY CLASS I', weight: 2, base: 180_000, vacant: true },
  { code: '7100', local: '7100', text: 'CHURCHES', weight: 1, base: 1_200_000 },
  {
    code: '8600',
    local: '8600',
    text: 'COUNTIES INCLUDING NON-MUNICIPAL GOVERNMENT',
    weight: 2,
    base: 750_000,
    gov: true,
    vacant: true,
  },
];
const useByCode = new Map(USES.map((u) => [u.code, u]));
function pickUse() {
  let r = rand() * USES.reduce((n, u) => n + u.weight, 0);
  for (const u of USES) if ((r -= u.weight) < 0) return u;
  return USES[0]!;
}

function owner(): string {
  const s = zipf(SURNAMES);
  const f = pick(FIRSTS);
  const style = rand();
  if (style < 0.5) return `${s} ${f}`;
  if (style < 0.68) return `${s} ${f} & ${pick(FIRSTS)}`;
  if (style < 0.74) return `${f} ${s}`;
  if (style < 0.84) return `${pick(WORDS)} ${pick(['HOLDINGS', 'PROPERTIES', 'INVESTMENTS', 'REALTY'])} LLC`;
  if (style < 0.92) return `${f} ${s} REVOCABLE TRUST`;
  if (style < 0.96) return `${s} ${f} TR`;
  return `EST OF ${s} ${f}`;
}

function address(condo: boolean): string {
  const [short, long] = pick(SUFFIXES);
  const dir = chance(0.25) ? `${pick(['N', 'S', 'E', 'W', 'NW', 'SW', 'NE', 'SE'])} ` : '';
  const street = `${int(1, 19999)} ${dir}${zipf(STREETS)} ${chance(0.8) ? short : long}`;
  return condo ? `${street} ${pick(['UNIT', 'APT', '#'])} ${int(1, 40)}${String(int(1, 12)).padStart(2, '0')}` : street;
}

type Value = string | number | boolean | null;
const lit = (v: Value): string => {
  if (v === null) return 'NULL';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v.startsWith('\u0000SQL:')) return v.slice(5);
  return `'${v.replace(/'/g, "''")}'`;
};
const rawSql = (s: string) => `\u0000SQL:${s}`;

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
const parcels: Parcel[] = [];
const cellsUsed = new Map<number, number>();
function nextCell(countyId: number): number {
  const n = cellsUsed.get(countyId) ?? 0;
  cellsUsed.set(countyId, n + 1);
  return n;
}
const square = (countyId: number) => `MULTIPOLYGON(${ring(cell(byId.get(countyId)!, nextCell(countyId)))})`;

// ---- Named cases (fixtures/README.md) -------------------------------------------------------------------------
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
  const md = byId.get(13)!;
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
    geomWkt: `MULTIPOLYGON(${ring(cell(md, a))}, ${ring(cell(md, b))})`,
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
    geomWkt: `MULTIPOLYGON(${ring(cell(md, a + 1))})`,
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

// ---- Bulk ------------------------------------------------------------------------------------------------------
for (const c of COUNTIES) {
  const seen = new Set(parcels.map((p) => `${p.county_id}:${p.parcel_id}`));
  for (let n = 1; n <= c.bulk; n++) {
    let id = c.parcelId(n + 10);
    while (seen.has(`${c.id}:${id}`)) id = c.parcelId(n + 10 + int(1000, 9000));
    seen.add(`${c.id}:${id}`);
    const use = c.id === 39 && chance(0.4) ? useByCode.get('5100')! : pickUse();
    const [city, zip] = pick(c.cities);
    const hasAddress = !(use.vacant && chance(0.6));
    const sold = chance(0.5);
    parcels.push({
      county_id: c.id,
      parcel_id: id,
      owner_name: use.gov ? `${c.name.toUpperCase()} COUNTY` : owner(),
      site_address_full: hasAddress ? address(Boolean(use.condo)) : null,
      site_city: hasAddress ? city : null,
      site_zip: hasAddress ? zip : null,
      dor_use_code: use.code,
      geomWkt: chance(0.01) ? null : square(c.id),
      last_sale_date: sold ? `${int(1996, 2025)}-${String(int(1, 12)).padStart(2, '0')}-01` : null,
      last_sale_price: null,
    });
  }
}

// ---- Values and the rest of each row ---------------------------------------------------------------------------
const countyFactor: Record<number, number> = { 13: 1.3, 6: 1.15, 50: 1.4, 29: 1.0, 48: 1.0, 39: 0.35 };
const rows = parcels.map((p, index) => {
  const use = useByCode.get(p.dor_use_code)!;
  const just = p.just_value ?? Math.round((use.base * countyFactor[p.county_id]! * (0.5 + rand() * 1.2)) / 100) * 100;
  const assessed = Math.round((just * (0.55 + rand() * 0.45)) / 100) * 100;
  const homestead = p.dor_use_code === '0100' && chance(0.45);
  const taxable =
    p.taxable_value ?? (use.gov || use.code === '7100' ? 0 : Math.max(0, assessed - (homestead ? 50000 : 0)));
  const built = use.vacant ? null : int(1948, 2024);
  const salePrice = p.last_sale_date
    ? (p.last_sale_price ?? Math.round((just * (0.55 + rand() * 0.6)) / 100) * 100)
    : null;
  p.last_sale_price = salePrice;
  const [oc, oz] = pick(byId.get(p.county_id)!.cities);
  const outOfState = chance(0.15);
  return [
    p.county_id,
    p.parcel_id,
    2025,
    p.owner_name,
    outOfState
      ? `${int(10, 999)} ${pick(['MAPLE', 'ELM', 'BROADWAY'])} ${pick(['ST', 'AVE'])}`
      : (p.site_address_full ?? `PO BOX ${int(100, 9999)}`),
    outOfState ? pick(['NEW YORK', 'ATLANTA', 'TORONTO']) : oc === 'UNINCORPORATED' ? 'MIAMI' : oc,
    outOfState ? pick(['NY', 'GA', 'ON']) : 'FL',
    outOfState ? pick(['10001', '30301', 'M5V 2T6']) : oz,
    p.site_address_full,
    p.site_city,
    p.site_address_full ? 'FL' : null,
    p.site_zip,
    p.dor_use_code,
    use.local,
    use.text,
    just,
    assessed,
    taxable,
    Math.round(just * 0.3),
    built,
    built === null ? null : Math.min(2025, built + int(0, 15)),
    built === null ? null : int(700, 4200),
    int(4000, 20000),
    built === null ? 0 : 1,
    use.code === '0800' ? int(2, 9) : use.code === '0300' ? int(10, 120) : built === null ? 0 : 1,
    `LOT ${int(1, 40)} BLK ${int(1, 30)} ${pick(WORDS)} ${pick(['ESTATES', 'SUBDIVISION', 'PARK', 'HEIGHTS'])} PB ${int(10, 190)}-${int(1, 99)}`,
    `C${p.county_id + 10}-000-${String(index).padStart(3, '0')}-${String(int(0, 9999)).padStart(4, '0')}-0`,
    chance(0.3) ? String(1_000_000 + index) : null,
    p.last_sale_date,
    salePrice,
    p.geomWkt ? rawSql(`ST_GeomFromText('${p.geomWkt}', 4326)`) : null,
    FIXED_TIME,
    FIXED_TIME,
  ] as Value[];
});
const PARCEL_COLUMNS = [
  'county_id',
  'parcel_id',
  'roll_year',
  'owner_name',
  'owner_address1',
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
  'geom',
  'created_at',
  'updated_at',
];

// ---- Sales: history for about 40% of sold parcels, the newest equal to the parcel's last sale -----------------
const QUAL = ['01', '01', '01', '02', '05', '11', '12', '30', '37'];
const DEEDS = ['WD', 'WD', 'WD', 'QCD', 'TD', 'CT', null];
const saleRows: Value[][] = [];
parcels.forEach((p, index) => {
  if (!p.last_sale_date) return;
  const history = index < NAMED ? (p.parcel_id === '0131320350010' ? 3 : 1) : chance(0.4) ? int(1, 4) : 0;
  let date = p.last_sale_date;
  let price = p.last_sale_price!;
  for (let k = 0; k < history; k++) {
    const qual = k === 0 && index < NAMED ? '01' : pick(QUAL);
    saleRows.push([
      p.county_id,
      p.parcel_id,
      date,
      qual === '11' ? 100 : price,
      String(20000 + int(0, 15000)),
      String(int(1, 4999)),
      `${date.slice(0, 4)}R${String(int(1, 999999)).padStart(6, '0')}`,
      pick(DEEDS),
      qual,
      p.dor_use_code === '0000' ? 'V' : 'I',
      qual === '05',
      chance(0.5) ? `${pick(SURNAMES)} ${pick(FIRSTS)}` : null,
      chance(0.5) ? p.owner_name : null,
      p.dor_use_code,
      'sdf',
      FIXED_TIME,
    ]);
    const years = int(2, 9);
    date = `${Number(date.slice(0, 4)) - years}-${String(int(1, 12)).padStart(2, '0')}-01`;
    price = Math.round((price * (0.6 + rand() * 0.3)) / 100) * 100;
  }
});
const SALE_COLUMNS = [
  'county_id',
  'parcel_id',
  'sale_date',
  'sale_price',
  'book',
  'page',
  'instrument_number',
  'deed_code',
  'qualification_code',
  'vacant_improved',
  'multi_parcel',
  'grantor',
  'grantee',
  'dor_use_code',
  'source',
  'created_at',
];

// ---- Delinquency sources: per county and tax year, active / inactive / login-only / failing -------------------
const SOURCE_COLUMNS = [
  'county_id',
  'tax_year',
  'vendor',
  'sale_url',
  'download_url',
  'source_kind',
  'requires_login',
  'last_checked_at',
  'last_success_at',
  'last_error',
  'active',
  'notes',
  'created_at',
  'updated_at',
];
const sourceRows: Value[][] = [];
for (const [countyId, vendor, url] of [
  [13, 'LienHub', 'https://lienhub.com'],
  [6, 'LienHub', 'https://lienhub.com'],
  [50, 'RealTaxLien', 'https://palmbeachfl.realtaxlien.com'],
  [29, 'LienHub', 'https://lienhub.com'],
] as [number, string, string][]) {
  for (const year of [2023, 2024, 2025]) {
    const failing = countyId === 29 && year === 2025;
    sourceRows.push([
      countyId,
      year,
      vendor,
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

// ---- Delinquency and certificate records -----------------------------------------------------------------------
const DELINQUENCY_COLUMNS = [
  'county_id',
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
  'ingested_at',
  'created_at',
  'updated_at',
];
const HOLDERS = [
  'CAPITAL ONE CP AS CUST',
  '5T WEALTH PARTNERS LP',
  'TLGFY LLC',
  'BRIDGE TAX LLC',
  'FIG AS CUST FOR FIGSNC',
  'MTAG CUST FOR ALTERNA FUNDING',
];
const vendorOf: Record<number, string> = { 13: 'LienHub', 6: 'LienHub', 50: 'RealTaxLien', 29: 'LienHub' };
const delinquencyRows: Value[][] = [];
const keyTaken = new Set<string>();
let certSeq = 1000;
function delinquency(
  p: { county_id: number; parcel_id: string; owner_name: string | null; site_address_full: string | null },
  year: number,
  status: string | null,
  amount?: number,
) {
  const key = `${p.county_id}:${year}:${p.parcel_id.replace(/[^A-Za-z0-9]/g, '').toUpperCase()}`;
  if (keyTaken.has(key)) return;
  keyTaken.add(key);
  const delinquent = amount ?? Math.round((200 + rand() * 14800) * 100) / 100;
  const total = Math.round((delinquent * 1.03 + 6.25 + 1.5 + rand() * 40) * 100) / 100;
  const certified = status === 'certificate_sold' || status === 'redeemed' || status === 'struck';
  const struck = status === 'struck';
  const bid = struck ? 18 : Math.round(rand() * 72) / 4;
  delinquencyRows.push([
    p.county_id,
    p.parcel_id,
    year,
    status,
    delinquent,
    total,
    certified ? `${year}-${String(certSeq++).padStart(6, '0')}` : null,
    certified ? `${year + 1}-06-01` : null,
    chance(0.9) ? p.owner_name : null,
    chance(0.85) ? p.site_address_full : null,
    vendorOf[p.county_id]!,
    certified ? Math.round(total * 1.05 * 100) / 100 : null,
    certified ? (struck ? 'COUNTY HELD' : pick(HOLDERS)) : null,
    certified ? bid : null,
    certified ? bid : null,
    FIXED_TIME,
    FIXED_TIME,
    FIXED_TIME,
  ]);
}
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
['delinquent', 'delinquent', 'delinquent', 'redeemed', 'redeemed', 'redeemed', 'struck'].forEach((status, i) =>
  delinquency(palmBeach[i + 2]!, 2022, status),
);
const STATUSES: (string | null)[] = [
  'certificate_sold',
  'certificate_sold',
  'certificate_sold',
  'certificate_sold',
  'delinquent',
  'delinquent',
  'redeemed',
  'redeemed',
  'open',
  'struck',
  null,
  null,
];
for (const p of parcels.slice(NAMED)) {
  if (![13, 6, 50, 29].includes(p.county_id) || !chance(0.33)) continue;
  for (const year of [2023, 2024, 2025]) {
    if (chance(0.45)) delinquency(p, year, pick(STATUSES));
  }
}

// ---- SQL -----------------------------------------------------------------------------------------------------
function inserts(table: string, columns: string[], data: Value[][]): string {
  const out: string[] = [];
  for (let i = 0; i < data.length; i += 200) {
    const batch = data.slice(i, i + 200).map((r) => `  (${r.map(lit).join(', ')})`);
    out.push(`INSERT INTO ${table} (${columns.join(', ')}) VALUES\n${batch.join(',\n')};`);
  }
  return out.join('\n');
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
writeFileSync(new URL('../fixtures/fixtures.sql', import.meta.url), sql);
console.log(
  `fixtures: ${parcels.length} parcels (${NAMED} named), ${saleRows.length} sales, ${sourceRows.length} sources, ${delinquencyRows.length} delinquency records`,
);
