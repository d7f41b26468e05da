// What the import CLI prints is true: the polygons' progress reaches 100% with an ETA, and the summary's rows per
// second is the progress line's last figure.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createTestDatabase } from '../helpers/db.ts';
import { importNal } from '../../src/importers/nal.ts';
import { fixture, rejectsPath } from './fixture.ts';

const db = await createTestDatabase();
t.teardown(() => db.drop());
const ROOT = new URL('../../', import.meta.url).pathname;

await importNal({
  file: fixture('nal/NAL49F202501.csv'),
  databaseUrl: db.ownerUrl,
  rejects: rejectsPath('out'),
  quiet: true,
});

for (const [kind, file] of [
  ['parcel-geometry', 'geometry/Liberty 49 PIN 2025.zip'],
  ['sdf', 'sdf/SDF49F202501.csv'],
]) {
  t.test(`${kind}: progress to 100%, the same rate in the summary`, async (t) => {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'src/importers/cli.ts'), kind!, fixture(file!)],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 300_000,
        env: { ...process.env, DATABASE_URL: db.ownerUrl },
      },
    );
    t.equal(r.status, 0, r.stderr);
    const progress = r.stderr.split('\n').filter((l) => l.startsWith(`${kind} `) && / rows\/s/.test(l));
    const last = progress.at(-1) ?? '';
    t.match(last, /^\S+ [\d,]+ rows {2}[\d,]+ rows\/s {2}100% ETA 0:00$/, 'the last progress line is at 100%');
    const shown = /rows {2}([\d,]+) rows\/s/.exec(last)?.[1];
    t.match(r.stdout, new RegExp(`; read at ${shown} rows/s\\n`), 'the summary gives the same rate');
  });
}
