// The import guards end to end on the fixtures: a file of the wrong kind and a truncated roll are refused with one
// line and no row changed; the refusal is recorded; the flag lets an intended shrink through; a dry run changes
// nothing and predicts the real load's counts; a first load is not limited; the documented fixture commands leave
// no file in fixtures/.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createTestDatabase } from '../helpers/db.ts';
import { parseCommand, report } from '../../src/importers/command.ts';
import { importNal } from '../../src/importers/nal.ts';
import { runImport, type ImportSummary } from '../../src/importers/pipeline.ts';
import { fixture, rejectsPath } from './fixture.ts';

const db = await createTestDatabase();
t.teardown(() => db.drop());
const sql = db.sql;
const LIBERTY = 39;
const ALACHUA = 1;
const ROOT = new URL('../../', import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), 'guards-'));
const NAL = fixture('nal/NAL49F202501.csv');

/** Every row of a county's parcels, hashed: equal before and after means nothing changed. */
const checksum = async (county: number) => {
  const [r] = await sql<{ sum: string; n: number }[]>`
    SELECT md5(coalesce(string_agg(p::text, '|' ORDER BY p.id), '')) AS sum, count(*)::int AS n
      FROM core.parcels p WHERE p.county_id = ${county}`;
  return r!;
};
const lastLoad = async () =>
  (
    await sql<{ kind: string; status: string; message: string; county_ids: number[] | null }[]>`
    SELECT kind, status, message, county_ids FROM core.load_history ORDER BY id DESC LIMIT 1`
  )[0]!;

/** The import CLI itself, for what it prints and its exit status. */
const cli = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/importers/cli.ts'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, DATABASE_URL: db.ownerUrl },
  });

/** A documented command line run in-process against a database (this file's unless another is given). */
async function run(line: string[], databaseUrl = db.ownerUrl): Promise<ImportSummary> {
  const command = parseCommand([...line, '--quiet']);
  if (command.help) throw new Error('help');
  return runImport(command.kind, { ...command.options, databaseUrl });
}
const refusalOf = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (err: Error) => `${err.name}: ${err.message}`,
  );

/** The NAL fixture's header and a slice of its records: what a download cut short leaves. */
function truncatedNal(records: number): string {
  const lines = readFileSync(NAL, 'utf8').split('\r\n');
  const file = join(scratch, `NAL49-first-${records}.csv`);
  // Lines 20 on: past the fixture's deliberately bad rows, so the reject threshold is not what refuses it.
  writeFileSync(file, [lines[0], ...lines.slice(19, 19 + records)].join('\r\n') + '\r\n');
  return file;
}

const opts = (file: string, name: string) => ({
  file,
  databaseUrl: db.ownerUrl,
  rejects: rejectsPath(name),
  quiet: true,
});

t.test('a sales file loaded as a roll is refused, naming the kind it is; no row changes', async (t) => {
  const before = await Promise.all([checksum(LIBERTY), checksum(ALACHUA)]);
  const r = cli('nal', fixture('sdf/SDF49F202501.csv'), '--quiet');
  t.equal(r.status, 1);
  t.equal(r.stdout, '', 'no summary: nothing was loaded');
  t.equal(
    r.stderr,
    `import: ${fixture('sdf/SDF49F202501.csv')}: not a NAL roll file: the header lacks OWN_NAME, JV, AV_NSD or AV_SD, ` +
      'TV_NSD or TV_SD; this looks like an SDF sales file: use `import sdf`; nothing was changed\n',
    'one line: what is missing, what the file looks like, what to run',
  );
  t.same(await Promise.all([checksum(LIBERTY), checksum(ALACHUA)]), before, 'Liberty and Alachua unchanged');
  t.match(await lastLoad(), { kind: 'nal', status: 'refused', message: /not a NAL roll file/ });

  const other = join(scratch, 'notes.csv');
  writeFileSync(other, 'Parcel,Owner,Note\n01-1S-07-0000-0010-0000,JOHNSON ROBERT,called\n');
  t.match(
    await refusalOf(run(['nal', fixture('sdf/SDF11F202501-noheader.csv')])),
    /^RefusedError: .*this looks like an SDF sales file: use `import sdf`/,
    'a header-less SDF by its width',
  );
  t.match(
    await refusalOf(run(['sdf', NAL])),
    /not an SDF sales file: the header lacks SALE_YR, SALE_MO; this looks like a NAL roll file/,
  );
  t.match(
    await refusalOf(run(['nal', fixture('delinquencies/standard-2025.csv')])),
    /this looks like a delinquency list: use `import delinquencies`/,
  );
  t.match(
    await refusalOf(run(['nal', fixture('geometry/alachua-parcels.geojson')])),
    /this looks like a parcel geometry file: use `import parcel-geometry`/,
  );
  t.match(
    await refusalOf(run(['delinquencies', other, '--county', 'liberty'])),
    /not a delinquency list: the header lacks delinquent_amount or total_due; found: Parcel, Owner, Note; nothing/,
    'no kind fits: the header is shown',
  );
  t.same(await Promise.all([checksum(LIBERTY), checksum(ALACHUA)]), before, 'still unchanged');
});

t.test('a first load is not limited, even when it deletes most of what was there', async (t) => {
  const s = await importNal(opts(NAL, 'first'));
  t.match(s.counties, [{ county: 'liberty', deleted: 12, parcel_count: 310, guard: 'first load' }], '12 of 62 deleted');
  t.match(await lastLoad(), { status: 'succeeded', county_ids: [LIBERTY] });
});

