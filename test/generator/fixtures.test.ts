// The generator's `fixtures` and `import-fixtures` profiles reproduce the committed fixtures/ byte for byte (after
// changing a profile, regenerate with scripts/gen-fixtures.ts). The State Plane shapefile zip is compared by its
// entry names only: ogr2ogr writes it, and its bytes depend on the installed GDAL version. No database.
import t from 'tap';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES_DIR, writeFixtures } from '../../scripts/generate/profiles/fixtures.ts';
import { writeImportFixtures } from '../../scripts/generate/profiles/import-fixtures.ts';

const SHAPEFILE_ZIP = join('import', 'geometry', 'Liberty 49 PIN 2025.zip');

const out = mkdtempSync(join(tmpdir(), 'fixtures-'));
t.teardown(() => rmSync(out, { recursive: true, force: true }));
writeFixtures(out);
writeImportFixtures(join(out, 'import'));

/**
 * The hand-written files of fixtures/, which no profile writes: the READMEs, the older roll year (history.sql) and
 * Stripe's events and API description (fixtures/stripe/, docs/billing.md).
 */
const handWritten = (file: string) =>
  file.endsWith('README.md') || file === 'history.sql' || file.startsWith('stripe/');

/** Generated data files below dir (relative paths, sorted). */
const dataFiles = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length).replace(/^\//, ''))
    .filter((file) => !handWritten(file))
    .sort();

/** The entry names of a zip (without an archive comment), read from its central directory. */
const zipEntries = (data: Buffer): string[] => {
  const eocd = data.length - 22;
  const names: string[] = [];
  for (let i = 0, at = data.readUInt32LE(eocd + 16); i < data.readUInt16LE(eocd + 10); i++) {
    const nameLength = data.readUInt16LE(at + 28);
    names.push(data.subarray(at + 46, at + 46 + nameLength).toString());
    at += 46 + nameLength + data.readUInt16LE(at + 30) + data.readUInt16LE(at + 32);
  }
  return names;
};

const files = dataFiles(out);
t.same(files, dataFiles(FIXTURES_DIR), 'the profiles write exactly the committed files');
for (const file of files) {
  const generated = readFileSync(join(out, file));
  const committed = readFileSync(join(FIXTURES_DIR, file));
  if (file === SHAPEFILE_ZIP) t.same(zipEntries(generated), zipEntries(committed), `${file}: the same entries`);
  else t.ok(generated.equals(committed), `${file} is byte-identical`);
}
