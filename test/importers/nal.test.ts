// NAL importer end to end on real-format fixtures: Liberty replaces the fixture roll (update, insert, delete),
// Alachua arrives in a zip named after another county (routed by CO_NO, first load). Field mapping against the
// raw line, rejects, idempotence, stable ids, load_history, atomic visibility for a concurrent reader, the CLI.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/db.ts';
import { importNal } from '../../src/importers/nal.ts';
import { fixture, rawRow, readRejects, rejectsPath } from './fixture.ts';

const db = await createTestDatabase();
t.teardown(() => db.drop());
const sql = db.sql;
const LIBERTY = 39;
const opts = (file: string, name: string) => ({
  file: fixture(file),
  databaseUrl: db.ownerUrl,
  rejects: rejectsPath(name),
  quiet: true,
});

const before = await sql<{ id: string; parcel_id: string }[]>`
  SELECT id::text, parcel_id FROM core.parcels WHERE county_id = ${LIBERTY} ORDER BY id`;

t.test('Liberty NAL: replace, rejects, mapping', async (t) => {
  const s = await importNal(opts('nal/NAL49F202501.csv', 'liberty'));
  t.equal(s.rowsRead, 315, 'every data record counted (header and blank lines are not rows)');
  t.equal(s.invalid, 3);
  t.equal(s.duplicates, 2);
  t.equal(s.rowsLoaded, 310);
  t.equal(s.fallbackDecodedLines, 1, 'the Windows-1252 line was decoded by the fallback');
  t.same(s.counties, [
    { county: 'liberty', rows: 312, inserted: 260, updated: 50, deleted: 12, parcel_count: 310, guard: 'first load' },
  ]);

  const rejects = readRejects(rejectsPath('liberty'));
  t.same(
    rejects.map((r) => [r.line, r.reason]),
    [
      [8, "JV: not a whole number: 'N/A'"],
      [10, 'expected 165 fields, found 40'],
      [12, "CO_NO: '99' is not a Florida county number (11-77)"],
      [13, 'duplicate: superseded by line 316 (last line wins)'],
      [14, 'duplicate: superseded by line 316 (last line wins)'],
    ],
  );
  t.match(rejects[0]!.raw, /^49,15-1S-07-0000-0014-0000,R,2025,/, 'raw line kept');

  // Ids of the parcels the file kept are unchanged; the 12 it dropped are gone.
  const after = new Map(
    (
      await sql<
        { id: string; parcel_id: string }[]
      >`SELECT id::text, parcel_id FROM core.parcels WHERE county_id = ${LIBERTY}`
    ).map((r) => [r.parcel_id, r.id]),
  );
  const kept = before.filter((b) => after.has(b.parcel_id));
  t.equal(kept.length, 50);
  t.ok(
    kept.every((b) => after.get(b.parcel_id) === b.id),
    'public ids stable',
  );
  t.equal(after.size, 310);

  const raw = rawRow('nal/NAL49F202501.csv', (f) => f[1] === '01-1S-07-0000-0010-0000');
  const [p] = await sql`SELECT * FROM core.parcels WHERE county_id = ${LIBERTY} AND parcel_id = ${raw.PARCEL_ID!}`;
  t.match(p, {
    roll_year: Number(raw.ASMNT_YR),
    owner_name: raw.own_name,
    owner_address1: raw.OWN_ADDR1,
    owner_address2: raw.OWN_ADDR2,
    owner_city: raw.OWN_CITY,
    owner_state: 'FL', // FLORIDA in the file
    owner_zip: raw.OWN_ZIPCD,
    site_address_full: `${raw.PHY_ADDR1} ${raw.PHY_ADDR2}`,
    site_city: raw.PHY_CITY,
    site_state: 'FL',
    site_zip: raw.PHY_ZIPCD!.slice(0, 5),
    dor_use_code: '0100', // '01' in the file
    property_use_code: raw.PA_UC,
    land_use_description: 'SINGLE FAMILY',
    just_value: raw.JV,
    assessed_value: raw.AV_NSD,
    taxable_value: raw.TV_NSD,
    land_value: raw.LND_VAL,
    year_built: Number(raw.ACT_YR_BLT),
    effective_year_built: Number(raw.EFF_YR_BLT),
    living_area_sqft: Number(raw.TOT_LVG_AR),
    land_area_sqft: raw.LND_SQFOOT,
    building_count: Number(raw.NO_BULDNG),
    residential_units: Number(raw.NO_RES_UNTS),
    legal_description: raw.S_LEGAL,
    state_parcel_id: raw.STATE_PARCEL_ID,
    alt_key: raw.ALT_KEY,
    last_sale_price: raw.SALE_PRC2, // slot 2 (2024-11) is newer than slot 1 (2021-03)
  });
  t.equal(p!.last_sale_date.toISOString().slice(0, 10), '2024-11-01', 'month precision: the 1st');
  t.equal(p!.id, '14', 'named case 14 kept its id');

  const [cond] = await sql`SELECT dor_use_code, land_use_description, last_sale_date FROM core.parcels
                           WHERE county_id = ${LIBERTY} AND parcel_id = '12-1S-07-0000-0011-0000'`;
  t.same(
    cond,
    { dor_use_code: '0400', land_use_description: 'CONDOMINIUM', last_sale_date: null },
    '4-digit code kept, no sale',
  );
  const [mu] =
    await sql`SELECT owner_name FROM core.parcels WHERE county_id = ${LIBERTY} AND parcel_id = '13-1S-07-0000-0012-0000'`;
  t.equal(mu!.owner_name, 'MUÑOZ JOSÉ', 'Windows-1252 bytes decoded');
  const [dup] =
    await sql`SELECT owner_name FROM core.parcels WHERE county_id = ${LIBERTY} AND parcel_id = '18-1S-07-0000-0017-0000'`;
  t.equal(dup!.owner_name, 'LAST LINE WINS LLC');
  const [vacant] = await sql`SELECT year_built, living_area_sqft, site_address_full, site_state FROM core.parcels
                             WHERE county_id = ${LIBERTY} AND dor_use_code = '0000' ORDER BY id LIMIT 1`;
  t.same(
    vacant,
    { year_built: null, living_area_sqft: null, site_address_full: null, site_state: null },
    '0 and blank are NULL',
  );

  const [c] =
    await sql`SELECT parcel_count, last_import_at IS NOT NULL AS imported FROM core.counties WHERE id = ${LIBERTY}`;
  t.same(c, { parcel_count: 310, imported: true });
  const [h] = await sql`SELECT kind, file_name, status, rows_read::int, rows_loaded::int, rows_rejected::int, county_id,
                               length(file_sha256) AS sha, finished_at IS NOT NULL AS done
                          FROM core.load_history WHERE id = ${s.loadId}`;
  t.same(h, {
    kind: 'nal',
    file_name: 'NAL49F202501.csv',
    status: 'succeeded',
    rows_read: 315,
    rows_loaded: 310,
    rows_rejected: 5,
    county_id: LIBERTY,
    sha: 64,
    done: true,
  });
  const [stage] = await sql`SELECT count(*)::int AS n FROM ingest.nal_stage`;
  t.equal(stage!.n, 0, 'staging emptied');
});

