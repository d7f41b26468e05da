// Matching against the exhaustive definition: after each real import, the pairs recorded equal every saved search
// run by the search endpoint itself over the rows the import changed, less the records that were in its result
// before the change and those it matched before (each pair once). Re-importing the same file and a rolled-back
// import record nothing. Matching runs after the import commits, one import at a time: a matching that is rolled
// back (a worker that dies) leaves its import queued, and two matchers at once take one import each.
import t, { type Test } from 'tap';
import postgres from 'postgres';
import { buildTestApp } from '../helpers/app.ts';
import { FAST, api } from '../webhooks/helpers.ts';
import { importList, matchQueued, pairsOfLoad, resultIds, type Row } from './helpers.ts';

const ctx = await buildTestApp(t, FAST);
const { db } = ctx;
const sql = db.sql;
const { key } = await ctx.newClient('lead_feed');
const m = api(ctx, key);

// The searches: counties, amounts, status, owner, year, and one the import cannot touch.
const SEARCHES: Record<string, string>[] = [
  { county: 'liberty,gulf', min_due: '3000', status: 'delinquent' },
  { county: 'liberty' },
  { min_due: '5000' },
  { county: 'broward' },
  { tax_year: '2031', owner: 'smith' },
  { county: 'gulf', max_due: '1000' },
  { status: 'certificate_sold', min_due: '100', max_due: '8000' },
];
const saved: { id: string; params: Record<string, string> }[] = [];
for (const [i, params] of SEARCHES.entries()) {
  const res = await m.post('/v1/saved-searches', { name: `s${i}`, resource: 'tax_delinquencies', params });
  if (res.statusCode !== 201) throw new Error(res.body);
  saved.push({ id: res.json().data.id, params });
}

const snapshot = async () =>
  new Map(
    (
      await sql<{ id: string; row: string }[]>`
      SELECT id::text, to_jsonb(d)::text AS row FROM core.tax_delinquencies d WHERE county_id IN (23, 39)`
    ).map((r) => [r.id, r.row]),
  );
const recorded = new Set<string>();

/** Imports, then checks the load's pairs against the exhaustive definition; returns the load id. */
async function importAndCheck(t: Test, county: string, year: number, rows: Row[]) {
  const before = await snapshot();
  const resultsBefore = await Promise.all(saved.map((s) => resultIds(ctx, key, s.params)));
  const summary = await importList(db, county, year, rows);
  const after = await snapshot();
  const changed = [...after].filter(([id, row]) => before.get(id) !== row).map(([id]) => id);
  const expected: string[] = [];
  for (const [i, s] of saved.entries()) {
    const now = await resultIds(ctx, key, s.params);
    for (const id of changed) {
      const pair = `${s.id}:${id}`;
      if (now.has(id) && !resultsBefore[i]!.has(id) && !recorded.has(pair)) expected.push(pair);
    }
  }
  expected.sort();
  const got = await pairsOfLoad(sql, summary.loadId);
  t.same(got, expected, `the pairs of the load are every search over the ${changed.length} changed rows`);
  for (const p of got) recorded.add(p);
  return { summary, got, changed };
}

const rowsA: Row[] = Array.from({ length: 60 }, (_, i) => ({
  parcel: `L-${i}`,
  due: 500 + i * 150,
  status: i % 4 === 0 ? 'certificate_sold' : 'delinquent',
  owner: i % 5 === 0 ? `SMITH ${i}` : `JONES ${i}`,
}));

t.test('a first list: new records enter the searches they match', async (t) => {
  const { got } = await importAndCheck(t, 'liberty', 2031, rowsA);
  t.ok(got.length > 50, `${got.length} pairs`);
});

t.test('changes: only records that newly enter a result are new matches', async (t) => {
  // amounts move across thresholds both ways, statuses change, some records go and new ones come
  const rowsB: Row[] = rowsA
    .filter((_, i) => i % 7 !== 3)
    .map((r, i): Row => ({
      ...r,
      due: i % 3 === 0 ? r.due + 2600 : i % 3 === 1 ? Math.max(50, r.due - 2600) : r.due,
      status: i % 6 === 0 ? 'certificate_sold' : r.status,
    }))
    .concat(
      Array.from({ length: 10 }, (_, i): Row => ({
        parcel: `L-new-${i}`,
        due: 9000 + i,
        owner: 'SMITH NEW',
        status: 'delinquent',
      })),
    );
  const { got, changed } = await importAndCheck(t, 'liberty', 2031, rowsB);
  t.ok(changed.length > 20 && got.length > 0, `${got.length} pairs over ${changed.length} changed rows`);
  // back to the first list: records leave and re-enter, and none is matched a second time
  const again = await importAndCheck(t, 'liberty', 2031, rowsA);
  t.ok(again.changed.length > 20, 'the list changed back');
});

t.test('another county: only the searches that name it or none', async (t) => {
  const rows: Row[] = Array.from({ length: 40 }, (_, i) => ({ parcel: `G-${i}`, due: 200 + i * 250 }));
  const { got } = await importAndCheck(t, 'gulf', 2031, rows);
  const searchesHit = new Set(got.map((p) => p.split(':')[0]));
  t.notOk(searchesHit.has(saved[1]!.id), 'the Liberty-only search gets nothing from Gulf');
  t.ok(searchesHit.has(saved[5]!.id), 'the Gulf search does');
});

