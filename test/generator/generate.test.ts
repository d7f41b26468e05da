// The generator's statewide `state` profile run as a function at a small scale: file layouts, per-county
// consistency between NAL, SDF, polygons and delinquencies, determinism, proportions and name distributions.
// No database.
import t from 'tap';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DELINQUENCY_COLUMNS, NAL_COLUMNS, SDF_COLUMNS } from '../../scripts/generate/columns.ts';
import { COUNTIES, generatorCounts } from '../../scripts/generate/counties.ts';
import { generateState, type GenerateSummary } from '../../scripts/generate/profiles/state.ts';
import { assertBlocks, FLORIDA_BBOX, planBlock } from '../../scripts/generate/geometry.ts';
import { parcelId } from '../../scripts/generate/ids.ts';

const PARCELS = 2000;
const root = mkdtempSync(join(tmpdir(), 'generator-'));
t.teardown(() => rmSync(root, { recursive: true, force: true }));
const quiet = () => {};
const run = (name: string, seed: number, jobs = 1) =>
  generateState({ parcels: PARCELS, seed, out: join(root, name), jobs, log: quiet });

const a = await run('a', 1);
const b = await run('b', 1, 2);
const c = await run('c', 2);

/** RFC 4180 line splitting (the generator quotes fields that contain commas or quotes). */
function fields(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cur += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}
function csv(path: string): { header: string[]; rows: Record<string, string>[] } {
  const lines = readFileSync(path, 'utf8').split('\n');
  if (lines.pop() !== '') throw new Error(`${path} does not end with a newline`);
  const header = fields(lines[0]!);
  const rows = lines.slice(1).map((line) => {
    const f = fields(line);
    if (f.length !== header.length) throw new Error(`${path}: ${f.length} fields, expected ${header.length}: ${line}`);
    return Object.fromEntries(header.map((h, i) => [h, f[i]!]));
  });
  return { header, rows };
}
const dirOf = (s: GenerateSummary) => join(root, s === a ? 'a' : s === b ? 'b' : 'c');
const nal = new Map<number, Record<string, string>[]>();
for (const county of a.counties) nal.set(county.coNo, csv(join(dirOf(a), county.files.nal)).rows);

t.test('the NAL layout is florida.md 1.3: 165 columns in order', async (t) => {
  t.equal(NAL_COLUMNS.length, 165);
  t.equal(new Set(NAL_COLUMNS).size, 165, 'no duplicate names');
  // positions florida.md says two independent repos agree on (1-based)
  const at = (name: string) => NAL_COLUMNS.indexOf(name as (typeof NAL_COLUMNS)[number]) + 1;
  t.same(
    [at('CO_NO'), at('DOR_UC'), at('JV'), at('LND_VAL'), at('EFF_YR_BLT'), at('ACT_YR_BLT'), at('OWN_NAME')],
    [1, 8, 11, 41, 48, 49, 74],
  );
  t.same(
    [at('S_LEGAL'), at('PHY_ADDR1'), at('ALT_KEY'), at('EXMPT_01'), at('EXMPT_46'), at('EXMPT_80'), at('SEQ_NO')],
    [88, 99, 103, 110, 155, 156, 159],
  );
  t.same([at('STATE_PAR_ID'), at('SPC_CIR_TXT')], [162, 165]);
  t.equal(SDF_COLUMNS.length, 23);
  // When the shared guide is present, compare with its column list verbatim.
  const guide = '/work/shared/guide/florida.md';
  if (existsSync(guide)) {
    const text = readFileSync(guide, 'utf8');
    const block = text.slice(text.indexOf('### 1.3'), text.indexOf('### 1.4'));
    const listed = [
      ...block
        .slice(block.indexOf('```'), block.indexOf('```', block.indexOf('```') + 3))
        .matchAll(/\b\d+(?:\.\.\d+)?\s+([A-Z][A-Z0-9_]+)/g),
    ].map((m) => m[1]!);
    const expanded = listed.flatMap((n) =>
      n === 'EXMPT_01' ? Array.from({ length: 46 }, (_, i) => `EXMPT_${String(i + 1).padStart(2, '0')}`) : [n],
    );
    t.same([...NAL_COLUMNS], expanded, 'the guide lists the same header');
  }
});

