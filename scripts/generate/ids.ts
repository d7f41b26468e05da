// Parcel ids in each county's real shape (florida.md 5). For the statewide state, parcel index k is decomposed into a
// PLSS section region (2,000 parcels), a subdivision (100 parcels, one polygon tile) and a lot, and those parts are
// rendered the way the county writes its PARCEL_ID; every part comes from k by mixed radix, so ids are unique within a
// county. Also the forms the fixture profiles share: the dashed display form and the state parcel id.
import type { CountyDef } from './counties.ts';
import { pad as p } from './format.ts';
import { mix32 } from './prng.ts';

export const REGION = 2000;
export const SUBDIVISION = 100;

export interface Plss {
  /** Section region and subdivision within it (0 = unplatted acreage). */
  region: number;
  sub: number;
  /** 1-based lot and block numbers inside the subdivision. */
  lot: number;
  block: number;
  sec: number;
  twp: number;
  rng: number;
}

export function plssOf(c: CountyDef, k: number): Plss {
  const region = Math.floor(k / REGION);
  const j = k % REGION;
  const w = j % SUBDIVISION;
  const q = Math.floor(region / 36);
  return {
    region,
    sub: Math.floor(j / SUBDIVISION),
    lot: w + 1,
    block: Math.floor(w / 20) + 1,
    sec: (region % 36) + 1,
    twp: c.twp + Math.floor(q / 4),
    rng: c.rng + (q % 4),
  };
}

const LETTERS = 'ABCDEFGHJKLMNPRSTUVWXYZ';

const MIAMI_MUNIS = ['30', '30', '30', '30', '30', '01', '01', '01', '04', '04', '02', '03', '35', '10', '08', '07'];
const PALM_BEACH_MUNIS = ['00', '00', '00', '00', '74', '74', '06', '06', '30', '12', '08', '73', '56', '42'];

/**
 * The PARCEL_ID of parcel k. `lettered` marks a condo/co-op subdivision, which Broward, Seminole and Lee code with
 * letters (Broward `494213BA0140`): ids with letters exercise the punctuation-only normalization.
 */
export function parcelId(c: CountyDef, k: number, lettered: boolean): string {
  const x = plssOf(c, k);
  const { sec, twp, rng, sub, lot, block, region } = x;
  switch (c.idStyle) {
    case 'miami-dade': {
      // 2-4-3-4: municipality / township digit, range digit, section / subdivision (000 unplatted) / parcel.
      if (twp - c.twp >= 10) throw new Error('Miami-Dade folio space exhausted (more than 2.88M parcels)');
      const muni = MIAMI_MUNIS[mix32(region, 23) % MIAMI_MUNIS.length]!;
      return `${muni}${twp % 10}${rng % 10}${p(sec, 2)}${sub === 0 ? '000' : p(sub * 37, 3)}${p(lot * 10, 4)}`;
    }
    case 'broward': {
      // twp rng sec / subdivision (00 unplatted, 01.. plats, AA.. condos) / 4-digit parcel: 12 characters.
      const code = sub === 0 ? '00' : lettered ? `${LETTERS[sub]}${LETTERS[mix32(region, sub) % 23]}` : p(sub, 2);
      return `${p(twp, 2)}${p(rng, 2)}${p(sec, 2)}${code}${p(lot * 10, 4)}`;
    }
    case 'palm-beach': {
      const muni = PALM_BEACH_MUNIS[mix32(region, 60) % PALM_BEACH_MUNIS.length]!;
      return `${muni}${p(rng, 2)}${p(twp, 2)}${p(sec, 2)}${p(sub, 2)}${p(block - 1, 3)}${p(lot * 10, 4)}`;
    }
    case 'hillsborough':
      // 10-digit folio; units step by 2 as in Hillsborough condos.
      return `${p(1000 + region * 20 + sub, 6)}${p(lot * 2, 4)}`;
    case 'orange': {
      const subCode = sub === 0 ? 0 : 1000 + ((sub * 431) % 9000);
      return `${p(rng, 2)}${p(twp, 2)}${p(sec, 2)}${p(subCode, 4)}${p(block, 2)}${p(lot * 5, 3)}`;
    }
    case 'pinellas': {
      const subCode = sub === 0 ? 0 : 10000 + ((sub * 3307) % 90000);
      return `${p(sec, 2)}${p(twp, 2)}${p(rng, 2)}${p(subCode, 5)}${p(block, 3)}${p(lot * 10, 4)}`;
    }
    case 'polk': {
      const subCode = sub === 0 ? 0 : 100000 + ((sub * 4271) % 900000);
      return `${p(rng, 2)}${p(twp, 2)}${p(sec, 2)}${p(subCode, 6)}${p(block, 3)}${p(lot * 5, 3)}`;
    }
    case 'seminole': {
      const blk = lettered ? `0${LETTERS[block]}00` : p(block, 4);
      return `${p(sec, 2)}${p(twp, 2)}${p(rng, 2)}${sub === 0 ? '000' : p(500 + sub * 23, 3)}${blk}${p(lot * 10, 4)}`;
    }
    case 'lee': {
      // STRAP sec-twp-rng-area-block.lot, stored without punctuation: `164425C1000230010`.
      const area = sub === 0 ? '00' : lettered ? `C${1 + (mix32(region, sub) % 4)}` : `${LETTERS[sub]}${sub % 10}`;
      return `${p(sec, 2)}${p(twp, 2)}${p(rng, 2)}${area}${p(block + sub * 10, 5)}${p(lot * 10, 4)}`;
    }
    case 'collier':
      return `${p(3000 + region * 20 + sub, 6)}${p(lot * 100, 5)}`;
    case 'account10':
      return `${p(100 + region, 4)}${p(sub, 2)}${p(lot * 10, 4)}`;
    case 'strap':
      // 19-digit STRAP; some counties order township-range-section, others section-township-range.
      return c.coNo % 2 === 0
        ? `${p(twp, 2)}${p(rng, 2)}${p(sec, 2)}${p(sub * 10, 4)}${p(block * 100, 5)}${p(lot * 10, 4)}`
        : `${p(sec, 2)}${p(twp, 2)}${p(rng, 2)}${p(sub * 10, 4)}${p(block * 100, 5)}${p(lot * 10, 4)}`;
    case 'dashed':
      return dashedParcelId(sec, twp, c.twpDir, rng, sub * 100, block * 10, lot * 10);
  }
}

/** The display form with dashes small counties often submit: `01-1S-07-0000-0010-0000` (sec-twp-rng-a-b-c). */
export const dashedParcelId = (
  sec: number,
  twp: number,
  twpDir: string,
  rng: number,
  a: number,
  b: number,
  c: number,
) => `${p(sec, 2)}-${twp}${twpDir}-${p(rng, 2)}-${p(a, 4)}-${p(b, 4)}-${p(c, 4)}`;

/** FDOR's STATE_PAR_ID shape: `C23-000-012-3456-0`. */
export const stateParcelId = (coNo: number, a: number, b: number, c: number, d: number) =>
  `C${coNo}-${p(a, 3)}-${p(b, 3)}-${p(c, 4)}-${d}`;