t.test('re-running the same file changes nothing', async (t) => {
  const stamp = await sql`SELECT id::text, updated_at FROM core.parcels WHERE county_id = ${LIBERTY} ORDER BY id`;
  const s = await importNal(opts('nal/NAL49F202501.csv', 'liberty2'));
  t.same(s.counties, [
    { county: 'liberty', rows: 312, inserted: 0, updated: 0, deleted: 0, parcel_count: 310, guard: 'ok' },
  ]);
  t.same(await sql`SELECT id::text, updated_at FROM core.parcels WHERE county_id = ${LIBERTY} ORDER BY id`, stamp);
});

t.test('zipped NAL named after Hernando holds Alachua rows: routed by CO_NO, first load', async (t) => {
  const s = await importNal(opts('nal/Hernando 27 Final NAL 2025.zip', 'alachua'));
  t.same(s.counties, [
    { county: 'alachua', rows: 200, inserted: 200, updated: 0, deleted: 0, parcel_count: 200, guard: 'first load' },
  ]);
  const [n] = await sql`SELECT count(*)::int AS n FROM core.parcels WHERE county_id = 23`;
  t.equal(n!.n, 0, 'nothing went to Hernando');
  const [p] =
    await sql`SELECT owner_name, dor_use_code, just_value FROM core.parcels WHERE county_id = 1 AND parcel_id = '06100-001-000'`;
  t.same(p, { owner_name: 'ALACHUA FIRST LOAD LLC', dor_use_code: '0300', just_value: '1500000' });
});