t.test('the same file again, and a rolled-back import, record nothing', async (t) => {
  const count = async () => (await sql`SELECT count(*)::int AS n FROM saved.matches`)[0]!.n as number;
  const n = await count();
  const same = await importList(db, 'liberty', 2031, rowsA);
  t.same(await pairsOfLoad(sql, same.loadId), [], 'the same list: no row changed, no match');
  const fresh: Row[] = Array.from({ length: 20 }, (_, i) => ({ parcel: `R-${i}`, due: 9999 }));
  await t.rejects(
    importList(db, 'liberty', 2032, fresh, {
      beforeCommit: async (tx) => {
        const [r] = await tx`SELECT count(*)::int AS n FROM saved.queued_keys`;
        t.equal(r!.n, 20, 'its records were queued for matching inside the import');
        throw new Error('rolled back on purpose');
      },
    }),
    /rolled back on purpose/,
  );
  t.equal(await count(), n, 'a rolled-back import leaves no match');
  t.same(await sql`SELECT load_id FROM saved.queued_loads`, [], 'and nothing queued');
  const redo = await importList(db, 'liberty', 2032, fresh);
  t.ok((await pairsOfLoad(sql, redo.loadId)).length >= 20, 'importing it for real records them');
  t.equal(await count(), n + (await pairsOfLoad(sql, redo.loadId)).length, 'once each');
});

t.test('a search whose client loses the plan is not matched', async (t) => {
  const other = await ctx.newClient('growth');
  const res = await api(ctx, other.key).post('/v1/saved-searches', {
    name: 'x',
    resource: 'tax_delinquencies',
    params: { county: 'liberty' },
  });
  t.equal(res.statusCode, 201);
  await sql`UPDATE accounts.clients SET plan = 'developer' WHERE id = ${other.client.id}`;
  const s = await importList(db, 'liberty', 2033, [{ parcel: 'X-1', due: 10 }]);
  const pairs = await pairsOfLoad(sql, s.loadId);
  t.notOk(
    pairs.some((p) => p.startsWith(res.json().data.id)),
    'no pair for the downgraded client',
  );
  t.ok(
    pairs.some((p) => p.startsWith(saved[1]!.id)),
    'the Lead Feed client still matches',
  );
});

t.test('matching after the commit: a rolled-back matching leaves the import queued, matched once later', async (t) => {
  const rows: Row[] = Array.from({ length: 15 }, (_, i) => ({ parcel: `Q-${i}`, due: 4000 + i }));
  const load = await importList(db, 'liberty', 2034, rows, { match: false });
  t.same(
    (await sql`SELECT load_id::text FROM saved.queued_loads`).map((r) => r.load_id),
    [String(load.loadId)],
    'the committed import waits in the queue',
  );
  t.same(await pairsOfLoad(sql, load.loadId), [], 'with no match yet');
  await t.rejects(
    sql.begin(async (tx) => {
      const [r] = await tx<{ load_id: string }[]>`SELECT load_id::text FROM saved.match_next()`;
      t.equal(r!.load_id, String(load.loadId), 'a matcher takes it');
      const [m] = await tx`SELECT count(*)::int AS n FROM saved.matches WHERE load_id = ${load.loadId}`;
      t.ok(m!.n >= 15, 'and records its matches in its own transaction');
      throw new Error('the matcher dies');
    }),
    /the matcher dies/,
  );
  t.equal((await sql`SELECT count(*)::int AS n FROM saved.queued_loads`)[0]!.n, 1, 'still queued');
  t.same(await matchQueued(sql), [String(load.loadId)], 'the next matcher takes it');
  const pairs = await pairsOfLoad(sql, load.loadId);
  t.ok(pairs.length >= 15, `${pairs.length} pairs`);
  t.equal(new Set(pairs).size, pairs.length, 'each once');
  t.same(await matchQueued(sql), [], 'nothing is left to match');
  t.same(
    await sql`SELECT load_id FROM saved.queued_keys UNION ALL SELECT load_id FROM saved.queued_old`,
    [],
    'or kept',
  );
});

t.test('two matchers at once take one import each, oldest first, and record each pair once', async (t) => {
  const a = await importList(db, 'liberty', 2035, [{ parcel: 'P-1', due: 6000 }], { match: false });
  const b = await importList(db, 'gulf', 2035, [{ parcel: 'P-2', due: 500 }], { match: false });
  const other = postgres(db.ownerUrl, { max: 1, onnotice: () => {} });
  t.teardown(() => other.end());
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let took!: () => void;
  const taken1 = new Promise<void>((resolve) => (took = resolve));
  // the first matcher holds its transaction open; the second starts meanwhile and must wait for its commit
  const first = sql.begin(async (tx) => {
    const [r] = await tx<{ load_id: string }[]>`SELECT load_id::text FROM saved.match_next()`;
    took();
    await held;
    return r!.load_id;
  });
  await taken1;
  let secondDone = false;
  const second = other
    .begin(async (tx) => {
      const [r] = await tx<{ load_id: string }[]>`SELECT load_id::text FROM saved.match_next()`;
      return r!.load_id;
    })
    .finally(() => (secondDone = true));
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.notOk(secondDone, 'the second matcher waits while the first is open');
  release();
  const taken = await Promise.all([first, second]);
  t.same(taken, [String(a.loadId), String(b.loadId)], 'the oldest import first, the other after its commit');
  for (const load of [a, b]) {
    const pairs = await pairsOfLoad(sql, load.loadId);
    t.ok(pairs.length > 0, `load ${load.loadId}: ${pairs.length} pairs`);
    t.equal(new Set(pairs).size, pairs.length, 'each once');
  }
  t.same(await matchQueued(sql), [], 'nothing is left to match');
});