t.test('every county has its four files and the headers are exact', async (t) => {
  t.equal(a.counties.length, 67);
  t.same(
    a.counties.map((c) => c.coNo),
    Array.from({ length: 67 }, (_, i) => 11 + i),
  );
  for (const county of a.counties) {
    const dir = dirOf(a);
    t.equal(county.files.nal, join('NAL', `NAL${county.coNo}P202601.csv`));
    t.equal(county.files.sdf, join('SDF', `SDF${county.coNo}P202601.csv`));
    for (const file of Object.values(county.files)) t.ok(existsSync(join(dir, file)), file);
    const firstLine = (f: string) => readFileSync(join(dir, f), 'utf8').split('\n', 1)[0];
    t.equal(firstLine(county.files.nal), NAL_COLUMNS.join(','));
    t.equal(firstLine(county.files.sdf), SDF_COLUMNS.join(','));
    t.equal(firstLine(county.files.delinquencies), DELINQUENCY_COLUMNS.join(','));
    t.ok(county.parcels >= 5, `${county.slug} has a few parcels`);
  }
  t.equal(readdirSync(join(dirOf(a), 'NAL')).length, 67);
  const manifest = JSON.parse(readFileSync(join(dirOf(a), 'manifest.json'), 'utf8')) as GenerateSummary;
  t.equal(manifest.counties.length, 67);
  t.equal(manifest.totals.parcels, PARCELS);
});

t.test('NAL rows: CO_NO, unique real-format ids, codes, values, empties', async (t) => {
  for (const county of COUNTIES) {
    const rows = nal.get(county.coNo)!;
    t.ok(
      rows.every((r) => r.CO_NO === String(county.coNo)),
      `${county.slug}: CO_NO in every row`,
    );
    t.equal(new Set(rows.map((r) => r.PARCEL_ID)).size, rows.length, `${county.slug}: parcel ids unique`);
    const bad = rows.filter((r) => {
      const jv = Number(r.JV);
      const av = Number(r.AV_SD);
      const avn = Number(r.AV_NSD);
      const tv = Number(r.TV_SD);
      const tvn = Number(r.TV_NSD);
      const dor = Number(r.DOR_UC);
      const exempt = dor === 71 || (dor >= 80 && dor <= 89);
      return (
        !/^\d{3}$/.test(r.DOR_UC!) ||
        r.ASMNT_YR !== '2026' ||
        r.FILE_T !== 'R' ||
        !(jv >= av && av >= tv && jv >= avn && avn >= tvn) ||
        (exempt && (tv !== 0 || tvn !== 0)) ||
        (r.TOT_LVG_AREA === '' && r.ACT_YR_BLT !== '' && dor >= 1 && dor <= 8) ||
        (r.SALE_YR1 !== '' && !(Number(r.SALE_MO1) >= 1 && Number(r.SALE_MO1) <= 12)) ||
        (r.SALE_YR2 !== '' && r.SALE_YR1 === '')
      );
    });
    t.same(bad.slice(0, 1), [], `${county.slug}: codes and values are consistent`);
  }
  const all = [...nal.values()].flat();
  const vacant = all.filter((r) => r.DOR_UC === '000');
  t.ok(vacant.length > 20);
  t.ok(
    vacant.every((r) => r.ACT_YR_BLT === '' && r.TOT_LVG_AREA === '' && r.EFF_YR_BLT === ''),
    'vacant land has no year built or living area',
  );
  t.ok(
    all.some((r) => r.PHY_ADDR1 === ''),
    'some parcels have no site address',
  );
  const md = nal.get(23)!;
  t.ok(
    md.every((r) => /^\d{13}$/.test(r.PARCEL_ID!)),
    'Miami-Dade folios are 13 digits',
  );
  t.ok(
    nal.get(16)!.every((r) => /^[0-9A-Z]{12}$/.test(r.PARCEL_ID!)),
    'Broward ids are 12 characters',
  );
  const broward = COUNTIES.find((x) => x.coNo === 16)!;
  t.match(parcelId(broward, 150, true), /^\d{6}[A-Z]{2}\d{4}$/, 'Broward condo subdivisions carry letters');
  t.ok(
    nal.get(60)!.every((r) => /^\d{17}$/.test(r.PARCEL_ID!)),
    'Palm Beach ids are 17 digits',
  );
  t.ok(
    nal.get(49)!.every((r) => /^\d{2}-\d+S-\d{2}-\d{4}-\d{4}-\d{4}$/.test(r.PARCEL_ID!)),
    'Liberty ids keep their dashes',
  );
  const owners = all.map((r) => r.OWN_NAME!);
  for (const [label, re] of [
    ['couples', / & /],
    ['LLCs', / LLC$/],
    ['trusts', /TRUST| TR$/],
    ['estates', /^EST OF | EST$/],
    ['governments', /COUNTY|STATE OF FLORIDA|CITY OF/],
  ] as const) {
    t.ok(
      owners.some((o) => re.test(o)),
      `owners include ${label}`,
    );
  }
  const repeated = new Map<string, number>();
  for (const o of owners) repeated.set(o, (repeated.get(o) ?? 0) + 1);
  t.ok(
    [...repeated.entries()].some(([o, n]) => n >= 3 && / (LLC|LP|INC)$/.test(o)),
    'some owners hold portfolios',
  );
});