t.test('a truncated roll is refused by the shrink guard, and loads with the flag', async (t) => {
  const cut = truncatedNal(121);
  const before = await checksum(LIBERTY);
  t.equal(before.n, 310);
  const r = cli('nal', cut, '--quiet');
  t.equal(r.status, 1);
  t.equal(
    r.stderr,
    'import: would delete 189 of 310 parcels in liberty (61%), over --max-delete-rate 0.05; nothing was changed; ' +
      'pass --max-delete-rate 0.7 if this is intended\n',
  );
  t.same(await checksum(LIBERTY), before, 'no row of Liberty changed');
  t.match(await lastLoad(), { status: 'refused', county_ids: [LIBERTY], message: /^would delete 189 of 310 parcels/ });

  t.match(await refusalOf(run(['nal', cut, '--max-delete-rate', '0.6'])), /^RefusedError: would delete 189/);
  t.same(await checksum(LIBERTY), before, 'a flag below the share still refuses');

  const ok = await run(['nal', cut, '--max-delete-rate', '0.7']);
  t.match(report(ok), /liberty: rows 121, inserted 0, updated 0, deleted 189, parcel_count 121; guard: ok/);
  t.equal((await checksum(LIBERTY)).n, 121);
  // Back to the full roll: an insert of 189 deletes nothing.
  t.match((await importNal(opts(NAL, 'restore'))).counties, [{ inserted: 189, deleted: 0, guard: 'ok' }]);
});

t.test('a roll whose owner column is blank is refused: a key column emptied', async (t) => {
  const lines = readFileSync(NAL, 'utf8').split('\r\n');
  const header = lines[0]!.replace(/^\uFEFF/, '').split(',');
  const owner = header.findIndex((h) => h.toUpperCase() === 'OWN_NAME');
  const blank = join(scratch, 'NAL49-no-owners.csv');
  // The same parcels with OWN_NAME emptied: nothing is deleted, yet every owner would go.
  const rows = lines.slice(1).map((l) => (l.startsWith('49,') && !l.includes('"') ? l.split(',') : null));
  const kept = rows.filter((f): f is string[] => !!f && f.length === header.length);
  for (const f of kept) f[owner] = '';
  writeFileSync(blank, [header.join(','), ...kept.map((f) => f.join(','))].join('\n') + '\n');
  const before = await checksum(LIBERTY);
  await t.rejects(importNal({ ...opts(blank, 'blank'), maxDeleteRate: 0.5 }), {
    name: 'RefusedError',
    message:
      /^would empty owner_name on [\d,]+ of the [\d,]+ parcels in liberty that have it \(\d+%\), over --max-delete-rate 0\.5; nothing was changed/,
  });
  t.same(await checksum(LIBERTY), before);
});

t.test('a dry run changes nothing and prints the counts the real load then has', async (t) => {
  const cut = truncatedNal(280);
  const before = await checksum(LIBERTY);
  t.equal(before.n, 310);
  const loads = (await sql`SELECT 1 FROM core.load_history`).length;
  const dry = await run(['nal', cut, '--dry-run', '--max-delete-rate', '0.1']);
  t.equal(dry.status, 'dry_run');
  t.match(report(dry), /: dry run, nothing changed, in /);
  t.same(await checksum(LIBERTY), before, 'no row changed');
  t.match(await lastLoad(), { status: 'dry_run', county_ids: [LIBERTY] });
  t.equal((await sql`SELECT 1 FROM core.load_history`).length, loads + 1, 'the dry run is recorded, nothing else');

  const real = await run(['nal', cut, '--max-delete-rate', '0.1']);
  t.equal(real.status, 'succeeded');
  const counties = (s: ImportSummary) =>
    report(s)
      .split('\n')
      .filter((l) => l.startsWith('  liberty:'));
  t.same(counties(dry), counties(real), 'the same per-county counts and verdict');
  t.match(counties(real)[0], /deleted 30, parcel_count 280; guard: ok/);

  // A dry run that would be refused answers as the load would: the refusal, exit 1, and still nothing changed.
  const after = await checksum(LIBERTY);
  const refused = cli('nal', truncatedNal(100), '--quiet', '--dry-run');
  t.equal(refused.status, 1);
  t.match(refused.stdout, /liberty: .*deleted 180.*; guard: would delete 180 of 280 parcels in liberty \(64%\)/);
  t.match(refused.stderr, /^import: would delete 180 of 280 parcels in liberty \(64%\), over --max-delete-rate 0\.05/);
  t.same(await checksum(LIBERTY), after);
});

t.test('the documented fixture commands succeed on a fresh database and write nothing into fixtures/', async (t) => {
  const fresh = await createTestDatabase();
  t.teardown(() => fresh.drop());
  const listing = () => readdirSync(join(ROOT, 'fixtures'), { recursive: true }).map(String).sort();
  const before = listing();
  const docs = readFileSync(join(ROOT, 'docs/importing.md'), 'utf8') + readFileSync(join(ROOT, 'README.md'), 'utf8');
  const commands = [...docs.matchAll(/^npm run --silent import -- (.*fixtures\/import\/.*?)(?:\s+#.*)?$/gm)].map((m) =>
    [...m[1]!.matchAll(/"([^"]*)"|(\S+)/g)].map((a) => a[1] ?? a[2]!),
  );
  t.ok(commands.length >= 8, `${commands.length} commands found in the docs`);
  for (const args of commands) {
    const s = await run(args, fresh.ownerUrl);
    t.ok(['succeeded', 'dry_run'].includes(s.status), args.join(' '));
    t.equal(s.rejectsFile, join(ROOT, '.local/imports', `${basename(args[1]!)}.rejects.csv`), 'rejects under .local/');
  }
  t.same(listing(), before, 'fixtures/ holds the same files');
});
