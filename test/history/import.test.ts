// Roll years through the NAL importer: Liberty's fixture roll loaded as 2025, then as 2024 (an older year: only the
// history and the current parcels' change columns change), then as 2026 (the new current roll); re-importing 2024
// changes 2024 only; a new current year writes each current parcel once (its change columns included); the
// exemptions a file carries reach the history; the partitions exist per county and year.
import t from 'tap';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../helpers/db.ts';
import { importNal } from '../../src/importers/nal.ts';
import { parseCsv } from '../../src/importers/csv.ts';
import { fixture, rejectsPath } from '../importers/fixture.ts';

const db = await createTestDatabase();
t.teardown(() => db.drop());
const sql = db.sql;
const LIBERTY = 39;
const scratch = mkdtempSync(join(tmpdir(), 'history-import-'));
const ORIGINAL = readFileSync(fixture('nal/NAL49F202501.csv'), 'latin1');
const TARGET = '01-1S-07-0000-0010-0000'; // JOHNSON ROBERT & LINDA, JV 250000 in the fixture

const quote = (f: string) => (/[",\r\n]/.test(f) ? `"${f.replace(/"/g, '""')}"` : f);
/** The fixture roll as year `year`, with the target parcel's owner, just value and EXMPT_01 set. */
function roll(year: number, target: { owner: string; jv: number; homestead?: number }): string {
  const lines = ORIGINAL.split('\r\n');
  const header = parseCsv(lines[0]!.replace(/^\u00EF\u00BB\u00BF/, ''))!;
  const col = (name: string) => header.findIndex((h) => h.toUpperCase() === name); // the fixture writes own_name
  const out = lines.map((line, i) => {
    if (i === 0) return line;
    const moved = line.replace(/^(49,[^,]*,[^,]*,)2025,/, `$1${year},`);
    if (!line.startsWith(`49,${TARGET},`)) return moved;
    const f = parseCsv(moved)!;
    f[col('OWN_NAME')] = target.owner;
    f[col('JV')] = String(target.jv);
    f[col('EXMPT_01')] = target.homestead ? String(target.homestead) : '';
    return f.map(quote).join(',');
  });
  const file = join(scratch, `NAL49-${year}-${target.jv}.csv`);
  writeFileSync(file, out.join('\r\n'), 'latin1');
  return file;
}
const load = (file: string, name: string) =>
  importNal({ file, databaseUrl: db.ownerUrl, rejects: rejectsPath(name), quiet: true, maxDeleteRate: 1 });
const parcels = async () =>
  (
    await sql<{ sum: string; n: number }[]>`
    SELECT md5(string_agg((to_jsonb(p) - 'owner_changed_year' - 'just_value_change_pct')::text, '|' ORDER BY p.id)) AS sum,
           count(*)::int AS n
      FROM core.parcels p WHERE p.county_id = ${LIBERTY}`
  )[0]!;
const target = async () =>
  (
    await sql<{ id: number; roll_year: number; owner_name: string; just_value: string }[]>`
    SELECT id::int, roll_year, owner_name, just_value::text FROM core.parcels WHERE county_id = ${LIBERTY} AND parcel_id = ${TARGET}`
  )[0]!;
const history = async (id: number) =>
  sql<
    {
      roll_year: number;
      owner_name: string;
      just_value: number;
      owner_changed: boolean | null;
      just_value_change_pct: number | null;
      exemptions: Record<string, number> | null;
    }[]
  >`SELECT roll_year, owner_name, just_value, owner_changed, just_value_change_pct, exemptions FROM api.parcel_history(${id})`;

t.test('an older year goes to the history only; a newer year becomes the current roll', async (t) => {
  await load(roll(2025, { owner: 'JOHNSON ROBERT & LINDA', jv: 250000, homestead: 50000 }), 'y2025');
  const current = await parcels();
  const p = await target();
  t.same([p.roll_year, p.owner_name, p.just_value], [2025, 'JOHNSON ROBERT & LINDA', '250000']);
  t.same(
    (await history(p.id)).map((r) => [r.roll_year, r.exemptions]),
    [[2025, { '01': 50000 }]],
    'the file’s exemption amount is kept by its code',
  );

  const older = await load(roll(2024, { owner: 'JOHNSON ROBERT', jv: 200000 }), 'y2024');
  t.same(
    older.counties.map((c) => [c.inserted, c.updated, c.deleted]),
    [[310, 0, 0]],
    'an older roll counts the history rows it wrote',
  );
  t.same(
    await parcels(),
    current,
    'the current parcels are the same (but for their change columns, which the history feeds)',
  );
  const two = await history(p.id);
  t.same(
    two.map((r) => [r.roll_year, r.owner_name, r.just_value, r.owner_changed, r.just_value_change_pct]),
    [
      [2025, 'JOHNSON ROBERT & LINDA', 250000, true, 25],
      [2024, 'JOHNSON ROBERT', 200000, null, null],
    ],
  );
  const [changes] = await sql<{ year: number; pct: string }[]>`
    SELECT owner_changed_year AS year, just_value_change_pct::text AS pct FROM core.parcels WHERE id = ${p.id}`;
  t.same(changes, { year: 2025, pct: '25.00' }, 'the current parcel knows its change against 2024');

  // every write of a current parcel, counted by a trigger: a new current year writes each parcel once, its change
  // columns in the same write (a second write would write every index of core.parcels again)
  await sql`CREATE TABLE public.parcel_writes (id bigint)`;
  await sql.unsafe(`
    CREATE FUNCTION public.count_parcel_write() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN INSERT INTO public.parcel_writes VALUES (NEW.id); RETURN NULL; END $$;
    CREATE TRIGGER count_parcel_write AFTER UPDATE ON core.parcels FOR EACH ROW EXECUTE FUNCTION public.count_parcel_write()`);
  await load(roll(2026, { owner: 'NEW OWNER LLC', jv: 300000 }), 'y2026');
  const [writes] = await sql<{ writes: number; parcels: number }[]>`
    SELECT count(*)::int AS writes, count(DISTINCT id)::int AS parcels FROM public.parcel_writes`;
  await sql.unsafe(`DROP TRIGGER count_parcel_write ON core.parcels; DROP FUNCTION public.count_parcel_write();
                    DROP TABLE public.parcel_writes`);
  t.same(writes, { writes: 310, parcels: 310 }, 'the new current year wrote each of the 310 parcels once');
  const now = await target();
  t.same([now.id, now.roll_year, now.owner_name, now.just_value], [p.id, 2026, 'NEW OWNER LLC', '300000']);
  t.same(
    (await history(p.id)).map((r) => [r.roll_year, r.just_value_change_pct]),
    [
      [2026, 20],
      [2025, 25],
      [2024, null],
    ],
  );

  const after2026 = await parcels();
  await load(roll(2024, { owner: 'JOHNSON ROBERT', jv: 240000 }), 'y2024b');
  t.same(await parcels(), after2026, 're-importing 2024 leaves the 2026 parcels alone');
  t.same(
    (await history(p.id)).map((r) => [r.roll_year, r.just_value]),
    [
      [2026, 300000],
      [2025, 250000],
      [2024, 240000],
    ],
    'only 2024 changed',
  );
  const leaves = await sql<{ name: string }[]>`
    SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE c.relname ~ '^parcel_rolls_20(24|25|26)_39$' ORDER BY 1`;
  t.same(
    leaves.map((l) => l.name),
    ['parcel_rolls_2024_39', 'parcel_rolls_2025_39', 'parcel_rolls_2026_39'],
    'one table per county and year',
  );
  t.same(
    await sql`SELECT roll_year, parcel_count FROM core.parcel_roll_years WHERE county_id = ${LIBERTY} ORDER BY 1`,
    [
      { roll_year: 2024, parcel_count: 310 },
      { roll_year: 2025, parcel_count: 310 },
      { roll_year: 2026, parcel_count: 310 },
    ],
  );
});
