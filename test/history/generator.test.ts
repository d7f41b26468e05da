// The generator's roll years (`make data YEARS=3`): every county gets 2024 and 2025 rolls beside 2026, byte for byte
// the same for the same seed; between two years values drift within the documented bounds, an owner differs exactly
// where a sale dated after January 1 of the earlier roll took place (and the SDF lists it), buildings not built yet are
// vacant land, and about 1% of parcels appear (their parent disappears). YEARS=1 writes no older roll.
import t from 'tap';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateState } from '../../scripts/generate/profiles/state.ts';
import { parseCsv } from '../../src/importers/csv.ts';

const root = mkdtempSync(join(tmpdir(), 'history-gen-'));
const quiet = () => {};
const run = (name: string, years: number) =>
  generateState({ parcels: 3000, seed: 'history', out: join(root, name), jobs: 1, years, log: quiet });
const [three, again, one] = [await run('a', 3), await run('b', 3), await run('c', 1)];

type Rows = Map<string, Record<string, string>>;
function read(path: string): Rows {
  const [header, ...lines] = readFileSync(path, 'utf8').trimEnd().split(/\r?\n/);
  const names = parseCsv(header!)!;
  return new Map(
    lines.map((l) => {
      const f = parseCsv(l)!;
      return [f[1]!, Object.fromEntries(names.map((n, i) => [n, f[i]!]))];
    }),
  );
}

t.test('three rolls per county, deterministic; one roll when YEARS=1', async (t) => {
  for (const c of three.counties) {
    t.same(
      c.olderNal?.map((r) => r.year),
      [2025, 2024],
      c.slug,
    );
  }
  for (const c of three.counties.slice(0, 5))
    for (const r of c.olderNal!)
      t.equal(readFileSync(join(root, 'a', r.file), 'utf8'), readFileSync(join(root, 'b', r.file), 'utf8'), r.file);
  t.same(
    again.counties.map((c) => c.olderNal),
    three.counties.map((c) => c.olderNal),
  );
  t.notOk(
    one.counties.some((c) => c.olderNal),
    'no older roll in the manifest',
  );
  t.notOk(
    readdirSync(join(root, 'c', 'NAL')).some((f) => /F20\d\d01\.csv$/.test(f)),
    'no older roll file',
  );
});

t.test('drift, owners and sales, new and vanished parcels between 2025 and 2026', async (t) => {
  let compared = 0;
  let ownerChanges = 0;
  let appeared = 0;
  let vanishedParents = 0;
  const problems: string[] = [];
  for (const c of three.counties) {
    const newest = read(join(root, 'a', c.files.nal));
    const older = read(join(root, 'a', c.olderNal![0]!.file));
    const soldSince2025 = new Set(
      readFileSync(join(root, 'a', c.files.sdf), 'utf8')
        .split(/\r?\n/)
        .slice(1)
        .map((l) => parseCsv(l))
        .filter((f) => f && Number(f[16]) >= 2025) // SALE_YR: after January 1 of the 2025 roll
        .map((f) => f![1]!),
    );
    for (const [id, now] of newest) {
      const was = older.get(id);
      if (!was) {
        appeared++;
        if (!older.has(`${id}R`)) problems.push(`${id}: new in 2026 without a parent in 2025`);
        continue;
      }
      compared++;
      if (was.ASMNT_YR !== '2025') problems.push(`${id}: ASMNT_YR ${was.ASMNT_YR}`);
      const slotSold = [now.SALE_YR1, now.SALE_YR2].some((y) => Number(y || 0) >= 2025);
      if ((was.OWN_NAME !== now.OWN_NAME) !== slotSold) problems.push(`${id}: owner change without its sale`);
      if (was.OWN_NAME !== now.OWN_NAME) {
        ownerChanges++;
        if (!soldSince2025.has(id)) problems.push(`${id}: owner changed but the SDF has no sale since 2025`);
      }
      const builtLater = Number(now.ACT_YR_BLT || 0) >= 2025;
      if (builtLater) {
        if (was.TOT_LVG_AREA !== '' || was.DOR_UC === now.DOR_UC) problems.push(`${id}: built later but not vacant`);
      } else if (Number(was.JV) > 0) {
        const ratio = Number(now.JV) / Number(was.JV);
        if (ratio < 0.849 || ratio > 1.251) problems.push(`${id}: JV moved by ${ratio}`);
      }
    }
    for (const id of older.keys()) if (id.endsWith('R') && !newest.has(id)) vanishedParents++;
  }
  t.same(problems.slice(0, 5), [], 'every parcel follows the rules');
  t.ok(compared > 2500, `${compared} parcels in both years`);
  t.ok(ownerChanges > 0, `${ownerChanges} owners changed`);
  t.ok(appeared > 0 && appeared < 100, `${appeared} parcels new in 2026`);
  t.equal(vanishedParents, appeared, 'each new parcel had a parent that is gone');
});
