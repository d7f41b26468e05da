// A dry run of a roll year leaves no trace in the history: no row, no year on file and no partition, not even the
// empty one a new year or county would need; its counts and verdict are the real load's. A real merge whose
// partition was not made first fails rather than dropping the year's rows.
import t from 'tap';
import { createTestDatabase } from '../helpers/db.ts';
import { parseCommand, report } from '../../src/importers/command.ts';
import { runImport, type ImportSummary } from '../../src/importers/pipeline.ts';
import { historyPrint, LIBERTY, rollFile } from './roll-files.ts';

const db = await createTestDatabase();
t.teardown(() => db.drop());
const sql = db.sql;

async function run(line: string[]): Promise<ImportSummary> {
  const command = parseCommand([...line, '--quiet']);
  if (command.help) throw new Error('help');
  return runImport(command.kind, { ...command.options, databaseUrl: db.ownerUrl });
}
const liberty = (s: ImportSummary) =>
  report(s)
    .split('\n')
    .filter((l) => l.startsWith('  liberty:'));
const leaf = async (year: number) =>
  (await sql<{ t: string | null }[]>`SELECT to_regclass(${`core.parcel_rolls_${year}_${LIBERTY}`})::text AS t`)[0]!.t;
const yearTable = async (year: number) =>
  (await sql<{ t: string | null }[]>`SELECT to_regclass(${`core.parcel_rolls_${year}`})::text AS t`)[0]!.t;

t.before(async () => {
  await run(['nal', rollFile(2025)]); // Liberty's first load through the importer: the guard applies from now on
});

t.test('a dry run of a new current year creates no partition and changes no history', async (t) => {
  t.equal(await yearTable(2026), null, 'no 2026 partition before');
  const before = await historyPrint(sql);
  const dry = await run(['nal', rollFile(2026), '--dry-run']);
  t.equal(dry.status, 'dry_run');
  t.same(await historyPrint(sql), before, 'rows, years on file and partitions as they were');
  t.equal(await yearTable(2026), null, 'no year partition left behind');
  t.equal(await leaf(2026), null, 'no county leaf left behind');

  const real = await run(['nal', rollFile(2026)]);
  t.equal(real.status, 'succeeded');
  t.same(liberty(dry), liberty(real), 'the dry run predicted the counts and verdict');
  t.equal(await leaf(2026), 'core.parcel_rolls_2026_39', 'the real load made the leaf');
  t.same(
    await sql`SELECT roll_year, parcel_count FROM core.parcel_roll_years WHERE county_id = ${LIBERTY} ORDER BY 1`,
    [
      { roll_year: 2025, parcel_count: 310 },
      { roll_year: 2026, parcel_count: 310 },
    ],
  );
});

t.test('a dry run of an older year no partition holds counts every row as new and leaves nothing', async (t) => {
  const before = await historyPrint(sql);
  const dry = await run(['nal', rollFile(2023), '--dry-run']);
  t.match(dry.counties, [{ county: 'liberty', inserted: 310, updated: 0, deleted: 0, guard: 'ok' }]);
  t.same(await historyPrint(sql), before);
  t.equal(await yearTable(2023), null);

  const real = await run(['nal', rollFile(2023)]);
  t.same(liberty(dry), liberty(real), 'the same counts as the real load');
  t.equal(await leaf(2023), 'core.parcel_rolls_2023_39');
  t.equal(
    (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM core.parcel_rolls WHERE roll_year = 2023`)[0]!.n,
    310,
  );
});

t.test('a dry run that would be refused says so and leaves the year as it was', async (t) => {
  const before = await historyPrint(sql);
  const dry = await run(['nal', rollFile(2023, 100), '--dry-run']);
  t.equal(dry.status, 'dry_run');
  t.match(dry.refusals, [/^would delete 210 of 310 parcels in liberty's 2023 roll \(68%\)/]);
  t.same(await historyPrint(sql), before);
});

t.test('outside a dry run, a merge whose leaf was not made first fails', async (t) => {
  const [load] = await sql<{ id: string }[]>`
    INSERT INTO core.load_history (kind, file_name, status) VALUES ('nal', 'no-leaf.csv', 'running') RETURNING id::text`;
  await sql`INSERT INTO ingest.nal_stage (load_id, line_no, county_id, parcel_id, roll_year)
            VALUES (${load!.id}, 2, ${LIBERTY}, 'NO-LEAF-1', 2019)`;
  await t.rejects(sql`SELECT * FROM ingest.merge_rolls(${load!.id}, ${LIBERTY}::smallint)`, {
    code: '55000',
    message: /no partition for county 39 in roll year\(s\) \{2019\}: call ingest.prepare_rolls/,
  });
  // as the importer's dry run does: mark the transaction, merge, roll back
  let inDryRun: unknown;
  await sql
    .begin(async (tx) => {
      await tx`SELECT set_config('ingest.dry_run', 'on', true)`;
      [inDryRun] =
        await tx`SELECT inserted::int, updated::int, deleted::int FROM ingest.merge_rolls(${load!.id}, ${LIBERTY}::smallint)`;
      throw new Error('roll back');
    })
    .catch(() => {});
  t.same(inDryRun, { inserted: 1, updated: 0, deleted: 0 }, 'in a dry run the row is counted as new');
  t.equal(await yearTable(2019), null);
});
