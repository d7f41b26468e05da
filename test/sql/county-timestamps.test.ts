// A county's createdAt is never later than its updatedAt or lastImportAt (migration 1764000000600): a row cannot be
// changed, nor imported into, before it exists, so an earlier change time moves the creation time back to it.
import t from 'tap';
import { createTestDatabase } from '../helpers/db.ts';

const db = await createTestDatabase();
t.teardown(db.drop);

type Row = { countySlug: string; createdAt: string; updatedAt: string; lastImportAt: string | null };

t.test('api.list_counties: createdAt <= updatedAt and <= lastImportAt for every county', async (t) => {
  const rows = await db.sql<
    Row[]
  >`SELECT "countySlug", "createdAt", "updatedAt", "lastImportAt" FROM api.list_counties()`;
  t.equal(rows.length, 67);
  t.ok(
    rows.some((r) => r.lastImportAt !== null),
    'the fixtures imported into some counties (dated before the reference rows were made)',
  );
  for (const r of rows) {
    t.ok(r.createdAt <= r.updatedAt, `${r.countySlug}: ${r.createdAt} <= ${r.updatedAt}`);
    if (r.lastImportAt) t.ok(r.createdAt <= r.lastImportAt, `${r.countySlug}: created before its import`);
  }
});

t.test('an update dated before the creation time moves the creation time back', async (t) => {
  const [before] = await db.sql<{ created_at: Date }[]>`SELECT created_at FROM core.counties WHERE slug = 'baker'`;
  const earlier = new Date(before!.created_at.getTime() - 86_400_000);
  await db.sql`UPDATE core.counties SET updated_at = ${earlier} WHERE slug = 'baker'`;
  const [row] = await db.sql<Row[]>`SELECT "createdAt", "updatedAt" FROM api.get_county(p_county => 'baker')`;
  t.equal(row!.createdAt, earlier.toISOString().replace('.000Z', 'Z'));
  t.equal(row!.createdAt, row!.updatedAt);
  const later = new Date(before!.created_at.getTime() + 86_400_000);
  await db.sql`UPDATE core.counties SET updated_at = ${later} WHERE slug = 'baker'`;
  const [again] = await db.sql<Row[]>`SELECT "createdAt" FROM api.get_county(p_county => 'baker')`;
  t.equal(again!.createdAt, row!.createdAt, 'a later change leaves the creation time alone');
});

t.test('the constraint refuses a creation time after the update time', async (t) => {
  await db.sql`ALTER TABLE core.counties DISABLE TRIGGER counties_created_first`;
  t.teardown(() => db.sql`ALTER TABLE core.counties ENABLE TRIGGER counties_created_first`);
  await t.rejects(
    db.sql`UPDATE core.counties SET created_at = updated_at + interval '1 day' WHERE slug = 'bay'`,
    /counties_created_first/,
  );
});
