// The shrink guard on a roll year older than a county's current one: such a load replaces that year of the
// history, so it is measured against the parcels that year already holds. A cut-short file is refused with one line
// naming the year, nothing changes (history or current parcels), the flag lets it through; a blank owner column is
// refused too; a year no load has written yet is not limited.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTestDatabase } from '../helpers/db.ts';
import { importNal } from '../../src/importers/nal.ts';
import { historyPrint, LIBERTY, rollFile } from '../history/roll-files.ts';
import { rejectsPath } from './fixture.ts';

const db = await createTestDatabase();
t.teardown(() => db.drop());
const sql = db.sql;
const ROOT = new URL('../../', import.meta.url).pathname;

const cli = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/importers/cli.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, DATABASE_URL: db.ownerUrl },
  });
const load = (file: string, maxDeleteRate?: number) =>
  importNal({ file, databaseUrl: db.ownerUrl, rejects: rejectsPath('roll-year-guards'), quiet: true, maxDeleteRate });
/** The current parcels but for their change columns, which follow the history (ingest.refresh_roll_changes). */
const parcels = async () =>
  (
    await sql<{ sum: string }[]>`
    SELECT md5(string_agg((to_jsonb(p) - 'owner_changed_year' - 'just_value_change_pct')::text, '|' ORDER BY p.id)) AS sum
      FROM core.parcels p WHERE p.county_id = ${LIBERTY}`
  )[0]!.sum;
const yearRows = async (year: number) =>
  (
    await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM core.parcel_rolls WHERE county_id = ${LIBERTY} AND roll_year = ${year}`
  )[0]!.n;

t.before(async () => {
  await load(rollFile(2025)); // the current roll
});

t.test('an older year no load has written is not limited; its counts are its history rows', async (t) => {
  const s = await load(rollFile(2024));
  t.match(s.counties, [{ county: 'liberty', inserted: 310, updated: 0, deleted: 0, guard: 'ok' }]);
  t.equal(await yearRows(2024), 310);
});

t.test('a cut-short file of an older year is refused, naming the year; the flag lets it through', async (t) => {
  const history = await historyPrint(sql);
  const current = await parcels();
  const cut = rollFile(2024, 100);
  const r = cli('nal', cut, '--quiet');
  t.equal(r.status, 1);
  t.equal(
    r.stderr,
    "import: would delete 210 of 310 parcels in liberty's 2024 roll (68%), over --max-delete-rate 0.05; " +
      'nothing was changed; pass --max-delete-rate 0.7 if this is intended\n',
  );
  t.same(await historyPrint(sql), history, 'the history is as it was');
  t.equal(await parcels(), current, 'so are the current parcels');
  const [last] = await sql`SELECT status, message FROM core.load_history ORDER BY id DESC LIMIT 1`;
  t.match(last, { status: 'refused', message: /^would delete 210 of 310 parcels in liberty's 2024 roll/ });

  await t.rejects(load(cut, 0.6), { name: 'RefusedError' }, 'a flag below the share still refuses');
  const ok = await load(cut, 0.7);
  t.match(ok.counties, [{ county: 'liberty', deleted: 210, guard: 'ok' }]);
  t.equal(await yearRows(2024), 100);
  t.equal(await yearRows(2025), 310, 'the current year untouched');
  t.equal(await parcels(), current, 'and the current parcels');
  t.match((await load(rollFile(2024))).counties, [{ inserted: 210, deleted: 0, guard: 'ok' }], 'restored');
});

t.test('an older year whose owner column is blank is refused: a key column emptied in its history', async (t) => {
  const lines = readFileSync(rollFile(2024), 'latin1').split('\r\n');
  const header = lines[0]!.replace(/^\u00EF\u00BB\u00BF/, '').split(',');
  const owner = header.findIndex((h) => h.toUpperCase() === 'OWN_NAME');
  const kept = lines
    .slice(1)
    .filter((l) => l.startsWith('49,') && !l.includes('"'))
    .map((l) => l.split(','))
    .filter((f) => f.length === header.length);
  for (const f of kept) f[owner] = '';
  const blank = rollFile(2024).replace(/\.csv$/, '-no-owners.csv');
  writeFileSync(blank, [lines[0], ...kept.map((f) => f.join(','))].join('\r\n'), 'latin1');
  const history = await historyPrint(sql);
  await t.rejects(load(blank, 0.5), {
    name: 'RefusedError',
    message: /^would empty owner_name on [\d,]+ of the [\d,]+ parcels in liberty's 2024 roll that have it \(\d+%\)/,
  });
  t.same(await historyPrint(sql), history);
});

t.test('a new current year is still measured against the current parcels', async (t) => {
  const r = cli('nal', rollFile(2026, 100), '--quiet');
  t.equal(r.status, 1);
  t.match(r.stderr, /^import: would delete 210 of 310 parcels in liberty \(68%\)/);
  t.equal(await yearRows(2026), 0);
});
