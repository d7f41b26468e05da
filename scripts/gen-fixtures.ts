// Regenerates the committed fixtures from the generator's profiles, byte-identical on every run: `fixtures`
// (fixtures/fixtures.sql) and `import-fixtures` (fixtures/import/; needs ogr2ogr). fixtures/README.md and
// fixtures/import/README.md name the cases.
//   node --import tsx scripts/gen-fixtures.ts [fixtures | import-fixtures]   (both when no profile is named)
import { writeFixtures } from './generate/profiles/fixtures.ts';
import { writeImportFixtures } from './generate/profiles/import-fixtures.ts';

const PROFILES: Record<string, () => string> = {
  fixtures: () => writeFixtures(),
  'import-fixtures': () => writeImportFixtures(),
};
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !(name in PROFILES));
if (unknown.length > 0) {
  console.error(`gen-fixtures: unknown profile ${unknown.join(', ')} (one of ${Object.keys(PROFILES).join(', ')})`);
  process.exit(2);
}
for (const name of wanted.length > 0 ? wanted : Object.keys(PROFILES)) console.log(PROFILES[name]!());
