// Profile `import-fixtures`: the real-format importer sample files under fixtures/import/ (NAL, SDF, polygons,
// delinquencies), built on fixtures.sql's Liberty parcels. Needs ogr2ogr (gdal-bin) for the State Plane shapefile.
// fixtures/import/README.md names the cases.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DELINQUENCY_COLUMNS, NAL_COLUMNS, SDF_COLUMNS } from '../columns.ts';
import { countyByCoNo } from '../counties.ts';
import { certificateNumber, certificateSaleDate, isCertified, STRUCK_HOLDER, STRUCK_RATE } from '../delinquency.ts';
import { csvLine, money, pad } from '../format.ts';
import { geojsonRing, LotGrid, rowMajor } from '../geometry.ts';
import { stateParcelId } from '../ids.ts';
import { words } from '../names.ts';
import { Rng } from '../prng.ts';
import { writeLines, zip } from '../sink.ts';
import { dorUc } from '../uses.ts';
import { FIXTURES_DIR, libertyParcelId } from './fixtures.ts';

const SEED = 20261123;

const SURNAMES = words('SMITH JOHNSON WILLIAMS BROWN JONES GARCIA MILLER DAVIS RODRIGUEZ HARRIS');
const FIRSTS = words('JOHN MARY JAMES LINDA ROBERT MARIA MICHAEL SUSAN CARLOS ANA');
const STREETS = [...words('OAK PINE MAGNOLIA CYPRESS'), 'HWY 20', ...words('RIVER BRISTOL APALACHICOLA')];
const SUFFIX = words('ST AVE DR RD LN CT');
/** DOR use codes as FDOR writes them (`001`) and in the 4-character form; residential ones are improved. */
const RESIDENTIAL = new Set([1, 2]);
const USES = [1, 0, 2, 51, 11, 86].map((code) => ({
  dor: dorUc(code),
  pa: `${pad(code, 2)}00`,
  res: RESIDENTIAL.has(code),
}));

type Row = Record<string, string | number>;
const blank = (columns: readonly string[]): Row => Object.fromEntries(columns.map((c) => [c, '']));
const nalText = (r: Row) => csvLine(NAL_COLUMNS.map((c) => r[c]));
const sdfText = (r: Row) => csvLine(SDF_COLUMNS.map((c) => r[c]));

// Liberty (CO_NO 49): the fixtures hold 62 parcels (lots 10 and 20 of section 01, then lot n of section n % 30 + 1
// for lots 11-70). The files keep 50 of them (lots 10, 20, 11-58), drop lots 59-70 and add lots 71-330.
const LIBERTY = countyByCoNo(49);
const libertyIds = [
  libertyParcelId(10, 1),
  libertyParcelId(20, 1),
  ...[...Array.from({ length: 48 }, (_, i) => 11 + i), ...Array.from({ length: 260 }, (_, i) => 71 + i)].map((lot) =>
    libertyParcelId(lot),
  ),
];

// Alachua (CO_NO 11, no fixture data).
const ALACHUA_CITIES: [string, string][] = [
  ['GAINESVILLE', '32601'],
  ['ALACHUA', '32615'],
  ['HIGH SPRINGS', '32643'],
];
const alachuaIds = Array.from({ length: 200 }, (_, i) => `0${6100 + i}-00${1 + (i % 9)}-000`);