t.test('same seed gives byte-identical files (with or without worker processes); another seed differs', async (t) => {
  for (const county of a.counties) {
    for (const file of Object.values(county.files)) {
      const x = readFileSync(join(dirOf(a), file));
      t.ok(x.equals(readFileSync(join(dirOf(b), file))), `${file} identical`);
    }
  }
  t.ok(
    readFileSync(join(dirOf(a), 'manifest.json')).equals(readFileSync(join(dirOf(b), 'manifest.json'))),
    'manifest identical',
  );
  const differs = a.counties.filter(
    (county) => !readFileSync(join(dirOf(a), county.files.nal)).equals(readFileSync(join(dirOf(c), county.files.nal))),
  );
  t.equal(differs.length, 67, 'seed 2 changes every county');
});

t.test('county sizes follow the real proportions and sum to PARCELS', async (t) => {
  const counts = generatorCounts(10_800_000);
  t.equal(
    [...counts.values()].reduce((x, y) => x + y, 0),
    10_800_000,
  );
  t.ok(counts.get(23)! > 850_000 && counts.get(23)! < 1_050_000, 'Miami-Dade about 0.9M+');
  t.ok(counts.get(60)! > 500_000, 'Palm Beach more than half a million');
  t.ok(Math.abs(counts.get(39)! - 530_000) < 40_000, 'Hillsborough about 530k');
  const sizes = new Map(a.counties.map((x) => [x.coNo, x.parcels]));
  const largest = [...sizes.entries()].sort((x, y) => y[1] - x[1]).map(([co]) => co);
  t.same(largest.slice(0, 3), [23, 16, 60], 'Miami-Dade, Broward, Palm Beach are the largest');
  for (const [co, n] of sizes) t.ok(Math.abs(n - generatorCounts(PARCELS).get(co)!) === 0, `county ${co}`);
  // Full-scale polygon blocks are checked too (the generator asserts them at every scale).
  t.doesNotThrow(() => assertBlocks(COUNTIES.map((x) => planBlock(x, counts.get(x.coNo)!))));
});

t.test('surnames are heavy-tailed, and Hispanic surnames are heavy in Miami-Dade', async (t) => {
  // Individual owners are written SURNAME FIRST; take the first word of two- or three-word names.
  const surnames = new Map<string, number>();
  const all = [...nal.values()].flat();
  for (const r of all) {
    const o = r.OWN_NAME!;
    if (/LLC|INC|LP|TRUST|COUNTY|CITY|STATE|BOARD|CHURCH|EST|FOUNDATION|USA|UNITED|&/.test(o)) continue;
    const first = o.split(' ')[0]!;
    surnames.set(first, (surnames.get(first) ?? 0) + 1);
  }
  const counts = [...surnames.values()].sort((x, y) => y - x);
  const median = counts[Math.floor(counts.length / 2)]!;
  t.ok(counts[0]! >= 8 * median, `top surname ${counts[0]} vs median ${median}`);
  t.ok(counts.length > 300, 'a long tail of distinct names');
  const hispanic = /^(GARCIA|RODRIGUEZ|GONZALEZ|HERNANDEZ|LOPEZ|MARTINEZ|PEREZ|SANCHEZ|DIAZ|FERNANDEZ) /;
  const share = (rows: Record<string, string>[]) => rows.filter((r) => hispanic.test(r.OWN_NAME!)).length / rows.length;
  const md = share(nal.get(23)!);
  const rest = share(all.filter((r) => r.CO_NO !== '23' && r.CO_NO !== '16'));
  t.ok(md > 2 * rest, `Miami-Dade ${md.toFixed(3)} vs elsewhere ${rest.toFixed(3)}`);
});

interface Feature {
  type: string;
  properties: { PARCELNO: string; CO_NO: number };
  geometry: { type: 'Polygon' | 'MultiPolygon'; coordinates: number[][][] | number[][][][] };
}
const bboxOf = (f: Feature): [number, number, number, number] => {
  const pts = (f.geometry.type === 'Polygon' ? [f.geometry.coordinates] : f.geometry.coordinates).flat(3) as number[];
  const xs = pts.filter((_, i) => i % 2 === 0);
  const ys = pts.filter((_, i) => i % 2 === 1);
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
};

