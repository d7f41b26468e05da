// Profile `state`, one county: walks its parcels once, in subdivision tiles of 100, and streams the NAL row, the
// parcel's SDF sales, its polygon and its delinquency records to four files. Only the current subdivision and a small
// ring of recent owners are held in memory.
import { join } from 'node:path';
import { COUNTIES, type CountyDef } from '../counties.ts';
import { DELINQUENCY_COLUMNS, NAL, NAL_COLUMNS, SDF_COLUMNS } from '../columns.ts';
import type { OlderRoll } from '../years.ts';
import { certificateNumber, certificateSaleDate, isCertified, STRUCK_HOLDER, STRUCK_RATE } from '../delinquency.ts';
import { csvField, csvLine, money, pad, pad2 } from '../format.ts';
import { BlockWriter, planBlock, TILE } from '../geometry.ts';
import { parcelId, plssOf, stateParcelId, SUBDIVISION } from '../ids.ts';
import {
  businessName,
  CERTIFICATE_HOLDERS,
  charityName,
  firstName,
  LEGAL_WORDS,
  PORTFOLIO_OWNERS,
  spellOut,
  street,
  SUBDIVISION_WORDS,
  surname,
} from '../names.ts';
import { cumulative, hash32, mix32, Rng } from '../prng.ts';
import { Sink } from '../sink.ts';
import { dorUc, MIX_TABLES, type Kind, type Use } from '../uses.ts';

export const ROLL_YEAR = 2026;
export const TAX_YEARS = [2022, 2023, 2024, 2025] as const;
export const STATUSES = ['delinquent', 'certificate_sold', 'struck', 'redeemed', 'open'] as const;

/** FDOR file names (florida.md 1.2): `NAL23P202601.csv`; our own names for polygons and delinquencies. */
export function countyFiles(c: CountyDef) {
  return {
    nal: join('NAL', `NAL${c.coNo}P${ROLL_YEAR}01.csv`),
    sdf: join('SDF', `SDF${c.coNo}P${ROLL_YEAR}01.csv`),
    gis: join('GIS', `${c.slug}.geojsonl`),
    delinquencies: join('DELINQUENCIES', `${c.slug}.csv`),
  };
}

export interface CountyResult {
  coNo: number;
  slug: string;
  name: string;
  vendor: string;
  parcels: number;
  sales: number;
  polygons: number;
  delinquencies: number;
  files: ReturnType<typeof countyFiles>;
  bytes: { nal: number; sdf: number; gis: number; delinquencies: number };
  /** `make data YEARS=n`: the county's older rolls, newest first (scripts/generate/years.ts). */
  olderNal?: OlderRoll[];
}

/** FIPS county part (florida.md 2): odd alphabetical codes, Miami-Dade 086. */
const fips3 = (c: CountyDef) => (c.coNo === 23 ? '086' : pad(2 * (c.coNo - 11) + 1, 3));

// Relative Florida home-price level by year (2026 = 1), to age sale prices. Rough shape: 2006 peak, 2011 trough,
// 2021-2022 run-up.
const PRICE_INDEX: Record<number, number> = {};
{
  const anchors: [number, number][] = [
    [1985, 0.22],
    [1995, 0.3],
    [2000, 0.38],
    [2006, 0.78],
    [2011, 0.42],
    [2016, 0.6],
    [2020, 0.72],
    [2022, 0.97],
    [2026, 1],
  ];
  for (let i = 0; i + 1 < anchors.length; i++) {
    const [y0, v0] = anchors[i]!;
    const [y1, v1] = anchors[i + 1]!;
    for (let y = y0; y <= y1; y++) PRICE_INDEX[y] = v0 + ((v1 - v0) * (y - y0)) / (y1 - y0);
  }
}

// Year of a parcel's newest sale: SDF history goes back years, weighted to recent, busy years.
const SALE_YEARS = Array.from({ length: ROLL_YEAR - 1995 + 1 }, (_, i) => 1995 + i);
const SALE_YEAR_CUM = cumulative(
  SALE_YEARS.map((y) => (y === ROLL_YEAR ? 0.5 : y >= 2020 && y <= 2022 ? 1.6 : y >= 2012 ? 1.1 : 0.45)),
);
const SALE_COUNT_CUM = cumulative([70, 17, 8, 3, 1.5, 0.5]);
const QUAL: [string, number][] = [
  ['01', 50],
  ['02', 3],
  ['03', 2],
  ['05', 3],
  ['06', 0.2],
  ['11', 14],
  ['12', 5],
  ['13', 0.1],
  ['14', 0.5],
  ['16', 1.5],
  ['17', 0.3],
  ['18', 1.5],
  ['19', 2.5],
  ['20', 0.1],
  ['21', 0.3],
  ['30', 4],
  ['31', 0.2],
  ['32', 0.5],
  ['33', 0.2],
  ['34', 0.2],
  ['35', 0.3],
  ['36', 0.3],
  ['37', 3],
  ['38', 1.5],
  ['39', 1],
  ['40', 0.5],
  ['41', 2],
  ['42', 0.05],
  ['43', 1],
  ['98', 0.3],
];
const QUAL_CUM = cumulative(QUAL.map(([, w]) => w));
/** Price multiplier by qualification code: nominal deeds, bank sales, partial interests, related parties. */
const QUAL_PRICE: Record<string, number> = { '12': 0.72, '16': 0.5, '19': 0.85, '30': 0.6, '38': 0.78, '43': 0.8 };

