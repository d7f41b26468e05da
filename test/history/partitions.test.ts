// Two loads side by side may need the same roll year's partition (make load-data loads two counties at once): each
// ensure_roll_partition call, run at the same moment on connections of its own, gets its county's leaf, and the year
// partition is made once.
import t from 'tap';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/db.ts';

const db = await createTestDatabase();
t.teardown(() => db.drop());

t.test('concurrent loads of one new roll year each get their partition', async (t) => {
  const year = 2031;
  const counties = [1, 2, 3, 4];
  const connections = counties.map(() => postgres(db.ownerUrl, { max: 1, onnotice: () => {} }));
  t.teardown(() => Promise.all(connections.map((c) => c.end())));
  // each connection opens a transaction and waits for the others, so the calls start together
  const leaves = await Promise.all(
    connections.map((sql, i) =>
      sql.begin(async (tx) => {
        await tx`SELECT pg_sleep(0.2)`;
        const [row] = await tx<{ leaf: string }[]>`
          SELECT ingest.ensure_roll_partition(${year}::smallint, ${counties[i]!}::smallint)::text AS leaf`;
        return row!.leaf;
      }),
    ),
  );
  t.same(
    leaves,
    counties.map((c) => `core.parcel_rolls_${year}_${c}`),
    'every load got its leaf',
  );
  const [row] = await db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = ${`core.parcel_rolls_${year}`}::regclass`;
  t.equal(row!.n, counties.length, 'under one year partition');
});