t.test('a concurrent reader sees the county before or after the merge, never a mix', async (t) => {
  const reader = postgres(db.ownerUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => reader.end());
  const probe = async () => {
    const [r] = await reader`SELECT count(*)::int AS n, coalesce(sum(just_value), 0)::text AS total,
                                    count(*) FILTER (WHERE owner_name = 'MERGE MARKER')::int AS marked
                               FROM core.parcels WHERE county_id = ${LIBERTY}`;
    return `${r!.n}/${r!.total}/${r!.marked}`;
  };
  const beforeState = await probe();
  // Alter the roll in place so the reload has many updates: a partial merge would show a mix of both states.
  await sql`UPDATE core.parcels SET just_value = just_value + 1, owner_name = 'MERGE MARKER' WHERE county_id = ${LIBERTY}`;
  const changed = await probe();
  const seen = new Set<string>();
  let running = true;
  const loop = (async () => {
    while (running) seen.add(await probe());
  })();
  try {
    await importNal({
      ...opts('nal/NAL49F202501.csv', 'liberty3'),
      beforeCommit: async (tx) => {
        await tx`SELECT pg_sleep(0.3)`; // the reader polls while the merge is done but not committed
      },
    });
  } finally {
    running = false;
    await loop;
  }
  const after = await probe();
  t.equal(after, beforeState, 'the reload restored the roll');
  t.ok(seen.has(changed), 'reader ran during the merge');
  t.same(
    [...seen].filter((s) => s !== changed && s !== after),
    [],
    'only the before and after states were visible',
  );
});

t.test('CLI: one-line errors, non-zero exit', async (t) => {
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'src/importers/cli.ts', ...args], {
      encoding: 'utf8',
      env: { ...process.env, DATABASE_URL: db.ownerUrl },
    });
  let r = cli('nal', 'no/such/file.csv');
  t.equal(r.status, 1);
  t.equal(r.stderr, 'import: no/such/file.csv: no such file\n');
  r = cli('parcels', 'x.csv');
  t.equal(r.status, 2);
  t.match(r.stderr, /^import: unknown kind 'parcels' \(nal, sdf, parcel-geometry, delinquencies\)\n$/);
  r = cli('delinquencies', fixture('delinquencies/collector-liberty-2025.csv'), '--county', 'atlantis');
  t.equal(r.status, 1);
  t.match(r.stderr, /^import: --county: unknown county 'atlantis'/);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
  r = cli(
    'nal',
    fixture('nal/NAL49F202501.csv'),
    '--rejects',
    rejectsPath('cli'),
    '--max-reject-rate',
    '0.001',
    '--quiet',
  );
  t.equal(r.status, 1);
  t.match(r.stderr, /^import: 3 of 315 rows invalid \(0\.95%\), over --max-reject-rate 0\.001; nothing was loaded/);
  const [h] = await sql`SELECT status, message FROM core.load_history ORDER BY id DESC LIMIT 1`;
  t.equal(h!.status, 'refused', 'a refusal is recorded as such');
  r = cli('nal', fixture('nal/NAL49F202501.csv'), '--rejects', rejectsPath('cli'), '--quiet');
  t.equal(r.status, 0);
  t.match(r.stdout, /^nal .*NAL49F202501\.csv: succeeded in .*\n {2}rows read 315, loaded 310, rejected 5/);
  t.match(r.stdout, /\n {2}1 line was not UTF-8 and read as Windows-1252\n/, 'one line, in the singular');
});