// Delinquency status mixes (as of the July 2026 roll): the newest tax year's certificate sale just happened.
const STATUS_LABELS = [...STATUSES, ''] as const;
const STATUS_NEWEST = cumulative([14, 48, 8, 8, 14, 8]);
const STATUS_OLDER = cumulative([5, 22, 8, 55, 3, 7]);

const OUT_OF_STATE: [city: string, st: string, full: string, zip: string][] = [
  ['NEW YORK', 'NY', 'NEW YORK', '10001'],
  ['BROOKLYN', 'NY', 'NEW YORK', '11201'],
  ['ATLANTA', 'GA', 'GEORGIA', '30301'],
  ['VALDOSTA', 'GA', 'GEORGIA', '31601'],
  ['CHICAGO', 'IL', 'ILLINOIS', '60601'],
  ['BOSTON', 'MA', 'MASSACHUSETTS', '02108'],
  ['NEWARK', 'NJ', 'NEW JERSEY', '07102'],
  ['CHARLOTTE', 'NC', 'NORTH CAROLINA', '28202'],
  ['COLUMBUS', 'OH', 'OHIO', '43215'],
  ['DETROIT', 'MI', 'MICHIGAN', '48226'],
  ['HOUSTON', 'TX', 'TEXAS', '77002'],
  ['PHILADELPHIA', 'PA', 'PENNSYLVANIA', '19103'],
  ['NASHVILLE', 'TN', 'TENNESSEE', '37203'],
  ['DOTHAN', 'AL', 'ALABAMA', '36301'],
];
const FOREIGN: [city: string, zip: string, country: string][] = [
  ['TORONTO ON', 'M5V 2T6', 'CANADA'],
  ['MONTREAL QC', 'H3B 1A7', 'CANADA'],
  ['BOGOTA', '110111', 'COLOMBIA'],
  ['CARACAS', '1010', 'VENEZUELA'],
  ['LONDON', 'SW1A 1AA', 'UNITED KINGDOM'],
  ['BUENOS AIRES', 'C1002', 'ARGENTINA'],
  ['SAO PAULO', '01310-100', 'BRAZIL'],
];
const UNIT_WORDS = ['UNIT', 'UNIT', 'APT', '#'];

interface Sale {
  yr: number;
  mo: number;
  price: number;
  qual: string;
  vi: 'V' | 'I';
  multi: string;
  book: number;
  page: number;
  clerk: string;
  id: string;
}

/** What one subdivision (100 parcels, one 10 x 10 polygon tile) shares: kind, streets, plat, city, age. */
interface Subdivision {
  kind: Kind;
  lettered: boolean;
  name: string;
  plat: string;
  cityIdx: number;
  streets: string[];
  houseBase: number[];
  tower: string;
  yearBuilt: number;
  priceFactor: number;
  nbrhd: string;
  mktAr: string;
  census: string;
  grp: string;
  builder: string | null;
}