/** Writes every file of the profile into `dir` (by default the committed fixtures/import/) and says so. */
export function writeImportFixtures(dir = join(FIXTURES_DIR, 'import')): string {
  const r = new Rng(SEED);
  const person = () => `${r.pick(SURNAMES)} ${r.pick(FIRSTS)}`;
  const street = (max: number) => `${r.int(1, max)} ${r.pick(STREETS)} ${r.pick(SUFFIX)}`;

  /** One NAL row; every column of the 165 present (blank where the roll has nothing). */
  const nalRow = (coNo: number, parcelId: string, cities: readonly [string, string][]): Row => {
    const row = blank(NAL_COLUMNS);
    const use = r.pick(USES);
    const jv = r.int(20, 400) * 1000;
    const av = Math.round(jv * (0.6 + r.next() * 0.4));
    const [city, zip] = r.pick(cities);
    Object.assign(row, {
      CO_NO: coNo,
      PARCEL_ID: parcelId,
      FILE_T: 'R',
      ASMNT_YR: 2025,
      DOR_UC: use.dor,
      PA_UC: use.pa,
      JV: jv,
      AV_SD: av,
      AV_NSD: av,
      TV_SD: use.dor === '086' ? 0 : Math.max(0, av - 25000),
      TV_NSD: use.dor === '086' ? 0 : Math.max(0, av - 50000),
      LND_VAL: Math.round(jv * 0.3),
      LND_SQFOOT: r.int(4000, 40000),
      EFF_YR_BLT: use.res ? r.int(1960, 2020) : 0,
      ACT_YR_BLT: use.res ? r.int(1950, 2015) : 0,
      TOT_LVG_AREA: use.res ? r.int(800, 3500) : 0,
      NO_BULDNG: use.res ? 1 : 0,
      NO_RES_UNTS: use.res ? 1 : 0,
      OWN_NAME: person(),
      OWN_ADDR1: `PO BOX ${r.int(100, 9999)}`,
      OWN_CITY: city,
      OWN_STATE: r.chance(0.2) ? 'FLORIDA' : 'FL',
      OWN_ZIPCD: zip,
      S_LEGAL: `LOT ${r.int(1, 40)} BLK ${r.int(1, 30)} ${r.pick(STREETS)} PARK PB ${r.int(1, 160)}-${r.int(1, 99)}`,
      STATE_PAR_ID: stateParcelId(coNo, 0, r.int(1, 999), r.int(0, 9999), 0),
      SEQ_NO: 0,
    });
    if (use.dor !== '000' && use.dor !== '051') {
      row.PHY_ADDR1 = street(19999);
      row.PHY_CITY = city;
      row.PHY_ZIPCD = zip;
    }
    if (r.chance(0.5)) {
      row.SALE_YR1 = r.pick([2023, 2024, 2025]);
      row.SALE_MO1 = r.int(1, 12);
      row.SALE_PRC1 = Math.round(jv * (0.8 + r.next() * 0.4));
      row.QUAL_CD1 = r.pick(['01', '02', '11', '05']);
      row.VI_CD1 = use.res ? 'I' : 'V';
      row.OR_BOOK1 = String(r.int(100, 999));
      row.OR_PAGE1 = String(r.int(1, 999));
    }
    return row;
  };

  const writeLibertyNal = () => {
    // Header drift: TOT_LVG_AR (the 10-character ArcGIS spelling), STATE_PARCEL_ID, lower-case own_name.
    const header = NAL_COLUMNS.map((c) =>
      c === 'TOT_LVG_AREA'
        ? 'TOT_LVG_AR'
        : c === 'STATE_PAR_ID'
          ? 'STATE_PARCEL_ID'
          : c === 'OWN_NAME'
            ? 'own_name'
            : c,
    );
    const lines: (string | Buffer)[] = ['\uFEFF' + header.join(',')];
    libertyIds.forEach((id, i) => {
      const row = nalRow(49, id, LIBERTY.cities);
      if (i === 0) {
        // Named: every mapped field set; slot 2 newer than slot 1; 2-char DOR code; quoted legal with a comma.
        Object.assign(row, {
          DOR_UC: '01',
          PA_UC: '0101',
          JV: 250000,
          AV_SD: 200000,
          AV_NSD: 190000,
          TV_SD: 175000,
          TV_NSD: 140000,
          LND_VAL: 60000,
          LND_SQFOOT: 21780,
          EFF_YR_BLT: 2001,
          ACT_YR_BLT: 1998,
          TOT_LVG_AREA: 1850,
          NO_BULDNG: 1,
          NO_RES_UNTS: 1,
          OWN_NAME: 'JOHNSON ROBERT & LINDA',
          OWN_ADDR1: '10 HWY 20 E',
          OWN_ADDR2: 'SUITE 4',
          OWN_CITY: 'HOSFORD',
          OWN_STATE: 'FLORIDA',
          OWN_ZIPCD: '32334-1234',
          PHY_ADDR1: '10 HWY 20 E',
          PHY_ADDR2: 'UNIT 2',
          PHY_CITY: 'BRISTOL',
          PHY_ZIPCD: '323210000',
          S_LEGAL: 'LOT 8 BLK 20, PALM PARK PB 127-81',
          ALT_KEY: '0049001',
          STATE_PAR_ID: 'C49-000-013-1363-0',
          SALE_YR1: 2021,
          SALE_MO1: 3,
          SALE_PRC1: 180000,
          SALE_YR2: 2024,
          SALE_MO2: 11,
          SALE_PRC2: 265000,
        });
      }
      if (i === 2) Object.assign(row, { DOR_UC: '0400', PA_UC: '0404', SALE_YR1: '', SALE_MO1: '', SALE_PRC1: '' });
      if (i === 3) {
        // Non-UTF-8: Windows-1252 bytes in the owner name (MUÑOZ JOSÉ).
        row.OWN_NAME = 'MU\u00d1OZ JOS\u00c9';
        lines.push(Buffer.from(nalText(row), 'latin1'));
        return;
      }
      lines.push(nalText(row));
      if (i === 5) lines.push(nalText({ ...row, JV: 'N/A' })); // bad value: rejected (a second copy of lot 15 would be a duplicate)
      if (i === 6) lines.push(nalText(row).split(',').slice(0, 40).join(',')); // truncated row: wrong field count
      if (i === 7) lines.push(nalText({ ...row, CO_NO: 99, PARCEL_ID: '99-9S-99-0000-0000-0000' })); // unknown county
      if (i === 8) lines.push(nalText({ ...row, OWN_NAME: 'SUPERSEDED OWNER' })); // duplicate, then the last line wins below
    });
    // The duplicate of row 8: the later line wins.
    const dup = nalRow(49, libertyIds[8]!, LIBERTY.cities);
    dup.OWN_NAME = 'LAST LINE WINS LLC';
    lines.push(nalText(dup));
    writeLines(join(dir, 'nal/NAL49F202501.csv'), lines, '\r\n');
  };

  // A zip named after Hernando (27) whose rows say CO_NO 11 (Alachua).
  const writeAlachuaNal = () => {
    const lines = [NAL_COLUMNS.join(',')];
    alachuaIds.forEach((id, i) => {
      const row = nalRow(11, id, ALACHUA_CITIES);
      if (i === 0) Object.assign(row, { OWN_NAME: 'ALACHUA FIRST LOAD LLC', DOR_UC: '003', JV: 1500000 });
      lines.push(nalText(row));
    });
    const csv = Buffer.from(lines.join('\n') + '\n');
    writeFileSync(join(dir, 'nal/Hernando 27 Final NAL 2025.zip'), zip([{ name: 'NAL27F202501.csv', data: csv }]));
  };

  const sdfRow = (coNo: number, parcelId: string): Row => ({
    ...blank(SDF_COLUMNS),
    CO_NO: coNo,
    PARCEL_ID: parcelId,
    ASMNT_YR: 2025,
    DOR_UC: r.pick(['001', '000', '002', '051']),
    SALE_ID_CD: String(r.int(100000, 999999)),
    VI_CD: r.pick(['V', 'I']),
    OR_BOOK: String(r.int(100, 999)),
    OR_PAGE: pad(r.int(1, 999), 4),
    CLERK_NO: `2024${pad(r.int(1, 99999), 6)}`,
    QUAL_CD: r.pick(['01', '02', '05', '11', '12', '30', '37']),
    SALE_YR: r.pick([2023, 2024]),
    SALE_MO: r.int(1, 12),
    SALE_PRC: r.int(20, 500) * 1000,
    MULTI_PAR_SAL: r.chance(0.1) ? 'M' : '',
    STATE_PARCEL_ID: stateParcelId(coNo, 0, 0, 0, 0),
  });

  const writeSdf = () => {
    // Older header spelling SAL_CHNG_CD and the NAL's STATE_PAR_ID; Liberty and Alachua rows in one file.
    const header = SDF_COLUMNS.map((c) =>
      c === 'SAL_CHG_CD' ? 'SAL_CHNG_CD' : c === 'STATE_PARCEL_ID' ? 'STATE_PAR_ID' : c,
    );
    const lines = [header.join(',')];
    const rows: Row[] = [];
    libertyIds.slice(0, 180).forEach((id) => rows.push(sdfRow(49, id)));
    alachuaIds.slice(0, 100).forEach((id) => rows.push(sdfRow(11, id)));
    Object.assign(rows[0]!, {
      SALE_YR: 2024,
      SALE_MO: 11,
      SALE_PRC: 265000,
      OR_BOOK: '0512',
      OR_PAGE: '0034',
      CLERK_NO: '2024001234',
      QUAL_CD: '01',
      VI_CD: 'I',
      DOR_UC: '01',
      SALE_ID_CD: '700001',
      MULTI_PAR_SAL: '',
    });
    rows.forEach((row, i) => {
      lines.push(sdfText(row));
      if (i === 3) lines.push(sdfText({ ...row, SALE_MO: 13 })); // bad month
      if (i === 4) lines.push(sdfText({ ...row, PARCEL_ID: '' })); // no parcel id
      if (i === 5) lines.push(sdfText({ ...row, QUAL_CD: '99' })); // same sale again: last wins
    });
    writeLines(join(dir, 'sdf/SDF49F202501.csv'), lines);
    // A legacy header-less SDF (20 Alachua sales), read positionally.
    writeLines(
      join(dir, 'sdf/SDF11F202501-noheader.csv'),
      alachuaIds.slice(100, 120).map((id) => sdfText(sdfRow(11, id))),
    );
  };

  const writeGeometry = () => {
    // ~30 m lots 20 to a row from a corner near Bristol (Liberty) or Gainesville (Alachua).
    const libertyLots = new LotGrid(-84.88, 30.24, 0.0003, 0.00027);
    const alachuaLots = new LotGrid(-82.33, 29.65, 0.0003, 0.00027);
    /** The ring of lot i as coordinate pairs (numbers, for JSON.stringify). */
    const square = (grid: LotGrid, i: number) => JSON.parse(geojsonRing(...grid.lot(...rowMajor(i, 20)))) as number[][];
    interface Feature {
      type: 'Feature';
      properties: Record<string, string | number>;
      geometry: { type: string; coordinates: unknown } | null;
    }
    const poly = (props: Record<string, string | number>, ring: number[][]): Feature => ({
      type: 'Feature',
      properties: props,
      geometry: { type: 'Polygon', coordinates: [ring] },
    });
    const features: Feature[] = [];
    libertyIds.forEach((id, i) => {
      if (i === 2) return; // lot 12: absent from the map, its polygon is cleared
      const ring = square(libertyLots, i);
      if (i === 0) {
        // Two features for one PARCELNO (west and east halves): unioned into one polygon.
        const [a, b, , d] = ring as [number[], number[], number[], number[]];
        const midX = Number(((a[0]! + b[0]!) / 2).toFixed(7));
        features.push(poly({ PARCELNO: id, CO_NO: 49 }, [a, [midX, a[1]!], [midX, d[1]!], d, a]));
        features.push(
          poly({ PARCELNO: id, CO_NO: 49 }, [[midX, a[1]!], b, [b[0]!, d[1]!], [midX, d[1]!], [midX, a[1]!]]),
        );
        return;
      }
      if (i === 1) {
        // A self-intersecting bow tie: ST_MakeValid turns it into two triangles (a MultiPolygon).
        const [a, b, c, d] = ring as [number[], number[], number[], number[]];
        features.push(poly({ PARCELNO: id, CO_NO: 49 }, [a, c, b, d, a]));
        return;
      }
      features.push(poly({ PARCELNO: id, CO_NO: 49 }, ring));
    });
    features.push(poly({ PARCELNO: '99-9S-99-9999-9999-9999', CO_NO: 49 }, square(libertyLots, 399))); // no such parcel
    features.push(poly({ PARCELNO: '00-0S-00-0000-0000-0000', CO_NO: 0 }, square(libertyLots, 398))); // FDOR: no roll record
    const tmp = mkdtempSync(join(tmpdir(), 'fixtures-'));
    try {
      const src = join(tmp, 'liberty.geojson');
      writeFileSync(src, JSON.stringify({ type: 'FeatureCollection', features }));
      // NAD83 / Florida North (ftUS): the State Plane zone of Liberty County.
      execFileSync('ogr2ogr', [
        '-f',
        'ESRI Shapefile',
        join(tmp, 'LIBERTY_PIN_2025.shp'),
        src,
        '-s_srs',
        'EPSG:4326',
        '-t_srs',
        'EPSG:2238',
        '-nln',
        'LIBERTY_PIN_2025',
      ]);
      const parts = readdirSync(tmp)
        .filter((f) => f.startsWith('LIBERTY_PIN_2025.'))
        .sort()
        .map((f) => {
          const data = readFileSync(join(tmp, f));
          // The DBF header stores the day it was written (bytes 1-3, YY MM DD): pin it so the zip never changes.
          if (f.endsWith('.dbf')) data.set([125, 7, 1], 1);
          return { name: f, data };
        });
      writeFileSync(join(dir, 'geometry/Liberty 49 PIN 2025.zip'), zip(parts));
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    // Alachua as GeoJSON (EPSG:4326, no CO_NO: needs --county alachua), and its first 20 parcels as GeoJSONSeq.
    const alachua = alachuaIds.map((id, i) => poly({ PARCELNO: id }, square(alachuaLots, i)));
    writeLines(join(dir, 'geometry/alachua-parcels.geojson'), [
      JSON.stringify({ type: 'FeatureCollection', features: alachua }),
    ]);
    writeLines(
      join(dir, 'geometry/alachua-parcels.geojsonl'),
      alachua.slice(0, 20).map((f) => JSON.stringify(f)),
    );
  };

  const writeDelinquencies = () => {
    const lines = [DELINQUENCY_COLUMNS.join(',')];
    const statuses = ['delinquent', 'certificate_sold', 'struck', 'redeemed', ''];
    const row = (county: string, parcelId: string, year: number, n: number): Row => {
      const status = r.pick(statuses);
      const due = r.int(20000, 900000) / 100;
      const sold = isCertified(status);
      const rate = status === 'struck' ? STRUCK_RATE : r.int(0, 72) / 4;
      return {
        county,
        parcel_id: parcelId,
        tax_year: year,
        status,
        delinquent_amount: money(due * 0.9),
        total_due: money(due),
        certificate_number: sold ? certificateNumber(year, n) : '',
        certificate_sale_date: sold ? certificateSaleDate(year) : '',
        owner_name: person(),
        site_address_full: r.chance(0.7) ? street(19999) : '',
        source_vendor: 'LienHub',
        face_amount: sold ? money(due * 1.08) : '',
        certificate_holder:
          status === 'struck' ? STRUCK_HOLDER : sold ? r.pick(['ACME CAPITAL LLC', 'FIG AS CUST', 'BETA FUND']) : '',
        certificate_interest_rate: sold ? money(rate) : '',
        bid_rate: sold && status !== 'struck' ? money(rate) : '',
      };
    };
    const out = (row: Row) => lines.push(csvLine(DELINQUENCY_COLUMNS.map((c) => row[c])));
    // Miami-Dade 2024: named parcel 1 (0131320350010) still delinquent with a new amount, then 150 others.
    out({
      ...row('miami-dade', '0131320350010', 2024, 1),
      status: 'delinquent',
      delinquent_amount: '3400.00',
      total_due: '3612.48',
      certificate_number: '',
      certificate_sale_date: '',
      face_amount: '',
      certificate_holder: '',
      certificate_interest_rate: '',
      bid_rate: '',
      owner_name: 'SMITH JOHN',
      site_address_full: '123 OAK DR',
    });
    for (let i = 0; i < 150; i++)
      out(row('miami-dade', `30${String(5000000000 + i * 7)}`.slice(0, 13), 2024, 5000 + i));
    // Alachua 2025 (first load; the county column left empty on some rows is filled from --county when given).
    for (let i = 0; i < 150; i++) out(row(i % 10 === 0 ? 'Alachua' : 'alachua', alachuaIds[i]!, 2025, 100 + i));
    const dupe = row('alachua', alachuaIds[3]!, 2025, 103);
    out({ ...dupe, status: 'certificate_sold', certificate_number: '2025-000103', total_due: '999.99' }); // duplicate key: last wins
    out({ ...row('alachua', alachuaIds[5]!, 2025, 5), total_due: '12,34.x' }); // bad amount
    out({ ...row('atlantis', '123', 2025, 6) }); // unknown county
    writeLines(join(dir, 'delinquencies/standard-2025.csv'), lines);

    // Tax-collector export for Liberty 2025: different names, $ amounts, MM/DD/YYYY dates, collector status words.
    const dollars = (v: number) =>
      `$${v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
    const collector: string[] = [
      'Folio,Tax Year,Cert #,Status,Owner,Situs Address,Advertised Amt,Face Amt,Interest Rate,Amount Due,Sale Date,Holder',
    ];
    libertyIds.slice(0, 120).forEach((id, i) => {
      const st = r.pick(['Advertised', 'Sold', 'Struck to County', 'Redeemed', 'Open']);
      const sold = st === 'Sold' || st === 'Struck to County' || st === 'Redeemed';
      const due = r.int(5000, 300000) / 100;
      const rate = st === 'Struck to County' ? STRUCK_RATE : r.int(0, 72) / 4;
      collector.push(
        csvLine([
          id,
          2025,
          sold ? `25-${pad(i + 1, 5)}` : '',
          st,
          person(),
          `${street(9999)}, BRISTOL`,
          dollars(due * 0.9),
          sold ? dollars(due * 1.08) : '',
          sold ? `${money(rate)}%` : '',
          dollars(due),
          sold ? '06/01/2026' : '',
          st === 'Struck to County' ? 'LIBERTY COUNTY' : sold ? 'TAX LIEN FUND LLC' : '',
        ]),
      );
    });
    collector.push(
      csvLine([
        '01-1S-07-0000-0030-0000',
        2025,
        '25-99999',
        'Sold',
        'BAD DATE',
        '',
        '$10.00',
        '$11.00',
        '18.00%',
        '$12.00',
        '13/45/2026',
        'X',
      ]),
    );
    writeLines(join(dir, 'delinquencies/collector-liberty-2025.csv'), collector, '\r\n');
  };

  for (const d of ['nal', 'sdf', 'geometry', 'delinquencies']) mkdirSync(join(dir, d), { recursive: true });
  writeLibertyNal();
  writeAlachuaNal();
  writeSdf();
  writeGeometry();
  writeDelinquencies();
  return `fixtures/import: written to ${dir}`;
}
