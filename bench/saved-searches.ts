// Saved searches: what matching costs an import. 10,000 saved delinquency searches spread over the 67 counties
// (one or two counties each, 5% statewide; amounts, status and tax year varied), then a delinquency list of 10
// counties that changes 50,000 records, imported with the searches active and with none (their client on a plan
// without saved searches), alternating in one run (ABBA); after each import its matching, as a webhook worker runs it
// after the commit (saved.match_next), timed on its own. Then the delivery check: a fresh year of 50,000 records
// (every one new) imported with the searches, its pairs compared with every search run by the endpoint's own
// builder over the new rows, and the records of its saved_search.matched events with the pairs. Between them, where
// the matching's time goes: one more change of every record in a rolled-back transaction, queued and matched, each
// step of saved.match_next timed by auto_explain (with the plan of the statement that pairs records and searches).
// Writes bench/results/saved-searches.md. Uses its own database, cloned from the template: a test template, or a
// copy of a bench state (bench/state.ts) with sql/ applied, to measure at that scale. Or, with --in-place, a database
// that cannot be copied (the full state): the run works in it and removes what it added however it ends
// (removeBenchData; docs/saved-searches.md#bench-in-place says what is not restored).
//   node --import tsx bench/saved-searches.ts [--records 50000] [--searches 10000] [--rounds 3] [--template florida_test_saved]
//   node --import tsx bench/saved-searches.ts [--records 50000] [--searches 10000] [--rounds 3] --in-place <database>
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { ownerDatabaseUrl, withDatabase } from '../src/db-url.ts';
import { importDelinquencies, STANDARD_COLUMNS } from '../src/importers/delinquencies.ts';
import { writeReport } from './report.ts';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '50000' },
    searches: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' },
    template: { type: 'string', default: process.env.TEST_TEMPLATE_DB || 'florida_test_saved' },
    database: { type: 'string', default: 'florida_bench_saved' },
    'in-place': { type: 'string' },
    report: { type: 'string', default: new URL('results/saved-searches.md', import.meta.url).pathname },
  },
});
const IN_PLACE = values['in-place'];
const RECORDS = Number(values.records);
const SEARCHES = Number(values.searches);
const ROUNDS = Number(values.rounds);
const COUNTIES = ['baker', 'bay', 'bradford', 'calhoun', 'dixie', 'franklin', 'gulf', 'holmes', 'liberty', 'union'];
const YEAR = 2019;
const FRESH_YEAR = 2020;
// what marks the run's own rows in a database it works in place: its client's email and its lists' file names
const TAG = 'bench-saved-searches';
const EMAIL = `${TAG}@example.com`;

const base = ownerDatabaseUrl(process.env);
const url = withDatabase(base, IN_PLACE ?? values.database!);

