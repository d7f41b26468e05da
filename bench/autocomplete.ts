// Autocomplete before and after in one run, in the database (the API's HTTP cost is the same for both): the bench's
// autocomplete workload (bench/workload.ts: each search query cut inside its second word) with a query set drawn at
// random for this run (so the server has not seen it), plus the first keystrokes (every 1-3 character prefix of the
// same queries' first words), sent as api.autocomplete_parcels (after) and as the same entry point computing every
// answer live (before: a copy of it in each session's pg_temp as it was before issue 44, the query's words read twice),
// alternated request by request, alone and at 4 connections. Then the quality check: the wanted parcel among the first 10 suggestions
// for bench/quality-set.json's queries typed into their second word, before and after; and the time per step of the
// live computation (where the time goes).
//   DATABASE_URL=<the bench database> node --import tsx bench/autocomplete.ts [--seconds 10] [--seed <n>]
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { ownerDatabaseUrl } from '../src/db-url.ts';
import { buildWorkloads } from './workload.ts';
import { readQualitySet } from './quality.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    seed: { type: 'string', default: String(Date.now() % 1_000_000) },
    connections: { type: 'string', default: '4' },
  },
});
const seconds = Number(values.seconds);
const url = process.env.DATABASE_URL ?? ownerDatabaseUrl();
const options = { max: 1, onnotice: () => {}, connection: { application_name: 'florida-bench' } } as const;

/**
 * The entry point as it was before issue 44: the same checks and rendering, every answer computed live, the query's
 * words read twice (once to choose the path, once by the reading).
 */
const BEFORE = `
  CREATE FUNCTION pg_temp.autocomplete_reading_before(p_query text) RETURNS api.query_word[]
    LANGUAGE plpgsql STABLE
    SET plan_cache_mode = force_generic_plan
  AS $$
  DECLARE
    v_words text[] := search.query_words(p_query);
    v_last text := v_words[cardinality(v_words)];
    v_out api.query_word[] := '{}';
    v_reading api.query_word;
  BEGIN
    FOR i IN 1 .. cardinality(v_words) - 1 LOOP
      v_reading := (search.parcel_word_terms(v_words[i], v_words, false)).reading;
      IF cardinality(v_reading.terms) > 0 THEN v_out := v_out || v_reading; END IF;
    END LOOP;
    v_reading := search.autocomplete_prefix_reading(v_last);
    IF cardinality(v_reading.terms) > 0 AND (length(v_last) > 1 OR cardinality(v_out) = 0) THEN
      v_out := v_out || v_reading;
    END IF;
    RETURN v_out;
  END $$;
  CREATE FUNCTION pg_temp.autocomplete_ranked_before(p_query text, p_counties smallint[], p_limit integer)
  RETURNS TABLE (id integer, by_address boolean)
    LANGUAGE plpgsql STABLE
  AS $$
  DECLARE
    v_words text[] := search.query_words(p_query);  -- (read to choose the path; the live path took it)
    v_reading api.query_word[] := pg_temp.autocomplete_reading_before(p_query);
  BEGIN
    RETURN QUERY
    SELECT s.id, s.by_address
      FROM search.autocomplete_scored(search.autocomplete_candidates(v_reading, p_counties, 3 * p_limit), v_reading) AS s
     ORDER BY s.score DESC, s.by_address DESC, s.ord
     LIMIT p_limit;
  END $$;
  CREATE FUNCTION pg_temp.autocomplete_before(p_query text, p_county text[] DEFAULT NULL, p_limit integer DEFAULT 10)
  RETURNS TABLE (id integer, label text, owner_name text, site_address_full text, site_city text, county text)
    LANGUAGE plpgsql STABLE
  AS $$
  BEGIN
    IF p_query IS NULL THEN PERFORM core.bad_input('q: is required'); END IF;
    PERFORM search.parcel_filter_of(p_query => p_query, p_county => p_county);
    IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND search.autocomplete_limit_max() THEN
      PERFORM core.bad_input(format('limit: must be between 1 and %s', search.autocomplete_limit_max()));
    END IF;
    RETURN QUERY
    SELECT p.id::int, CASE WHEN s.by_address THEN concat_ws(', ', p.site_address_full, p.site_city) ELSE p.owner_name END,
           p.owner_name, p.site_address_full, p.site_city, c.slug
      FROM pg_temp.autocomplete_ranked_before(p_query, search.parcel_postings_counties(p_county), p_limit) WITH ORDINALITY AS s(id, by_address, n)
      JOIN core.parcels p ON p.id = s.id
      JOIN core.counties c ON c.id = p.county_id
     ORDER BY s.n;
  END $$`;

