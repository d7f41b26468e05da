// Earlier roll years (`make data YEARS=n`, docs/generator.md#roll-years): each county's older NAL files derived
// backwards from the roll the state profile wrote, one year at a time, deterministic from the seed. Year y from
// year y + 1: values a few percent lower (now and then a reassessment jump or a drop), the owner before any sale
// dated after January 1 of y (the SDF holds those sales), those sales not yet on the roll, buildings built in y or
// later not yet there (vacant land: another use code), about 1% of parcels not yet split off (their parent parcel,
// id + "R", is on the roll instead and gone later).
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCsv } from '../../src/importers/csv.ts';
import { NAL } from './columns.ts';
import type { CountyDef } from './counties.ts';
import { csvLine } from './format.ts';
import { firstName, surname } from './names.ts';
import { hash32, mix32, Rng } from './prng.ts';

export interface OlderRoll {
  year: number;
  file: string;
  parcels: number;
  bytes: number;
}

export const olderNalFile = (c: CountyDef, year: number) => join('NAL', `NAL${c.coNo}F${year}01.csv`);

/** The columns that scale with the market: every just, assessed and taxable value and the land value. */
const VALUE_COLUMNS = Object.entries(NAL)
  .filter(([name]) => /^(JV|AV|TV)(_|$)/.test(name) && name !== 'JV_CHNG' && name !== 'JV_CHNG_CD')
  .map(([, i]) => i)
  .concat(NAL.LND_VAL);
/** The two sale slots: year column, and the nine columns a slot spans (MULTI_PAR_SALn .. SAL_CHNG_CDn). */
const SLOTS = [1, 2].map((n) => ({
  year: NAL[`SALE_YR${n}` as keyof typeof NAL],
  from: NAL[`MULTI_PAR_SAL${n}` as keyof typeof NAL],
  to: NAL[`SAL_CHNG_CD${n}` as keyof typeof NAL],
}));

/** One parcel's row of year `year`, from its row of the year after. */
function earlier(row: string[], year: number, seed: number): string[] {
  const out = [...row];
  const h = mix32(seed, hash32(row[NAL.PARCEL_ID]!));
  const pick = mix32(h, year);
  const r = new Rng(pick);
  // market drift: 2-9% a year; 3% of parcels jumped 25% (improvements, reassessment), 1% fell 15%
  const bucket = pick % 100;
  const growth = bucket < 3 ? 1.25 : bucket < 4 ? 0.85 : 1 + (2 + (mix32(pick, 7) % 700) / 100) / 100;
  for (const i of VALUE_COLUMNS) if (/^\d+$/.test(out[i]!)) out[i] = String(Math.round(Number(out[i]) / growth));
  const built = Number(out[NAL.ACT_YR_BLT] || 0);
  if (built >= year) {
    // not built yet: vacant land of the same group
    out[NAL.DOR_UC] = out[NAL.DOR_UC]!.startsWith('0') ? '000' : '010';
    for (const i of [NAL.ACT_YR_BLT, NAL.EFF_YR_BLT, NAL.TOT_LVG_AREA]) out[i] = '';
    out[NAL.NO_BULDNG] = '0';
    out[NAL.NO_RES_UNTS] = '0';
    out[NAL.JV] = out[NAL.LND_VAL] || out[NAL.JV]!;
    for (const i of [NAL.AV_SD, NAL.AV_NSD, NAL.TV_SD, NAL.TV_NSD])
      if (/^\d+$/.test(out[i]!)) out[i] = String(Math.min(Number(out[i]), Number(out[NAL.JV])));
  }
  let sold = false;
  for (const s of SLOTS) {
    if (Number(out[s.year] || 0) < year) continue;
    sold = true;
    for (let i = s.from; i <= s.to; i++) out[i] = '';
  }
  if (sold) {
    const hispanic = r.chance(0.3);
    out[NAL.OWN_NAME] = r.chance(0.15)
      ? `${surname(r, hispanic)} ${firstName(r, hispanic)} TR`
      : `${surname(r, hispanic)} ${firstName(r, hispanic)}`;
  }
  out[NAL.ASMNT_YR] = String(year);
  return out;
}

/**
 * Writes `years - 1` older rolls of one county next to its newest (`newestYear`, file `nalFile` under `out`) and
 * returns them, newest first.
 */
export function writeOlderRolls(
  c: CountyDef,
  nalFile: string,
  newestYear: number,
  years: number,
  seed: string,
  out: string,
): OlderRoll[] {
  const text = readFileSync(join(out, nalFile), 'utf8');
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const [header, ...lines] = text.split(eol).filter((l) => l !== '');
  const seedNumber = hash32(`years:${seed}`);
  let rows = lines.map((l) => parseCsv(l)!);
  const rolls: OlderRoll[] = [];
  for (let year = newestYear - 1; year > newestYear - years; year--) {
    const next: string[][] = [];
    for (const row of rows) {
      const split = mix32(seedNumber, hash32(`${row[NAL.PARCEL_ID]}:${year}`)) % 100 === 0;
      // a parcel split off in year + 1: its parent (same land, the whole value) is on this roll instead
      const parcel = split
        ? [...row.slice(0, NAL.PARCEL_ID), `${row[NAL.PARCEL_ID]}R`, ...row.slice(NAL.PARCEL_ID + 1)]
        : row;
      next.push(earlier(parcel, year, seedNumber));
    }
    rows = next;
    const file = olderNalFile(c, year);
    writeFileSync(join(out, file), [header, ...rows.map((f) => csvLine(f))].join(eol) + eol);
    rolls.push({ year, file, parcels: rows.length, bytes: statSync(join(out, file)).size });
  }
  return rolls;
}