/** A deterministic generator (mulberry32), so that every run measures the same searches and records. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** One list of RECORDS records over the counties for a year; version v changes every amount and status. */
function writeList(dir: string, name: string, year: number, v: number): string {
  const file = join(dir, name);
  const lines = [STANDARD_COLUMNS.join(',')];
  for (let i = 0; i < RECORDS; i++) {
    const due = 100 + ((i * 7919) % 12000) + v * 1500;
    lines.push(
      [
        COUNTIES[i % COUNTIES.length],
        `SV-${String(i).padStart(7, '0')}`,
        year,
        (i + v) % 3 === 0 ? 'certificate_sold' : 'delinquent',
        (due * 0.9).toFixed(2),
        due.toFixed(2),
        `${year}-${String(i).padStart(6, '0')}`,
        '',
        `OWNER ${i % 5000}`,
        `${i} BENCH AVE`,
        'LienHub',
        '',
        '',
        '',
        '',
      ].join(','),
    );
  }
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** Each statement of saved.match_next that auto_explain reported (milliseconds), named by what it does. */
const STEPS: [string, RegExp][] = [
  ["the import's queued keys read back into the matching transaction", /INSERT INTO pg_temp\.saved_keys/],
  ['pairs: searches x changed records through the index', /CREATE TEMP TABLE saved_pairs/],
  ['full predicate on the pairs of searches beyond the prefilter', /DELETE FROM pg_temp\.saved_pairs/],
  [
    'matches recorded: a row per record (its searches), a row per search (its match ids)',
    /INSERT INTO saved\.match_records/,
  ],
  ['saved_search.matched events (100 match ids each)', /INSERT INTO webhooks\.events/],
  ["the import's queue emptied", /DELETE FROM saved\.queued/],
];

/** How many (search, record) matches a load recorded: its searches' match ids (the load's rows, by its index). */
async function matchesOf(sql: postgres.Sql | postgres.TransactionSql, loadId: number) {
  const [m] = await sql<{ n: number }[]>`
    SELECT coalesce(sum(cardinality(match_ids)), 0)::int AS n FROM saved.search_matches WHERE load_id = ${loadId}`;
  return m!.n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Removes everything a run added to the database (or left by a run that was killed): its delinquency records (the
 * bench's tax years in its counties) and their sources, its loads with their matches, queued keys, events, outbox
 * rows and staging rows, its client with its searches, endpoints and deliveries. One transaction.
 */
async function removeBenchData(sql: postgres.Sql) {
  await sql.begin(async (tx) => {
    const loads = tx`SELECT id FROM core.load_history WHERE file_name LIKE ${TAG + '-%'}`;
    const counties = tx`SELECT id FROM core.counties WHERE slug = ANY (${COUNTIES})`;
    await tx`DELETE FROM core.tax_delinquencies WHERE county_id IN (${counties}) AND tax_year IN (${YEAR}, ${FRESH_YEAR})`;
    await tx`DELETE FROM core.tax_delinquency_sources
              WHERE county_id IN (${counties}) AND tax_year IN (${YEAR}, ${FRESH_YEAR})`;
    await tx`DELETE FROM saved.search_matches WHERE load_id IN (${loads})`;
    await tx`DELETE FROM saved.match_records WHERE load_id IN (${loads})`;
    await tx`DELETE FROM saved.queued_keys WHERE load_id IN (${loads})`;
    await tx`DELETE FROM saved.queued_old WHERE load_id IN (${loads})`;
    await tx`DELETE FROM saved.queued_loads WHERE load_id IN (${loads})`;
    await tx`DELETE FROM webhooks.events WHERE load_id IN (${loads})`;
    await tx`DELETE FROM webhooks.outbox WHERE load_id IN (${loads})`;
    await tx`DELETE FROM ingest.delinquency_stage WHERE load_id IN (${loads})`;
    await tx`DELETE FROM accounts.clients WHERE email = ${EMAIL}`;
    await tx`DELETE FROM core.load_history WHERE id IN (${loads})`;
  });
}

/** Opens the run's database: a fresh clone of the template, or (--in-place) the given one, checked and cleaned. */
async function openDatabase() {
  if (!IN_PLACE) {
    const admin = postgres(withDatabase(base, 'postgres'), { max: 1, onnotice: () => {} });
    await admin.unsafe(`DROP DATABASE IF EXISTS "${values.database}" WITH (FORCE)`);
    await admin.unsafe(`CREATE DATABASE "${values.database}" TEMPLATE "${values.template}"`);
    await admin.end();
    return postgres(url, { max: 2, onnotice: () => {} });
  }
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  // a killed run's client marks its rows as the bench's; otherwise the bench's years must be absent
  const [left] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM accounts.clients WHERE email = ${EMAIL}`;
  if (left!.n > 0) {
    console.log(`removing what an earlier in-place run left (client ${EMAIL})`);
    await removeBenchData(sql);
  }
  const [held] = await sql<{ records: boolean; sources: boolean }[]>`
    SELECT EXISTS (SELECT 1 FROM core.tax_delinquencies d JOIN core.counties c ON c.id = d.county_id
                    WHERE c.slug = ANY (${COUNTIES}) AND d.tax_year IN (${YEAR}, ${FRESH_YEAR})) AS records,
           EXISTS (SELECT 1 FROM core.tax_delinquency_sources d JOIN core.counties c ON c.id = d.county_id
                    WHERE c.slug = ANY (${COUNTIES}) AND d.tax_year IN (${YEAR}, ${FRESH_YEAR})) AS sources`;
  if (held!.records || held!.sources) {
    await sql.end();
    throw new Error(
      `${IN_PLACE} holds tax years ${YEAR}/${FRESH_YEAR} in the bench's counties (${COUNTIES.join(', ')}): ` +
        'the bench would change and then delete them; refusing to run in place',
    );
  }
  return sql;
}

async function main() {
  const started = new Date();
  const sql = await openDatabase();
  try {
    await scenario(sql, started);
  } finally {
    if (IN_PLACE) {
      console.log(`removing the bench's rows from ${IN_PLACE}`);
      await removeBenchData(sql);
    }
    await sql.end();
  }
}

async function scenario(sql: postgres.Sql, started: Date) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-saved-'));
  const listA = writeList(dir, `${TAG}-a.csv`, YEAR, 0);
  const listB = writeList(dir, `${TAG}-b.csv`, YEAR, 1);
  const fresh = writeList(dir, `${TAG}-fresh.csv`, FRESH_YEAR, 0);
  const run = (file: string) =>
    importDelinquencies({ file, databaseUrl: url, rejects: join(dir, 'rejects.csv'), quiet: true, maxDeleteRate: 1 });
  /** What a webhook worker does after the import's commit: every queued import matched (saved.match_next); seconds. */
  const match = async () => {
    const t0 = performance.now();
    for (;;) {
      const [r] = await sql<{ load_id: string | null }[]>`SELECT load_id FROM saved.match_next()`;
      if (r!.load_id === null) return (performance.now() - t0) / 1000;
    }
  };

  // the searches, as POST /v1/saved-searches stores them (args for the builder, the counties that prefilter)
  const [client] = await sql<{ id: string }[]>`
    INSERT INTO accounts.clients (name, email, plan) VALUES ('Bench', ${EMAIL}, 'enterprise') RETURNING id`;
  const [endpoint] = await sql<{ id: string }[]>`
    INSERT INTO webhooks.endpoints (id, client_id, url, events, secret_box)
    VALUES (gen_random_uuid(), ${client!.id}, 'https://hooks.example.com/', '{county.data_refreshed}', '\\x00')
    RETURNING id`;
  const slugs = (await sql<{ slug: string }[]>`SELECT slug FROM core.counties ORDER BY id`).map((r) => r.slug);
  const rnd = random(1);
  const rows = Array.from({ length: SEARCHES }, (_, i) => {
    // a list builder's search: one or two counties (2% statewide), a band of amounts due, often a status or year
    const args: Record<string, unknown> = {};
    if (rnd() > 0.02) {
      args.p_county = Array.from({ length: rnd() > 0.6 ? 2 : 1 }, () => slugs[Math.floor(rnd() * slugs.length)]!);
    }
    const low = 100 * Math.floor(rnd() * 130);
    args.p_min_due = low;
    args.p_max_due = low + 100 * (1 + Math.floor(rnd() * 5));
    if (rnd() < 0.5) args.p_status = rnd() < 0.5 ? 'delinquent' : 'certificate_sold';
    if (rnd() < 0.3) args.p_tax_year = rnd() < 0.5 ? YEAR : FRESH_YEAR;
    return { id: randomUUID(), name: `s${i}`, args };
  });
  for (let i = 0; i < rows.length; i += 1000) {
    const chunk = rows.slice(i, i + 1000).map((s) => ({
      id: s.id,
      client_id: client!.id,
      name: s.name,
      resource: 'tax_delinquencies',
      params: {},
      args: s.args,
      webhook_endpoint_ids: [endpoint!.id],
      unsubscribe_token: s.id,
    }));
    await sql`
      INSERT INTO saved.searches (id, client_id, name, resource, params, args, county_ids, webhook_endpoint_ids, unsubscribe_token)
      SELECT x.id, x.client_id, x.name, x.resource, x.params, x.args, saved.county_ids_of(x.args),
             x.webhook_endpoint_ids, x.unsubscribe_token
        FROM jsonb_to_recordset(${sql.json(chunk as never)}::jsonb) AS x(id uuid, client_id uuid, name text,
             resource text, params jsonb, args jsonb, webhook_endpoint_ids uuid[], unsubscribe_token text)`;
  }
  // the matches and events of the bench's earlier imports (only the bench's: the database may be a state in place)
  const clearMatches = async () => {
    const loads = sql`SELECT id FROM core.load_history WHERE file_name LIKE ${TAG + '-%'}`;
    await sql`DELETE FROM saved.search_matches WHERE load_id IN (${loads})`;
    await sql`DELETE FROM saved.match_records WHERE load_id IN (${loads})`;
    await sql`DELETE FROM webhooks.events WHERE load_id IN (${loads})`;
  };
  const setSearches = (on: boolean) =>
    sql`UPDATE accounts.clients SET plan = ${on ? 'enterprise' : 'developer'} WHERE id = ${client!.id}`;
  const perCounty = await sql<{ n: number }[]>`
    SELECT (SELECT count(*) FROM saved.searches s
             WHERE s.client_id = ${client!.id} AND (s.county_ids IS NULL OR c.id = ANY (s.county_ids)))::int AS n
      FROM core.counties c WHERE c.slug = ANY (${COUNTIES})`;
  const [state] = await sql<{ parcels: number; delinquencies: number }[]>`
    SELECT (SELECT count(*) FROM core.parcels)::int AS parcels,
           (SELECT count(*) FROM core.tax_delinquencies)::int AS delinquencies`;

  process.stdout.write(`first load of ${RECORDS} records (not measured)… `);
  await setSearches(false);
  await run(listA);
  await match();
  console.log('done');
  const runs: { searches: boolean; seconds: number; merge: number; match: number; changed: number; matches: number }[] =
    [];
  let next = listB;
  const order = Array.from({ length: ROUNDS }, (_, i) => (i % 2 === 0 ? [false, true] : [true, false])).flat();
  for (const on of order) {
    await clearMatches();
    await sql`VACUUM ANALYZE core.tax_delinquencies, saved.match_records, saved.search_matches`;
    await setSearches(on);
    const s = await run(next);
    const matching = await match();
    next = next === listA ? listB : listA;
    const changed = s.counties.reduce((a, c) => a + Number(c.updated) + Number(c.inserted), 0);
    const n = await matchesOf(sql, s.loadId);
    runs.push({ searches: on, seconds: s.seconds, merge: s.phases.merge, match: matching, changed, matches: n });
    console.log(
      `import ${on ? 'with' : 'without'} searches: ${s.seconds.toFixed(2)} s (merge ${s.phases.merge.toFixed(2)} s), then matching ${matching.toFixed(2)} s, ${changed} changed, ${n} matches`,
    );
  }
  const withRuns = runs.filter((r) => r.searches);
  const pairRatios = Array.from({ length: ROUNDS }, (_, i) => {
    const [a, b] = [runs[2 * i]!, runs[2 * i + 1]!];
    return (a.searches ? a.seconds : b.seconds) / (a.searches ? b.seconds : a.seconds);
  });
  const ratio = median(pairRatios);
  const matchSeconds = median(withRuns.map((r) => r.match));
  // the whole work, the import and then its matching, with / without (the import alone without: nothing is queued)
  const workRatios = Array.from({ length: ROUNDS }, (_, i) => {
    const [a, b] = [runs[2 * i]!, runs[2 * i + 1]!];
    const [w, wo] = a.searches ? [a, b] : [b, a];
    return (w.seconds + w.match) / (wo.seconds + wo.match);
  });

  const steps = await profile(sql, client!.id);

  // the delivery check: every record new, so the exhaustive pairs are every search's result over the new rows
  await clearMatches();
  await setSearches(true);
  const f = await run(fresh);
  await match();
  await sql`CREATE TEMP TABLE expected (search_id uuid, record_id bigint)`;
  const benchCounties = (await sql<{ id: number }[]>`SELECT id FROM core.counties WHERE slug = ANY (${COUNTIES})`).map(
    (r) => r.id,
  );
  for (const s of await sql<{ id: string; w: string }[]>`
      SELECT id, saved.where_of(resource, args) AS w FROM saved.searches WHERE client_id = ${client!.id}`) {
    await sql.unsafe(
      `INSERT INTO expected SELECT '${s.id}'::uuid, d.id FROM core.tax_delinquencies d
        WHERE d.tax_year = ${FRESH_YEAR} AND d.county_id = ANY ('{${benchCounties.join(',')}}') AND (${s.w})`,
    );
  }
  const [check] = await sql<
    { expected: number; found: number; missing: number; extra: number; delivered: number; distinct_delivered: number }[]
  >`
    WITH found AS (SELECT m.search_id, r.record_id
                     FROM saved.search_matches m CROSS JOIN LATERAL unnest(m.match_ids) AS u(id)
                     JOIN saved.match_records r ON r.id = u.id
                    WHERE m.load_id = ${f.loadId}),
         sent AS (SELECT (e.data->>'saved_search_id') AS sid, (m->'record'->>'id')::bigint AS record_id
                    FROM webhooks.events e, json_array_elements(webhooks.event_data(e)->'matches') m
                   WHERE e.type = 'saved_search.matched' AND e.load_id = ${f.loadId})
    SELECT (SELECT count(*) FROM expected)::int AS expected, (SELECT count(*) FROM found)::int AS found,
           (SELECT count(*) FROM (SELECT * FROM expected EXCEPT SELECT * FROM found) x)::int AS missing,
           (SELECT count(*) FROM (SELECT * FROM found EXCEPT SELECT * FROM expected) x)::int AS extra,
           (SELECT count(*) FROM sent)::int AS delivered,
           (SELECT count(DISTINCT (sid, record_id)) FROM sent)::int AS distinct_delivered`;
  const [events] = await sql<{ n: number; largest: number }[]>`
    SELECT count(*)::int AS n, max(json_array_length(webhooks.event_data(e)->'matches'))::int AS largest
      FROM webhooks.events e WHERE type = 'saved_search.matched' AND load_id = ${f.loadId}`;

  const fmt = (x: number) => x.toFixed(2);
  const report = `# Saved searches: the cost of matching to an import

Generated by \`node --import tsx bench/saved-searches.ts --records ${RECORDS} --searches ${SEARCHES} --rounds ${ROUNDS} ${IN_PLACE ? `--in-place ${IN_PLACE}` : `--template ${values.template}`}\`
on ${started.toISOString()} (${availableParallelism()} cores, ${cpus()[0]?.model ?? 'cpu'}, load ${loadavg()[0]!.toFixed(2)} at the end;
the machine is shared, so the figures are ratios measured back to back in one run).

State: ${IN_PLACE ? `\`${IN_PLACE}\` itself (the run's rows removed after it)` : `a copy of \`${values.template}\``} (${state!.parcels.toLocaleString('en-US')} parcels, ${state!.delinquencies.toLocaleString('en-US')} delinquency
records after the bench's first load), plus the bench's ${RECORDS.toLocaleString('en-US')} delinquency records in ${COUNTIES.length} small counties
(${(RECORDS / COUNTIES.length).toLocaleString('en-US')} each). ${SEARCHES.toLocaleString('en-US')} saved searches over the 67 counties
(98% name one or two counties, 2% none; each a band of $100-$500 of amount due, half with a status, 30% with a tax year): ${median(perCounty.map((r) => r.n))} of them
name a county of the list or none (median); matching reaches a county's records through one index range scan per such search.

## The import, with the searches and without

Each import changes all ${RECORDS.toLocaleString('en-US')} records (amounts and status), so every record is compared before
and after the import. "Without": the same searches, their client on a plan without saved searches (nothing is
captured or matched). The import notes the changed records' keys and queues them with its commit; a webhook worker
then matches them (\`saved.match_next\`), timed here right after each import as "matching".

| run | with searches | import s | merge s | then matching s | records changed | matches |
| --- | --- | --- | --- | --- | --- | --- |
${runs.map((r, i) => `| ${i + 1} | ${r.searches ? 'yes' : 'no'} | ${fmt(r.seconds)} | ${fmt(r.merge)} | ${fmt(r.match)} | ${r.changed} | ${r.matches} |`).join('\n')}

- Import time with / without, per back-to-back pair: ${pairRatios.map(fmt).join(', ')}; median **${fmt(ratio)}**
  (**${ratio >= 1 ? `${((ratio - 1) * 100).toFixed(0)}% slower` : `${((1 - ratio) * 100).toFixed(0)}% faster`}**; target: at most 20% slower).
- Time to find the matches (\`saved.match_next\` after the import's commit, median): **${fmt(matchSeconds)} s** for
  ${RECORDS.toLocaleString('en-US')} changed records.
- The import and then its matching, with / without, per pair: ${workRatios.map(fmt).join(', ')}; median
  ${fmt(median(workRatios))} (the whole work the database does for the import, part of it after the commit).

## Where the matching's time goes

${
  steps
    ? `Every record of the list changed once more (amount and status) under a merge, queued (\`saved.queue_load\`), then
matched (\`saved.match_next\`), in one rolled-back transaction, each statement of 5 ms or more timed by auto_explain
(no per-node timing; milliseconds; the machine's load as above):

| step | ms |
| --- | --- |
| the changes without saved searches (${RECORDS.toLocaleString('en-US')} records, 10 merge statements) | ${steps.bare.toFixed(0)} |
| the same changes, the capture triggers noting them | ${steps.capture.toFixed(0)} |
| the noted records queued with the import (saved.queue_load) | ${steps.queue.toFixed(0)} |
| after the commit, saved.match_next in all (${steps.matches} matches, ${steps.events} events): | ${steps.total.toFixed(0)} |
${steps.rows.map(([k, v]) => `| - ${k} | ${v.toFixed(0)} |`).join('\n')}

The pairing statement's plan:

\`\`\`
${steps.plan}
\`\`\``
    : "Not measured: this database has no saved.match_next (matching in the import's transaction)."
}

## Matches delivered once

A fresh tax year of ${RECORDS.toLocaleString('en-US')} records (every one new) imported with the ${SEARCHES.toLocaleString('en-US')} searches:

- exhaustive pairs (every search run through the endpoint's own builder over the new rows): **${check!.expected}**;
- pairs recorded by its matching: **${check!.found}** (missing ${check!.missing}, extra ${check!.extra});
- records in the load's ${events!.n} saved_search.matched events (at most ${events!.largest} an event): **${check!.delivered}**,
  of which distinct (search, record): ${check!.distinct_delivered}.

The events are the webhook outbox: the workers send each to the search's endpoints at least once, deduplicated on
\`webhook-id\` (test/saved-searches/delivery.test.ts covers two workers and a killed one).

## What the full state needs

Matching does not read the state: it costs an index range scan per (search, county of the import), the pairs found,
a row per record that entered some search, a row per search that got matches, and an event per 100 of a search's
matches (ids only: the records are written out when the events are sent). A statewide import is a sequence of county merges like these, so what grows
is the records changed and the matches they make; the base import grows with the size of the tables it writes.
`;
  writeReport(values.report!, report);
  console.log(report);
}

/**
 * The steps of matching, timed: every bench record of YEAR changed under a merge of its county (the capture triggers
 * run), queued as the import queues them, then saved.match_next with auto_explain reporting each nested statement;
 * all in one transaction, rolled back. Null when the database matches in the import's transaction (no
 * saved.match_next).
 */
async function profile(sql: postgres.Sql, clientId: string) {
  const [has] = await sql<{ ok: boolean }[]>`SELECT to_regproc('saved.match_next') IS NOT NULL AS ok`;
  if (!has!.ok) return null;
  const notices: string[] = [];
  const db = postgres(url, { max: 1, onnotice: (n) => notices.push(String(n.message)) });
  const result = {
    ...{ bare: 0, capture: 0, queue: 0, total: 0, matches: 0, events: 0 },
    ...{ rows: [] as [string, number][], plan: '' },
  };
  await db
    .begin(async (tx) => {
      const [load] = await tx<{ id: number }[]>`
        INSERT INTO core.load_history (kind, file_name, status) VALUES ('delinquencies', 'profile', 'running')
        RETURNING id::int`;
      const ids = await tx<{ id: number }[]>`SELECT id FROM core.counties WHERE slug = ANY (${COUNTIES}) ORDER BY id`;
      // the same changes without and with the searches (their client's plan), from the same state
      const change = async () => {
        const t0 = performance.now();
        for (const { id } of ids) {
          await tx`SELECT webhooks.begin_merge(${load!.id}, ${id}::smallint, 'delinquencies')`;
          await tx`
            UPDATE core.tax_delinquencies
               SET total_due = total_due + 1500,
                   status = CASE status WHEN 'delinquent' THEN 'certificate_sold' ELSE 'delinquent' END
             WHERE county_id = ${id} AND tax_year = ${YEAR}`;
          await tx`SELECT set_config('webhooks.merge', '', true)`;
        }
        return performance.now() - t0;
      };
      await tx`UPDATE accounts.clients SET plan = 'developer' WHERE id = ${clientId}`;
      await tx`SAVEPOINT bare`;
      result.bare = await change();
      await tx`ROLLBACK TO SAVEPOINT bare`;
      await tx`UPDATE accounts.clients SET plan = 'enterprise' WHERE id = ${clientId}`;
      result.capture = await change();
      const t0 = performance.now();
      await tx`SELECT saved.queue_load(${load!.id})`;
      result.queue = performance.now() - t0;
      await tx.unsafe(`LOAD 'auto_explain'`);
      // statements of 5 ms and more, not timed node by node (per-node timing of nested statements costs more than
      // the statements)
      await tx.unsafe(`SET LOCAL auto_explain.log_min_duration = 5; SET LOCAL auto_explain.log_analyze = on;
        SET LOCAL auto_explain.log_nested_statements = on; SET LOCAL auto_explain.log_timing = off;
        SET LOCAL client_min_messages = log`);
      const t1 = performance.now();
      const [r] = await tx<{ load_id: string; events: number }[]>`SELECT load_id, events FROM saved.match_next()`;
      result.total = performance.now() - t1;
      if (Number(r!.load_id) !== load!.id)
        throw new Error(`another import was queued before the profile's: ${r!.load_id}`);
      await tx.unsafe(`SET LOCAL client_min_messages = notice; SET LOCAL auto_explain.log_min_duration = -1`);
      result.events = r!.events;
      result.matches = await matchesOf(tx, load!.id);
      throw new Error('rollback');
    })
    .catch((err: Error) => {
      if (err.message !== 'rollback') throw err;
    });
  await db.end();
  for (const [name, re] of STEPS) {
    const hits = notices.filter((n) => re.test(n));
    const ms = hits.reduce((a, n) => a + Number(/duration: ([\d.]+) ms/.exec(n)?.[1] ?? 0), 0);
    result.rows.push([`${name}${hits.length > 1 ? ` (${hits.length} statements)` : ''}`, ms]);
    if (name.startsWith('pairs') && hits[0]) {
      const lines = hits[0].split('\n');
      result.plan = lines.slice(lines.findIndex((l) => l.includes('(cost=') || l.includes('(actual'))).join('\n');
    }
  }
  return result;
}

await main();