t.test('polygons: one feature per line, known parcels, inside Florida, no overlaps', async (t) => {
  let multi = 0;
  let missing = 0;
  const countyBoxes: [number, number, number, number][] = [];
  for (const county of a.counties) {
    const ids = new Set(nal.get(county.coNo)!.map((r) => r.PARCEL_ID));
    const lines = readFileSync(join(dirOf(a), county.files.gis), 'utf8')
      .trimEnd()
      .split('\n');
    const features = lines.map((l) => JSON.parse(l) as Feature);
    missing += ids.size - features.length;
    t.ok(
      features.every(
        (f) => f.type === 'Feature' && f.properties.CO_NO === county.coNo && ids.has(f.properties.PARCELNO),
      ),
      `${county.slug}: every PARCELNO is a NAL parcel of the county`,
    );
    t.ok(
      lines.every((l) => !/\d\.\d{8}/.test(l)),
      `${county.slug}: 7 decimals at most`,
    );
    multi += features.filter((f) => f.geometry.type === 'MultiPolygon').length;
    const boxes = features.map(bboxOf);
    const [minX, minY, maxX, maxY] = FLORIDA_BBOX;
    t.ok(
      boxes.every(([x0, y0, x1, y1]) => x0 >= minX && y0 >= minY && x1 <= maxX && y1 <= maxY),
      `${county.slug}: inside Florida's bounding box`,
    );
    // Neighbours may share edges but never overlap: a sample against every other lot of the county.
    const overlapping = boxes
      .slice(0, 40)
      .flatMap((p, i) => boxes.filter((q, j) => j !== i && p[0] < q[2] && q[0] < p[2] && p[1] < q[3] && q[1] < p[3]));
    t.same(overlapping, [], `${county.slug}: no overlaps`);
    const touching = boxes.slice(1).filter((q) => q[0] === boxes[0]![2] || q[2] === boxes[0]![0]);
    if (boxes.length >= 10) t.ok(touching.length > 0, `${county.slug}: neighbours share edges exactly`);
    countyBoxes.push([
      Math.min(...boxes.map((x) => x[0])),
      Math.min(...boxes.map((x) => x[1])),
      Math.max(...boxes.map((x) => x[2])),
      Math.max(...boxes.map((x) => x[3])),
    ]);
  }
  t.ok(multi > 0, `a few multipolygons (${multi})`);
  t.ok(missing > 0 && missing < PARCELS * 0.05, `about 1% of parcels without a polygon (${missing})`);
  const clash = countyBoxes.some((p, i) =>
    countyBoxes.some((q, j) => j !== i && p[0] < q[2] && q[0] < p[2] && p[1] < q[3] && q[1] < p[3]),
  );
  t.notOk(clash, 'no two counties overlap');
});

const QUAL_CODES = new Set(
  '01 02 03 04 05 06 11 12 13 14 16 17 18 19 20 21 30 31 32 33 34 35 36 37 38 39 40 41 42 43 98 99'.split(' '),
);

t.test('SDF: sales of known parcels, month precision, the newest sale is the NAL slot 1', async (t) => {
  let total = 0;
  for (const county of a.counties) {
    const parcels = new Map(nal.get(county.coNo)!.map((r) => [r.PARCEL_ID!, r]));
    const { rows } = csv(join(dirOf(a), county.files.sdf));
    total += rows.length;
    const newest = new Map<string, Record<string, string>>();
    const key = (r: Record<string, string>) => Number(r.SALE_YR) * 12 + Number(r.SALE_MO);
    const bad = rows.filter(
      (r) =>
        r.CO_NO !== String(county.coNo) ||
        !parcels.has(r.PARCEL_ID!) ||
        !QUAL_CODES.has(r.QUAL_CD!) ||
        !/^(19|20)\d\d$/.test(r.SALE_YR!) ||
        !(Number(r.SALE_MO) >= 1 && Number(r.SALE_MO) <= 12) ||
        !/^[VI]$/.test(r.VI_CD!) ||
        r.OR_BOOK === '' ||
        r.CLERK_NO === '',
    );
    t.same(bad.slice(0, 1), [], `${county.slug}: SDF rows are well-formed`);
    t.equal(new Set(rows.map((r) => r.SALE_ID_CD)).size, rows.length, `${county.slug}: sale ids unique`);
    for (const r of rows) {
      const seen = newest.get(r.PARCEL_ID!);
      if (!seen || key(r) > key(seen)) newest.set(r.PARCEL_ID!, r);
    }
    const mismatched = [...parcels.values()].filter((p) => {
      const s = newest.get(p.PARCEL_ID!);
      if (!s) return p.SALE_YR1 !== '';
      return (
        p.SALE_YR1 !== s.SALE_YR ||
        p.SALE_MO1 !== s.SALE_MO ||
        p.SALE_PRC1 !== s.SALE_PRC ||
        p.QUAL_CD1 !== s.QUAL_CD ||
        p.OR_BOOK1 !== s.OR_BOOK ||
        p.OR_PAGE1 !== s.OR_PAGE ||
        p.CLERK_NO1 !== s.CLERK_NO
      );
    });
    t.same(mismatched.slice(0, 1), [], `${county.slug}: slot 1 = newest SDF sale`);
  }
  const ratio = total / PARCELS;
  t.ok(ratio > 0.3 && ratio < 0.8, `about half a sale per parcel (${ratio.toFixed(2)})`);
});

