// DOR land-use codes (florida.md 1.6) with the attributes the generator needs, and the per-subdivision mixes that
// pick them: residential streets, condo towers, platted vacant lots, rural land and commercial strips.
import { cumulative } from './prng.ts';

export interface Use {
  code: number;
  /** Typical just value in an average county (dollars). */
  base: number;
  vacant?: boolean;
  /** Government owner (taxable 0, PUBLIC_LND set). */
  gov?: 'C' | 'S' | 'F' | 'M' | 'B';
  /** Exempt private owner (churches, charities): taxable 0. */
  exempt?: boolean;
  condo?: boolean;
  /** Classified agricultural use (AV is the class-use value). */
  ag?: boolean;
  residential?: boolean;
  /** Living area range (sq ft) for improved parcels. */
  area?: [number, number];
}

const U = (code: number, base: number, extra: Omit<Use, 'code' | 'base'> = {}): Use => ({ code, base, ...extra });

export const USES: Record<string, Use> = {
  vacantRes: U(0, 85_000, { vacant: true, residential: true }),
  sfr: U(1, 380_000, { residential: true, area: [900, 4200] }),
  mobile: U(2, 140_000, { residential: true, area: [600, 1800] }),
  multi10: U(3, 4_500_000, { residential: true, area: [8000, 120000] }),
  condo: U(4, 300_000, { residential: true, condo: true, area: [550, 2600] }),
  coop: U(5, 210_000, { residential: true, condo: true, area: [500, 1600] }),
  multiSmall: U(8, 620_000, { residential: true, area: [1600, 7000] }),
  common: U(9, 0, { residential: true, vacant: true }),
  vacantCom: U(10, 420_000, { vacant: true }),
  store: U(11, 1_100_000, { area: [1500, 20000] }),
  mixed: U(12, 950_000, { area: [2000, 12000] }),
  shopping: U(16, 6_500_000, { area: [20000, 150000] }),
  office1: U(17, 1_400_000, { area: [2000, 15000] }),
  officeMulti: U(18, 5_200_000, { area: [10000, 200000] }),
  professional: U(19, 1_100_000, { area: [1500, 12000] }),
  restaurant: U(21, 950_000, { area: [2000, 8000] }),
  driveIn: U(22, 1_200_000, { area: [1800, 4500] }),
  bank: U(23, 1_800_000, { area: [2500, 9000] }),
  service: U(26, 1_300_000, { area: [1200, 5000] }),
  auto: U(27, 1_000_000, { area: [2000, 20000] }),
  parking: U(28, 600_000, { vacant: true }),
  hotel: U(39, 8_000_000, { area: [20000, 250000] }),
  vacantInd: U(40, 500_000, { vacant: true }),
  lightMfg: U(41, 1_700_000, { area: [5000, 60000] }),
  warehouse: U(48, 2_400_000, { area: [8000, 150000] }),
  openStorage: U(49, 700_000, { area: [500, 5000] }),
  improvedAg: U(50, 450_000, { ag: true, area: [1000, 3500] }),
  cropland: U(51, 260_000, { ag: true, vacant: true }),
  timber: U(55, 300_000, { ag: true, vacant: true }),
  grazing: U(61, 380_000, { ag: true, vacant: true }),
  groves: U(66, 420_000, { ag: true, vacant: true }),
  poultry: U(67, 350_000, { ag: true, area: [2000, 20000] }),
  ornamentals: U(69, 300_000, { ag: true, vacant: true }),
  church: U(71, 1_300_000, { exempt: true, area: [3000, 30000] }),
  privateSchool: U(72, 3_000_000, { exempt: true, area: [10000, 80000] }),
  charity: U(75, 900_000, { exempt: true, area: [2000, 20000] }),
  cemetery: U(76, 400_000, { exempt: true, vacant: true }),
  club: U(77, 700_000, { area: [2000, 12000] }),
  vacantGov: U(80, 300_000, { vacant: true, gov: 'C' }),
  parks: U(82, 900_000, { vacant: true, gov: 'S' }),
  schools: U(83, 12_000_000, { gov: 'B', area: [40000, 250000] }),
  county: U(86, 800_000, { gov: 'C', area: [1000, 50000] }),
  state: U(87, 700_000, { gov: 'S', area: [1000, 40000] }),
  federal: U(88, 1_500_000, { gov: 'F', area: [2000, 80000] }),
  municipal: U(89, 650_000, { gov: 'M', area: [1000, 40000] }),
  utility: U(91, 500_000, { vacant: true }),
  row: U(94, 0, { vacant: true, gov: 'C' }),
  submerged: U(95, 50_000, { vacant: true, gov: 'S' }),
  swamp: U(96, 60_000, { vacant: true }),
  acreage: U(99, 180_000, { vacant: true }),
};

export type Kind = 'residential' | 'condo' | 'vacant' | 'rural' | 'commercial';

type Mix = [keyof typeof USES, number][];
const MIXES: Record<Kind, Mix> = {
  residential: [
    ['sfr', 87],
    ['vacantRes', 4],
    ['mobile', 1.5],
    ['multiSmall', 3],
    ['multi10', 0.3],
    ['common', 0.6],
    ['church', 0.6],
    ['charity', 0.2],
    ['county', 0.5],
    ['municipal', 0.5],
    ['schools', 0.15],
    ['row', 0.3],
    ['utility', 0.2],
    ['club', 0.2],
    ['cemetery', 0.05],
  ],
  condo: [
    ['condo', 93],
    ['coop', 3],
    ['common', 1.5],
    ['multi10', 1],
    ['sfr', 1.5],
  ],
  vacant: [
    ['vacantRes', 84],
    ['sfr', 12],
    ['acreage', 2],
    ['county', 1],
    ['swamp', 1],
  ],
  rural: [
    ['sfr', 26],
    ['mobile', 15],
    ['vacantRes', 10],
    ['acreage', 9],
    ['cropland', 6],
    ['timber', 8],
    ['grazing', 11],
    ['groves', 3],
    ['poultry', 1.5],
    ['ornamentals', 1.5],
    ['improvedAg', 4],
    ['parks', 1],
    ['state', 0.6],
    ['federal', 0.3],
    ['submerged', 0.6],
    ['swamp', 1],
    ['church', 0.8],
    ['cemetery', 0.3],
    ['utility', 0.4],
  ],
  commercial: [
    ['vacantCom', 10],
    ['store', 14],
    ['mixed', 5],
    ['shopping', 3],
    ['office1', 10],
    ['officeMulti', 3],
    ['professional', 6],
    ['restaurant', 6],
    ['driveIn', 3],
    ['bank', 2.5],
    ['service', 4],
    ['auto', 6],
    ['parking', 3],
    ['hotel', 2],
    ['vacantInd', 3],
    ['lightMfg', 4],
    ['warehouse', 7],
    ['openStorage', 2],
    ['church', 2.5],
    ['privateSchool', 0.8],
    ['municipal', 1.5],
    ['county', 1],
    ['federal', 0.3],
    ['schools', 0.4],
    ['multi10', 2],
  ],
};

export const MIX_TABLES = Object.fromEntries(
  Object.entries(MIXES).map(([kind, mix]) => [
    kind,
    { uses: mix.map(([name]) => USES[name]!), cum: cumulative(mix.map(([, w]) => w)) },
  ]),
) as Record<Kind, { uses: Use[]; cum: Float64Array }>;

/** FDOR's 3-character DOR_UC rendering ('001'). */
export const dorUc = (code: number) => String(code).padStart(3, '0');