export async function generateCounty(
  c: CountyDef,
  parcels: number,
  seed: string,
  outDir: string,
): Promise<CountyResult> {
  const r = new Rng(hash32(`${seed}:${c.coNo}`));
  const files = countyFiles(c);
  const nal = new Sink(join(outDir, files.nal));
  const sdf = new Sink(join(outDir, files.sdf));
  const gis = new Sink(join(outDir, files.gis));
  const del = new Sink(join(outDir, files.delinquencies));
  const sinks = [nal, sdf, gis, del];
  nal.line(csvLine(NAL_COLUMNS), false);
  sdf.line(csvLine(SDF_COLUMNS), false);
  del.line(csvLine(DELINQUENCY_COLUMNS), false);

  const polygonsOut = new BlockWriter(planBlock(c, parcels));
  const countyUpper = c.name.toUpperCase();
  const fullStateNames = c.coNo % 5 === 0; // some appraisers write FLORIDA, most write FL
  const unitInAddr2 = c.coNo % 3 === 0;
  const numbered = c.coNo === 23 ? 0.55 : c.coNo === 16 || c.coNo === 60 ? 0.3 : c.idStyle === 'dashed' ? 0.02 : 0.08;
  const altKey = [58, 74, 66, 45, 15, 52].includes(c.coNo);
  const paStyle = mix32(c.coNo, 5) % 4; // 0-1: 4-digit local codes, 2: 2-digit, 3: DOR code as is
  const millage = 0.014 + (mix32(c.coNo, 9) % 80) / 10_000;
  const booksPerYear = Math.max(12, Math.round(c.parcels / 1500));
  const bookBase = 1000 + ((c.coNo * 137) % 5000);
  const instrumentsPerYear = Math.max(5000, Math.round(c.parcels * 0.35));
  const cityCum = cumulative(c.cities.map((_, i) => 1 / (i + 1)));
  const saleDay = [`-06-01`, `-05-28`, `-05-29`, `-05-30`, `-05-31`, `-05-27`][c.coNo % 6]!;
  const kindCum = cumulative([Math.max(0, 1 - c.condo - c.vacant - c.rural - 0.07), c.condo, c.vacant, c.rural, 0.07]);
  const KINDS: Kind[] = ['residential', 'condo', 'vacant', 'rural', 'commercial'];

  const recentOwners: string[] = [];
  let saleSeq = 0;
  const certSeq = new Map<number, number>();
  let polygons = 0;

  const row: string[] = NAL_COLUMNS.map(() => ''); // packed, so join() takes the fast path
  let sub: Subdivision | null = null;

  const personName = (hispanic: boolean): string => {
    const s = surname(r, hispanic);
    const f = firstName(r, hispanic);
    const style = r.next();
    if (style < 0.6) return `${s} ${f}`;
    if (style < 0.72) return `${s} ${f} ${String.fromCharCode(65 + r.int(0, 25))}`;
    if (style < 0.8) return `${f} ${s}`; // reversed order, as some appraisers write it
    if (style < 0.86 && hispanic) return `${s} ${surname(r, true)} ${f}`; // two surnames
    if (style < 0.9) return `${s} ${f} ${r.pick(['JR', 'SR', 'II', 'III'])}`;
    return `${s} ${f}`;
  };

  const ownerName = (use: Use, city: string): { name: string; person: boolean; trust: boolean } => {
    if (use.gov) {
      const name =
        use.code === 83
          ? `SCHOOL BOARD OF ${countyUpper} COUNTY`
          : use.code === 89
            ? `CITY OF ${city === 'UNINCORPORATED' ? c.cities[0]![0] : city}`
            : use.code === 88
              ? r.pick(['UNITED STATES OF AMERICA', 'USA'])
              : use.gov === 'S'
                ? r.pick([
                    'STATE OF FLORIDA',
                    'BOARD OF TRUSTEES OF THE INTERNAL IMPROVEMENT TRUST FUND',
                    'FLORIDA DEPARTMENT OF TRANSPORTATION',
                  ])
                : r.pick([`${countyUpper} COUNTY`, `${countyUpper} COUNTY BOARD OF COUNTY COMMISSIONERS`]);
      return { name, person: false, trust: false };
    }
    if (use.code === 71) {
      const name = `${r.pick(['FIRST', 'GRACE', 'NEW LIFE', 'ST MARY', 'CALVARY', 'MOUNT ZION', 'IGLESIA'])} ${r.pick(['BAPTIST CHURCH', 'METHODIST CHURCH', 'CHURCH OF GOD', 'PRESBYTERIAN CHURCH', 'CATHOLIC CHURCH', 'EVANGELICA'])} OF ${city === 'UNINCORPORATED' ? countyUpper : city} INC`;
      return { name, person: false, trust: false };
    }
    if (use.exempt) return { name: charityName(r), person: false, trust: false };
    if (recentOwners.length > 0 && r.chance(0.03)) {
      return { name: recentOwners[r.int(0, recentOwners.length - 1)]!, person: false, trust: false };
    }
    if (use.residential && !use.condo && r.chance(0.012)) {
      return { name: PORTFOLIO_OWNERS[r.zipf(PORTFOLIO_OWNERS.length, 2)]!, person: false, trust: false };
    }
    const commercial = (!use.residential && !use.ag) || use.code === 3; // apartment complexes are mostly companies
    const hispanic = r.chance(c.hispanic);
    const style = r.next();
    let name: string;
    let person = true;
    let trust = false;
    if (commercial ? style < 0.65 : style < (use.condo ? 0.14 : 0.08)) {
      name = businessName(r);
      person = false;
    } else if (style < 0.5 || commercial) {
      name = personName(hispanic);
    } else if (style < 0.7) {
      // couples: same surname, two surnames, reversed
      const s = surname(r, hispanic);
      const f1 = firstName(r, hispanic);
      const f2 = firstName(r, hispanic);
      const form = r.next();
      name =
        form < 0.55
          ? `${s} ${f1} & ${f2}`
          : form < 0.75
            ? `${s} ${f1} & ${surname(r, hispanic)} ${f2}`
            : form < 0.9
              ? `${f1} & ${f2} ${s}`
              : `${s} ${f1} & ${f2} H/W`;
    } else if (style < 0.8) {
      const s = surname(r, hispanic);
      const f = firstName(r, hispanic);
      const form = r.next();
      name =
        form < 0.4
          ? `${f} ${s} REVOCABLE TRUST`
          : form < 0.7
            ? `${s} ${f} TR`
            : form < 0.85
              ? `${s} FAMILY TRUST`
              : `${s} ${f} TRUSTEE`;
      trust = true;
    } else if (style < 0.82) {
      const s = surname(r, hispanic);
      name = r.chance(0.6) ? `EST OF ${s} ${firstName(r, hispanic)}` : `${s} ${firstName(r, hispanic)} EST`;
    } else if (style < 0.9) {
      name = `${personName(hispanic)} LIFE ESTATE`;
    } else {
      name = personName(hispanic);
    }
    if (!person || r.chance(0.02)) {
      if (recentOwners.length < 512) recentOwners.push(name);
      else recentOwners[r.int(0, 511)] = name;
    }
    return { name, person, trust };
  };

  const newSubdivision = (t: number): Subdivision => {
    const kind = KINDS[r.weighted(kindCum)]!;
    const cityIdx = r.weighted(cityCum);
    const streets = [street(r, numbered), street(r, numbered), street(r, numbered)];
    const era = r.next();
    const yearBuilt =
      kind === 'rural'
        ? r.int(1935, 2022)
        : era < 0.1
          ? r.int(1920, 1959)
          : era < 0.45
            ? r.int(1960, 1989)
            : era < 0.85
              ? r.int(1990, 2015)
              : r.int(2016, 2025);
    return {
      kind,
      lettered: kind === 'condo' && r.chance(0.7),
      name: `${r.pick(SUBDIVISION_WORDS)} ${r.pick(LEGAL_WORDS)}${r.chance(0.3) ? ` ${r.pick(['UNIT', 'SEC', 'PHASE'])} ${r.int(1, 9)}` : ''}`,
      plat: `PB ${r.int(1, 190)}-${r.int(1, 99)}`,
      cityIdx,
      streets,
      houseBase: streets.map(() => r.int(1, 199) * 100),
      tower: `${r.int(1, 199) * 100} ${street(r, numbered)}`,
      yearBuilt,
      priceFactor: r.lognormal(0.3),
      nbrhd: String(r.int(100, 9999)),
      mktAr: pad2(r.int(1, 40)),
      census: `12${fips3(c)}${pad(100 + (Math.floor(t / 40) % 9800) * 100 + r.int(0, 99), 6)}${r.int(1, 4)}${pad(r.int(0, 999), 3)}`,
      grp: String(r.int(0, 9)),
      builder: yearBuilt >= 2024 && kind !== 'rural' && r.chance(0.3) ? r.pick(PORTFOLIO_OWNERS.slice(-4)) : null,
    };
  };

  const bookAt = (yr: number, mo: number) =>
    bookBase + (yr - 1985) * booksPerYear + Math.floor(((mo - 1) * booksPerYear) / 12) + r.int(0, booksPerYear >> 4);

  let delinquentLastYear = false;
  for (let k = 0; k < parcels; k++) {
    const w = k % SUBDIVISION;
    if (w === 0) {
      sub = newSubdivision(k / SUBDIVISION);
      // Backpressure: let the file streams catch up before the next subdivision.
      for (const s of sinks) {
        const wait = s.ready();
        if (wait) await wait;
      }
    }
    const s = sub!;
    const plss = plssOf(c, k);
    const { uses, cum } = MIX_TABLES[s.kind];
    const use = uses[r.weighted(cum)]!;
    const id = parcelId(c, k, s.lettered);
    const [city, zip] = c.cities[s.cityIdx]!;

    // ---- site address --------------------------------------------------------------------------------------
    const hasAddress = !(use.vacant && r.chance(use.gov || use.ag || use.code >= 94 ? 0.85 : 0.45)) && use.code !== 9;
    let phy1 = '';
    let phy2 = '';
    const unit = `${Math.floor(w / TILE) + 1}${pad2((w % TILE) + 1)}`;
    if (hasAddress) {
      if (use.code === 3) phy1 = s.tower;
      else if (use.condo) {
        const word = UNIT_WORDS[(c.coNo + s.cityIdx) % UNIT_WORDS.length]!;
        if (unitInAddr2) {
          phy1 = s.tower;
          phy2 = `${word} ${unit}`;
        } else phy1 = `${s.tower} ${word} ${unit}`;
      } else {
        const row10 = Math.floor(w / TILE);
        const si = row10 % 3;
        const house = s.houseBase[si]! + (Math.floor(row10 / 3) * TILE + (w % TILE)) * 2;
        phy1 = `${house} ${s.streets[si]}`;
      }
      phy1 = spellOut(phy1, r);
    }
    const phyCity = hasAddress || r.chance(0.5) ? city : '';

    // ---- owner ---------------------------------------------------------------------------------------------
    const owner =
      s.builder && (use.code === 0 || use.code === 1) && r.chance(0.6)
        ? { name: s.builder, person: false, trust: false }
        : ownerName(use, city);
    const homestead =
      owner.person && use.residential && !use.vacant && use.code !== 3 && use.code !== 9 && r.chance(0.55);

    // ---- building and values -------------------------------------------------------------------------------
    const improved = !use.vacant;
    const act = improved ? Math.min(2025, Math.max(1900, s.yearBuilt + r.int(-2, 2))) : 0;
    const eff = improved ? Math.min(2025, act + (r.chance(0.6) ? 0 : r.int(1, 25))) : 0;
    const area = improved && use.area ? r.int(use.area[0], use.area[1]) : 0;
    let jv = Math.round((use.base * c.value * s.priceFactor * r.lognormal(0.3)) / 10) * 10;
    if (use.code === 9 || use.code === 94) jv = use.code === 9 ? 0 : r.int(0, 20) * 100;
    if (use.ag) jv = Math.round(jv * (0.5 + r.next()));
    const landShare = use.vacant ? 1 : use.condo ? 0.12 + r.next() * 0.1 : 0.2 + r.next() * 0.3;
    const lnd = Math.round(jv * landShare);
    const lastSaleYear = r.chance(0.42) ? SALE_YEARS[r.weighted(SALE_YEAR_CUM)]! : 0;

    // Assessed: Save-Our-Homes for homesteads, the 10% non-homestead cap, class-use values for agriculture.
    let avNsd: number;
    let avSd: number;
    if (homestead) {
      const held = lastSaleYear ? ROLL_YEAR - lastSaleYear : r.int(8, 40);
      avNsd = Math.round(jv * Math.max(0.3, 1 - held * 0.035 - r.next() * 0.05));
      avSd = avNsd;
    } else if (use.ag) {
      avNsd = Math.round(jv * (0.05 + r.next() * 0.15));
      avSd = avNsd;
    } else {
      avNsd = Math.round(jv * (r.chance(0.5) ? 1 : 0.72 + r.next() * 0.28));
      avSd = use.residential ? jv : avNsd; // the 10% non-homestead cap does not apply to school levies for residences
    }
    const taxExempt = Boolean(use.gov || use.exempt) || jv === 0;
    // Homestead: the first $25,000 off every levy, the second $25,000 off non-school levies for value over $50,000.
    const hx = homestead ? Math.min(avNsd, 25_000) + Math.min(25_000, Math.max(0, avNsd - 50_000)) : 0;
    const tvSd = taxExempt ? 0 : Math.max(0, avSd - (homestead ? 25_000 : 0));
    const tvNsd = taxExempt ? 0 : Math.max(0, avNsd - hx);

    // ---- sales (newest first) ------------------------------------------------------------------------------
    const sales: Sale[] = [];
    if (lastSaleYear && !use.gov && !(use.code === 94)) {
      let nSales = Math.max(1, r.weighted(SALE_COUNT_CUM));
      let yr = lastSaleYear;
      let mo = yr === ROLL_YEAR ? r.int(1, 6) : r.int(1, 12);
      while (nSales-- > 0 && yr >= 1985) {
        const qi = r.weighted(QUAL_CUM);
        let qual = QUAL[qi]![0];
        if (yr === ROLL_YEAR && mo >= 4 && r.chance(0.6)) qual = '99'; // recorded within the last 90 days
        const vacantAtSale = use.vacant || yr < act;
        const base = (vacantAtSale ? Math.max(lnd, 5000) : jv) / 0.85;
        let price = Math.round((base * PRICE_INDEX[yr]! * r.lognormal(0.12)) / 100) * 100;
        price = Math.round(price * (QUAL_PRICE[qual] ?? 1));
        if (qual === '11') price = r.pick([100, 100, 10, 0]);
        const multi = qual === '05' || qual === '43' ? 'M' : '';
        if (qual === '05') price *= r.int(2, 6);
        const clerkSeq = r.int(1, instrumentsPerYear);
        sales.push({
          yr,
          mo,
          price,
          qual,
          vi: vacantAtSale ? 'V' : 'I',
          multi,
          book: bookAt(yr, mo),
          page: r.int(1, 4999),
          clerk: c.coNo === 23 ? `${yr}R${pad(clerkSeq, 6)}` : `${yr}${pad(clerkSeq, 7)}`,
          id: String(++saleSeq),
        });
        // the previous sale: 1-10 years earlier
        const back = r.int(10, 120);
        const months = yr * 12 + (mo - 1) - back;
        yr = Math.floor(months / 12);
        mo = (months % 12) + 1;
      }
    }

    // ---- NAL row -------------------------------------------------------------------------------------------
    row.fill('');
    const dor = dorUc(use.code);
    const strata = String(
      use.code < 10 ? 1 : use.code < 50 ? 2 : use.code < 70 ? 3 : use.code < 80 ? 4 : use.code < 90 ? 5 : 6,
    );
    const twn = `${pad2(plss.twp)}${c.twpDir}`;
    const rng = `${pad2(plss.rng)}${c.rngDir}`;
    const statePar = stateParcelId(
      c.coNo,
      Math.floor(k / 10_000_000),
      Math.floor(k / 10_000) % 1000,
      k % 10_000,
      k % 7,
    );
    row[NAL.CO_NO] = String(c.coNo);
    row[NAL.PARCEL_ID] = id;
    row[NAL.FILE_T] = 'R';
    row[NAL.ASMNT_YR] = String(ROLL_YEAR);
    row[NAL.BAS_STRT] = strata;
    row[NAL.ATV_STRT] = strata;
    row[NAL.GRP_NO] = s.grp;
    row[NAL.DOR_UC] = dor;
    row[NAL.PA_UC] =
      paStyle <= 1 ? `${dor.slice(1)}${pad2(mix32(use.code, s.cityIdx) % 4)}` : paStyle === 2 ? dor.slice(1) : dor;
    row[NAL.JV] = String(jv);
    row[NAL.AV_SD] = String(avSd);
    row[NAL.AV_NSD] = String(avNsd);
    row[NAL.TV_SD] = String(tvSd);
    row[NAL.TV_NSD] = String(tvNsd);
    if (homestead) {
      row[NAL.JV_HMSTD] = String(jv);
      row[NAL.AV_HMSTD] = String(avNsd);
    } else if (use.ag) {
      row[NAL.JV_CLASS_USE] = String(jv);
      row[NAL.AV_CLASS_USE] = String(avNsd);
    } else if (use.residential && !taxExempt) {
      row[NAL.JV_NON_HMSTD_RESD] = String(jv);
      row[NAL.AV_NON_HMSTD_RESD] = String(avNsd);
    } else if (!taxExempt) {
      row[NAL.JV_RESD_NON_RESD] = String(jv);
      row[NAL.AV_RESD_NON_RESD] = String(avNsd);
    }
    if (improved && act >= 2025) row[NAL.NCONST_VAL] = String(Math.round(jv * 0.6));
    row[NAL.LND_VAL] = String(lnd);
    if (use.condo) {
      row[NAL.LND_UNTS_CD] = '4';
      row[NAL.NO_LND_UNTS] = '1';
    } else if (use.ag || s.kind === 'rural' || use.code === 99) {
      const acres = Math.round((1 + r.next() * 79) * 100) / 100;
      row[NAL.LND_UNTS_CD] = '1';
      row[NAL.NO_LND_UNTS] = String(acres);
      row[NAL.LND_SQFOOT] = String(Math.round(acres * 43_560));
    } else {
      const sqft = r.int(4000, 14000);
      row[NAL.LND_UNTS_CD] = '2';
      row[NAL.NO_LND_UNTS] = String(sqft);
      row[NAL.LND_SQFOOT] = String(sqft);
    }
    row[NAL.DT_LAST_INSPT] = `${pad2(r.int(1, 12))}${pad2(r.int(18, 25))}`;
    if (improved) {
      row[NAL.IMP_QUAL] = String(r.int(1, 5));
      row[NAL.CONST_CLASS] = String(r.int(1, 5));
      row[NAL.EFF_YR_BLT] = String(eff);
      row[NAL.ACT_YR_BLT] = String(act);
      row[NAL.TOT_LVG_AREA] = area ? String(area) : '';
      row[NAL.NO_BULDNG] = String(use.residential ? 1 : r.int(1, 3));
      row[NAL.NO_RES_UNTS] = String(
        use.code === 8 ? r.int(2, 9) : use.code === 3 ? r.int(10, 240) : use.residential ? 1 : 0,
      );
      if (r.chance(0.35)) row[NAL.SPEC_FEAT_VAL] = String(r.int(5, 600) * 100);
    } else {
      row[NAL.NO_BULDNG] = '0';
      row[NAL.NO_RES_UNTS] = '0';
    }
    for (let i = 0; i < 2 && i < sales.length; i++) {
      const sale = sales[i]!;
      const o = i === 0 ? NAL.MULTI_PAR_SAL1 : NAL.MULTI_PAR_SAL2;
      row[o] = sale.multi;
      row[o + 1] = sale.qual;
      row[o + 2] = sale.vi;
      row[o + 3] = String(sale.price);
      row[o + 4] = String(sale.yr);
      row[o + 5] = String(sale.mo);
      row[o + 6] = String(sale.book);
      row[o + 7] = String(sale.page);
      row[o + 8] = sale.clerk;
    }

    // Mailing address: owner-occupied homesteads get their own site; others elsewhere in Florida, out of state,
    // or abroad.
    const mail = r.next();
    row[NAL.OWN_NAME] = csvField(owner.name);
    if ((homestead || (owner.person && mail < 0.25)) && phy1) {
      row[NAL.OWN_ADDR1] = csvField(phy2 ? `${phy1} ${phy2}` : phy1);
      row[NAL.OWN_CITY] = csvField(city === 'UNINCORPORATED' ? c.cities[0]![0] : city);
      row[NAL.OWN_STATE] = fullStateNames ? 'FLORIDA' : 'FL';
      row[NAL.OWN_ZIPCD] = zip;
    } else if (mail < 0.7 || use.gov) {
      const other = use.gov || mail < 0.45 ? c : COUNTIES[r.int(0, COUNTIES.length - 1)]!;
      const [oc, oz] = other.cities[r.int(0, other.cities.length - 1)]!;
      row[NAL.OWN_ADDR1] = csvField(
        r.chance(0.15) ? `PO BOX ${r.int(1, 99999)}` : `${r.int(1, 19999)} ${street(r, 0.1)}`,
      );
      row[NAL.OWN_CITY] = csvField(oc === 'UNINCORPORATED' ? other.cities[0]![0] : oc);
      row[NAL.OWN_STATE] = fullStateNames ? 'FLORIDA' : 'FL';
      row[NAL.OWN_ZIPCD] = oz;
    } else if (mail < 0.95) {
      const [oc, st, full, oz] = OUT_OF_STATE[r.zipf(OUT_OF_STATE.length, 3)]!;
      row[NAL.OWN_ADDR1] = csvField(`${r.int(1, 9999)} ${street(r, 0.3)}`);
      if (r.chance(0.1)) row[NAL.OWN_ADDR2] = `STE ${r.int(100, 999)}`;
      row[NAL.OWN_CITY] = oc;
      row[NAL.OWN_STATE] = fullStateNames ? full : st;
      row[NAL.OWN_ZIPCD] = r.chance(0.3) ? `${oz}-${pad(r.int(0, 9999), 4)}` : oz;
    } else {
      const [oc, oz, country] = FOREIGN[r.int(0, FOREIGN.length - 1)]!;
      row[NAL.OWN_ADDR1] = csvField(`${r.int(1, 999)} ${street(r, 0)}`);
      row[NAL.OWN_CITY] = oc;
      row[NAL.OWN_STATE] = country;
      row[NAL.OWN_ZIPCD] = oz;
    }
    row[NAL.OWN_STATE_DOM] = homestead ? 'FL' : '';
    if (owner.trust && r.chance(0.3)) {
      row[NAL.FIDU_NAME] = csvField(`${surname(r, r.chance(c.hispanic))} ${firstName(r, false)} TR`);
      row[NAL.FIDU_ADDR1] = row[NAL.OWN_ADDR1]!;
      row[NAL.FIDU_CITY] = row[NAL.OWN_CITY]!;
      row[NAL.FIDU_STATE] = row[NAL.OWN_STATE]!;
      row[NAL.FIDU_ZIPCD] = row[NAL.OWN_ZIPCD]!;
      row[NAL.FIDU_CD] = '1';
    }
    row[NAL.S_LEGAL] = csvField(
      use.condo
        ? `${s.name} CONDO UNIT ${unit} UNDIV ${(100 / SUBDIVISION).toFixed(2)}% INT IN COMMON ELEMENTS`
        : s.kind === 'rural' || plss.sub === 0
          ? `${r.pick(['N 1/2', 'S 1/2', 'E 1/2', 'W 1/2', 'NE 1/4', 'SW 1/4', 'NW 1/4 OF SE 1/4'])} OF SEC ${plss.sec} TWP ${twn} RGE ${rng}${r.chance(0.3) ? ', LESS R/W' : ''}`
          : r.chance(0.1)
            ? `LOT ${plss.lot}, BLOCK ${plss.block}, ${s.name}, ${s.plat}`
            : `${s.name} ${s.plat} LOT ${plss.lot} BLK ${plss.block}`,
    );
    row[NAL.MKT_AR] = s.mktAr;
    row[NAL.NBRHD_CD] = s.nbrhd;
    if (use.gov) row[NAL.PUBLIC_LND] = use.gov;
    row[NAL.TAX_AUTH_CD] = city === 'UNINCORPORATED' ? '9000' : pad((s.cityIdx + 1) * 100, 4);
    row[NAL.TWN] = twn;
    row[NAL.RNG] = rng;
    row[NAL.SEC] = pad2(plss.sec);
    row[NAL.CENSUS_BK] = s.census;
    row[NAL.PHY_ADDR1] = csvField(phy1);
    row[NAL.PHY_ADDR2] = csvField(phy2);
    row[NAL.PHY_CITY] = phyCity;
    row[NAL.PHY_ZIPCD] = phyCity ? zip : '';
    if (altKey) row[NAL.ALT_KEY] = String(1_000_000 + k);
    if (homestead && r.chance(0.04)) {
      // Save-Our-Homes portability from an earlier homestead
      const from = COUNTIES[r.int(0, COUNTIES.length - 1)]!;
      row[NAL.ASS_TRNSFR_FG] = 'Y';
      row[NAL.PREV_HMSTD_OWN] = '1';
      row[NAL.ASS_DIF_TRNS] = String(r.int(5, 500) * 100);
      row[NAL.CONO_PRV_HM] = String(from.coNo);
      row[NAL.YR_VAL_TRNSF] = String(r.int(2020, 2025));
    }
    // Exemption slot numbers are placeholders (the EXMPT_nn -> type mapping is in the user guide, florida.md 7.4).
    if (homestead) row[NAL.EXMPT_01] = String(hx);
    if (homestead && r.chance(0.08)) row[NAL.EXMPT_05] = '5000';
    if (taxExempt && jv > 0) row[NAL.EXMPT_80] = String(avNsd);
    row[NAL.SEQ_NO] = String(k + 1);
    row[NAL.RS_ID] = pad(mix32(k, c.coNo) % 10_000, 4);
    row[NAL.MP_ID] = pad(10_000_000 + k, 8);
    row[NAL.STATE_PAR_ID] = statePar;
    nal.line(row.join(','));

    // ---- SDF -----------------------------------------------------------------------------------------------
    for (const sale of sales) {
      sdf.line(
        csvLine([
          c.coNo,
          id,
          ROLL_YEAR,
          strata,
          s.grp,
          dor,
          s.nbrhd,
          s.mktAr,
          s.census,
          sale.id,
          '',
          sale.vi,
          sale.book,
          sale.page,
          sale.clerk,
          sale.qual,
          sale.yr,
          sale.mo,
          sale.price,
          sale.multi,
          row[NAL.RS_ID],
          row[NAL.MP_ID],
          statePar,
        ]),
      );
    }

    // ---- polygon: ~1% of parcels have none (confidential, not yet mapped), ~0.3% are two-part --------------
    if (!r.chance(0.01)) {
      polygons++;
      gis.line(
        `{"type":"Feature","properties":{"PARCELNO":${JSON.stringify(id)},"CO_NO":${c.coNo}},"geometry":${polygonsOut.geometry(k, r.chance(0.003))}}`,
      );
    }

    // ---- delinquencies: ~8% of taxable parcels per year, persistent from one year to the next --------------
    delinquentLastYear = false;
    if (tvNsd > 0 || (!taxExempt && jv > 0)) {
      for (const year of TAX_YEARS) {
        // Starts at the chain's stationary rate (0.05 / (1 - 0.45 + 0.05) = 8.3%) so every tax year is alike.
        const delinquent = r.chance(year === TAX_YEARS[0] ? 0.083 : delinquentLastYear ? 0.45 : 0.05);
        delinquentLastYear = delinquent;
        if (!delinquent) continue;
        const amount = Math.max(25, Math.round((tvNsd * millage + r.int(0, 600)) * 100) / 100);
        const newest = year === TAX_YEARS[TAX_YEARS.length - 1];
        let status: string = STATUS_LABELS[r.weighted(newest ? STATUS_NEWEST : STATUS_OLDER)]!;
        // Homesteads owing under $250 are not auctioned: struck to the county at 18% (s. 197.432(4)).
        if (homestead && amount < 250 && status === 'certificate_sold') status = 'struck';
        const certified = isCertified(status);
        const advertising = Math.round((1.5 + r.next() * 12) * 100) / 100;
        const face = Math.round((amount * 1.03 * 1.05 + advertising) * 100) / 100;
        let bid = 0;
        if (certified) {
          if (status === 'struck') bid = STRUCK_RATE;
          else {
            const b = r.next();
            bid = b < 0.45 ? 0.25 : b < 0.55 ? 0 : b < 0.8 ? r.int(2, 20) / 4 : b < 0.95 ? r.int(21, 72) / 4 : 18;
          }
        }
        const monthsSince = (ROLL_YEAR - year - 1) * 12 + 1;
        const total = certified
          ? face * (1 + (Math.max(bid, 5) / 100) * (monthsSince / 12)) + 6.25
          : amount * 1.03 + advertising;
        let certNo = '';
        if (certified) {
          const n = (certSeq.get(year) ?? 0) + 1;
          certSeq.set(year, n);
          certNo = certificateNumber(year, n);
        }
        const holder = !certified
          ? ''
          : status === 'struck'
            ? STRUCK_HOLDER
            : r.chance(0.85)
              ? CERTIFICATE_HOLDERS[r.zipf(CERTIFICATE_HOLDERS.length, 2)]!
              : r.chance(0.5)
                ? businessName(r)
                : `${surname(r, r.chance(c.hispanic))} ${firstName(r, false)}`;
        del.line(
          csvLine([
            c.slug,
            id,
            year,
            status,
            money(amount),
            money(total),
            certNo,
            certified ? certificateSaleDate(year, saleDay) : '',
            r.chance(0.9) ? owner.name : '',
            phy1 && r.chance(0.85) ? (phy2 ? `${phy1} ${phy2}` : phy1) : '',
            c.vendor,
            certified ? money(face) : '',
            holder,
            certified ? money(bid) : '',
            certified ? money(bid) : '',
          ]),
        );
      }
    }
  }
  await Promise.all(sinks.map((s) => s.close()));
  return {
    coNo: c.coNo,
    slug: c.slug,
    name: c.name,
    vendor: c.vendor,
    parcels: nal.rows,
    sales: sdf.rows,
    polygons,
    delinquencies: del.rows,
    files,
    bytes: { nal: nal.bytes, sdf: sdf.bytes, gis: gis.bytes, delinquencies: del.bytes },
  };
}