t.test(
  'delinquencies: standard format, known parcels, valid statuses, certificates only where they exist',
  async (t) => {
    const migration = readFileSync(
      new URL('../../migrations/1763800000001_counties-reference.sql', import.meta.url),
      'utf8',
    );
    const vendors = new Map(
      [...migration.matchAll(/\(\d+, (\d+), '[^']+', '([a-z-]+)',.*?'([^']+)', '2026/g)].map((m) => [m[2]!, m[3]!]),
    );
    t.equal(vendors.size, 67, 'the migration lists 67 vendors');
    const statuses = new Map<string, number>();
    const bids = new Map<string, number>();
    let total = 0;
    for (const county of a.counties) {
      const parcels = new Set(nal.get(county.coNo)!.map((r) => r.PARCEL_ID!));
      const { header, rows } = csv(join(dirOf(a), county.files.delinquencies));
      t.same(header, [...DELINQUENCY_COLUMNS]);
      total += rows.length;
      const keys = new Set<string>();
      const bad = rows.filter((r) => {
        const certified = ['certificate_sold', 'struck', 'redeemed'].includes(r.status!);
        const certFields = [r.certificate_number, r.certificate_sale_date, r.face_amount, r.certificate_holder];
        const rates = [r.certificate_interest_rate, r.bid_rate];
        statuses.set(r.status!, (statuses.get(r.status!) ?? 0) + 1);
        if (certified && r.status !== 'struck') bids.set(r.bid_rate!, (bids.get(r.bid_rate!) ?? 0) + 1);
        const key = `${r.parcel_id}:${r.tax_year}`;
        const dup = keys.has(key);
        keys.add(key);
        return (
          dup ||
          r.county !== county.slug ||
          !parcels.has(r.parcel_id!) ||
          !['2022', '2023', '2024', '2025'].includes(r.tax_year!) ||
          !['delinquent', 'certificate_sold', 'struck', 'redeemed', 'open', ''].includes(r.status!) ||
          !/^\d+\.\d\d$/.test(r.delinquent_amount!) ||
          !/^\d+\.\d\d$/.test(r.total_due!) ||
          r.source_vendor !== vendors.get(county.slug) ||
          (certified
            ? certFields.some((f) => f === '') ||
              !/^\d{4}-\d\d-\d\d$/.test(r.certificate_sale_date!) ||
              !/^\d+\.\d\d$/.test(r.face_amount!) ||
              rates.some((x) => !/^\d+\.\d\d$/.test(x!) || Number(x) < 0 || Number(x) > 18 || (Number(x) * 4) % 1 !== 0)
            : [...certFields, ...rates].some((f) => f !== '')) ||
          (r.status === 'struck' && (r.certificate_holder !== 'COUNTY HELD' || r.bid_rate !== '18.00'))
        );
      });
      t.same(bad.slice(0, 1), [], `${county.slug}: rows are valid`);
    }
    t.ok(total > PARCELS * 0.15 && total < PARCELS * 0.5, `a few records per ten parcels (${total})`);
    for (const s of ['delinquent', 'certificate_sold', 'struck', 'redeemed', 'open', '']) {
      t.ok((statuses.get(s) ?? 0) > 0, `status '${s}' occurs`);
    }
    const topBid = [...bids.entries()].sort((x, y) => y[1] - x[1])[0]![0];
    t.equal(topBid, '0.25', 'bids are heaviest at 0.25');
    t.ok(
      [...bids.keys()].some((x) => Number(x) > 10),
      'and spread up to 18',
    );
  },
);