/** Where the live computation's time goes, per step, measured in the server. */
const STEPS = `
  CREATE FUNCTION pg_temp.autocomplete_steps(p_query text, OUT words float8, OUT reading float8, OUT earlier float8,
                                             OUT candidates float8, OUT scored float8, OUT total float8)
    LANGUAGE plpgsql
  AS $$
  DECLARE
    t timestamptz := clock_timestamp();
    v_words api.query_word[];
    v_ids integer[];
  BEGIN
    PERFORM search.query_words(p_query);
    words := extract(epoch FROM clock_timestamp() - t) * 1000; t := clock_timestamp();
    v_words := search.autocomplete_reading(p_query);
    reading := extract(epoch FROM clock_timestamp() - t) * 1000; t := clock_timestamp();
    IF cardinality(v_words) > 1 THEN
      PERFORM search.parcel_postings_match(v_words[1 : cardinality(v_words) - 1], NULL, 0);
    END IF;
    earlier := extract(epoch FROM clock_timestamp() - t) * 1000; t := clock_timestamp();
    v_ids := search.autocomplete_candidates(v_words, NULL, 30);
    candidates := extract(epoch FROM clock_timestamp() - t) * 1000; t := clock_timestamp();
    PERFORM count(*) FROM search.autocomplete_scored(v_ids, v_words);
    scored := extract(epoch FROM clock_timestamp() - t) * 1000; t := clock_timestamp();
    PERFORM count(*) FROM api.autocomplete_parcels(p_query);
    total := extract(epoch FROM clock_timestamp() - t) * 1000;
  END $$`;

async function session() {
  const sql = postgres(url, options);
  await sql.unsafe(BEFORE);
  await sql.unsafe(STEPS);
  return sql;
}

type Version = 'before' | 'after';
const call = (sql: postgres.Sql, version: Version, q: string, county: string | null) =>
  version === 'after'
    ? sql`SELECT * FROM api.autocomplete_parcels(p_query => ${q}, p_county => ${county ? [county] : null}::text[])`
    : sql`SELECT * FROM pg_temp.autocomplete_before(p_query => ${q}, p_county => ${county ? [county] : null}::text[])`;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Both versions alternated request by request on `connections` sessions for `seconds`: latencies of each. */
async function alternate(queries: { q: string; county: string | null }[], connections: number) {
  const sessions = await Promise.all(Array.from({ length: connections }, session));
  const latencies: Record<Version, number[]> = { before: [], after: [] };
  let next = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    sessions.map(async (sql) => {
      while (performance.now() < deadline) {
        const i = next++;
        const query = queries[Math.floor(i / 2) % queries.length]!;
        // each query is sent by both versions, in turn first
        const version: Version = (i + Math.floor(i / 2)) % 2 === 0 ? 'after' : 'before';
        const t0 = performance.now();
        await call(sql, version, query.q, query.county);
        latencies[version].push(performance.now() - t0);
      }
    }),
  );
  await Promise.all(sessions.map((s) => s.end()));
  const row = (v: Version) => {
    const l = latencies[v].sort((a, b) => a - b);
    return `${l.length} | ${percentile(l, 50).toFixed(2)} | ${percentile(l, 95).toFixed(2)} | ${percentile(l, 99).toFixed(2)}`;
  };
  return { before: row('before'), after: row('after') };
}

const sql = await session();
const workloads = await buildWorkloads(sql, Number(values.seed));
const typed = workloads['autocomplete']!.map((p) => new URL(p, 'http://x').searchParams.get('q')!);
// the first keystrokes of the same queries: 1, 2 and 3 characters of the first word
const firstKeys = [...new Set(typed.flatMap((q) => [1, 2, 3].map((n) => q.split(' ')[0]!.slice(0, n))))];
// (a key the normalization leaves empty, such as a lone '#', is a 400 for both)
const keys = (
  await sql<{ q: string }[]>`SELECT q FROM unnest(${firstKeys}::text[]) AS q WHERE core.normalize_text(q) <> ''`
).map((r) => r.q);
const sets: [string, { q: string; county: string | null }[]][] = [
  ['typed into the second word, statewide', typed.map((q) => ({ q, county: null }))],
  ['first 1-3 characters, statewide', keys.map((q) => ({ q, county: null }))],
];

// Where the time goes: each step of the live computation of the typed queries, in the server.
const steps = await sql<
  { words: number; reading: number; earlier: number; candidates: number; scored: number; total: number }[]
>`
  SELECT s.* FROM unnest(${typed}::text[]) AS q, pg_temp.autocomplete_steps(q) AS s`;
console.log('\n| live step (typed into the second word, statewide) | p50 ms | p95 ms |');
console.log('| --- | ---: | ---: |');
for (const [key, what] of [
  ['words', 'the words (search.query_words)'],
  ['reading', "the reading: earlier words with typos, the last one's completions (search.autocomplete_reading)"],
  ['earlier', "the earlier words' parcels (search.parcel_postings_match)"],
  ['candidates', 'the candidates, earlier words included (search.autocomplete_candidates)'],
  ['scored', 'scoring 30 candidates (search.autocomplete_scored)'],
  ['total', 'the whole entry point again, its pages now read (api.autocomplete_parcels)'],
] as const) {
  const l = steps.map((r) => r[key]).sort((a, b) => a - b);
  console.log(`| ${what} | ${percentile(l, 50).toFixed(2)} | ${percentile(l, 95).toFixed(2)} |`);
}

console.log(`seed ${values.seed}: ${typed.length} queries typed into the second word, ${keys.length} first keystrokes`);
console.log('| workload | connections | version | requests | p50 ms | p95 ms | p99 ms |');
console.log('| --- | ---: | --- | ---: | ---: | ---: | ---: |');
for (const [name, queries] of sets) {
  for (const connections of [1, Number(values.connections)]) {
    const r = await alternate(queries, connections);
    for (const v of ['before', 'after'] as const) console.log(`| ${name} | ${connections} | ${v} | ${r[v]} |`);
  }
}

// Quality: each query of the quality set typed into its second word as the workload cuts it (the second word less
// its last two letters, at least two), statewide and in the parcel's county; found when a suggestion has the
// parcel's owner name (an owner query) or its address (an address query; without a unit number, the building), as
// bench/quality.ts counts a search hit.
const pairs = readQualitySet().filter((p) => p.query.trim().split(/\s+/).length > 1);
const found: Record<Version, [number, number]> = { before: [0, 0], after: [0, 0] };
let differ = 0;
for (const p of pairs) {
  const [w1, w2] = p.query.trim().split(/\s+/) as [string, string];
  const q = `${w1} ${w2.slice(0, Math.max(2, w2.length - 2))}`;
  const unit = p.damage === 'no unit' ? '( #| UNIT | APT )\\s*\\S+$' : '$^';
  const side = p.field === 'owner' ? 'owner_name' : 'site_address_full';
  const [target] = await sql<{ want: string }[]>`
    SELECT core.normalize_text(regexp_replace(p.${sql(side)}, ${unit}, '')) AS want FROM core.parcels p
     WHERE p.county_id = (SELECT id FROM core.counties WHERE slug = ${p.county}) AND p.parcel_id = ${p.parcel_id}`;
  if (!target) throw new Error(`autocomplete: no parcel ${p.county} ${p.parcel_id}: rebuild the quality set`);
  const answers: Record<Version, string> = { before: '', after: '' };
  for (const v of ['before', 'after'] as const) {
    for (const [i, county] of [null, p.county].entries()) {
      const rows = await sql<{ id: number; hit: boolean }[]>`
        SELECT x.id, core.normalize_text(regexp_replace(x.${sql(side)}, ${unit}, '')) = ${target.want} AS hit
          FROM (${call(sql, v, q, county)}) x`;
      if (rows.some((r) => r.hit)) found[v][i] = found[v][i]! + 1;
      answers[v] += `${rows.map((r) => r.id).join(',')}|`;
    }
  }
  if (answers.before !== answers.after) differ++;
}
const share = (v: Version) => found[v].map((n) => (n / pairs.length).toFixed(3)).join(' / ');
console.log(
  `\nquality: ${pairs.length} queries of bench/quality-set.json typed into their second word; the wanted parcel ` +
    `among the first 10 suggestions, statewide / in its county: before ${share('before')}, after ${share('after')}; ` +
    `${differ} queries with other suggestions after`,
);
await sql.end();
