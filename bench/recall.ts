// Search quality beside speed: recall of api.search_parcels' top k against a ground truth computed by brute force.
// The ground truth applies the documented query semantics (README, "query") exhaustively: every vocabulary term
// within the edit distance of every word (no cap on their number, typos considered for common words too), completions of
// the last word (a word of the query is neither a typo nor a completion of another), every word required, and the full ranking (score, exact text, id) over every match, with
// no 5,000-match shortcut. Recall therefore measures exactly what the fast path gives up.
//   node --import tsx bench/recall.ts [--queries 100] [--k 25]     (standalone: prints the result)
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { ownerDatabaseUrl } from '../src/db-url.ts';

export interface RecallResult {
  queries: number;
  k: number;
  /** Mean over queries of |ours ∩ truth| / |truth| (queries whose truth is empty count as 1 when ours is empty). */
  recall: number;
  /** Queries whose exhaustive ranking did not finish within limitSeconds: not in the mean. */
  skipped: string[];
  limitSeconds: number;
  worst: { query: string; recall: number }[];
}

/** The exhaustive top k for one query, by the semantics above. */
const GROUND_TRUTH = `
WITH words AS (
  -- the query's words as search reads them (normalized, particles joined, optional words left out)
  SELECT w, i FROM unnest(search.query_words($1)) WITH ORDINALITY AS u(w, i)
), last AS (SELECT w FROM words ORDER BY i DESC LIMIT 1),
matches AS (
  SELECT words.i, t.term,
         CASE WHEN t.term = words.w THEN 1.0
              WHEN t.term LIKE words.w || '%' AND words.w = (SELECT w FROM last)
                   AND (length(words.w) > 20 OR d.edits > CASE WHEN length(words.w) <= 5 THEN 1 ELSE 2 END)
                THEN length(words.w)::float8 / length(t.term)
              ELSE greatest(1 - d.edits::float8 / greatest(length(words.w), length(t.term)),
                            CASE WHEN t.term LIKE words.w || '%' AND words.w = (SELECT w FROM last)
                                 THEN length(words.w)::float8 / length(t.term) ELSE 0 END) END AS q
    FROM words CROSS JOIN core.parcel_terms t
    -- edits with a swap of neighbouring letters counted as one (optimal string alignment, one swap per word)
    CROSS JOIN LATERAL (SELECT levenshtein(words.w, t.term) AS lev) l
    CROSS JOIN LATERAL (
      SELECT CASE WHEN l.lev BETWEEN 2 AND 3
                  THEN least(l.lev, 1 + (SELECT min(levenshtein(s, t.term)) FROM unnest(search.adjacent_swaps(words.w)) AS s))
                  ELSE l.lev END AS edits) d
   WHERE t.term = words.w
      OR (length(words.w) >= 3 AND words.w !~ '^[0-9]+$' AND t.term NOT IN (SELECT w FROM words)
          AND ((length(words.w) <= 20 AND d.edits <= CASE WHEN length(words.w) <= 5 THEN 1 ELSE 2 END)
               OR (words.w = (SELECT w FROM last) AND t.term LIKE words.w || '%')))
), per_word AS (
  SELECT i, array_agg(term) AS terms, array_agg(q) AS qs FROM matches GROUP BY i
), scored AS (
  SELECT p.id, p.owner_search, p.address_search,
         (SELECT avg((SELECT max(x.q) FROM unnest(pw.qs, pw.terms) AS x(q, t) WHERE x.t = ANY (p.search_terms)))
            FROM per_word pw) AS score
    FROM core.parcels p
   WHERE NOT EXISTS (SELECT 1 FROM per_word pw WHERE NOT (p.search_terms && pw.terms))
     AND EXISTS (SELECT 1 FROM per_word)
)
SELECT id::int FROM scored
 ORDER BY score DESC,
          (coalesce(owner_search = ANY (search.exact_texts($1, api.parcel_query_words($1))), false)
           OR coalesce(address_search = ANY (search.exact_texts($1, api.parcel_query_words($1))), false)) DESC,
          id
 LIMIT $2`;

/**
 * Recall over `queries`. An exhaustive ranking that takes longer than `limitSeconds` (common words at full scale
 * match hundreds of thousands of parcels through dozens of typo variants) is cancelled and the query reported as
 * skipped, so the benchmark finishes in bounded time.
 */
export async function measureRecall(
  sql: postgres.Sql,
  queries: string[],
  k = 25,
  limitSeconds = 30,
): Promise<RecallResult> {
  const perQuery: { query: string; recall: number }[] = [];
  const skipped: string[] = [];
  for (const query of queries) {
    let truth: number[];
    try {
      truth = await sql.begin(async (tx) => {
        await tx.unsafe(`SET LOCAL statement_timeout = '${limitSeconds}s'`);
        return (await tx.unsafe<{ id: number }[]>(GROUND_TRUTH, [query, k])).map((r) => r.id);
      });
    } catch (err) {
      if ((err as { code?: string }).code !== '57014') throw err; // query_canceled: the statement timeout
      skipped.push(query);
      continue;
    }
    const ours = (
      await sql<{ id: number }[]>`SELECT id FROM api.search_parcels(p_query => ${query}, p_limit => ${k})`
    ).map((r) => r.id);
    const found = new Set(ours);
    const recall =
      truth.length === 0 ? (ours.length === 0 ? 1 : 0) : truth.filter((id) => found.has(id)).length / truth.length;
    perQuery.push({ query, recall });
  }
  const mean = perQuery.reduce((s, r) => s + r.recall, 0) / Math.max(1, perQuery.length);
  return {
    queries: perQuery.length,
    k,
    recall: mean,
    skipped,
    limitSeconds,
    worst: [...perQuery].sort((a, b) => a.recall - b.recall).slice(0, 5),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { queries: { type: 'string', default: '100' }, k: { type: 'string', default: '25' } },
  });
  const { buildWorkloads } = await import('./workload.ts');
  const sql = postgres(ownerDatabaseUrl(), { max: 1, onnotice: () => {} });
  const workloads = await buildWorkloads(sql);
  const queries = (workloads['search statewide'] ?? [])
    .map((path) => new URL(path, 'http://x').searchParams.get('query')!)
    .slice(0, Number(values.queries));
  const started = Date.now();
  const result = await measureRecall(sql, queries, Number(values.k));
  console.log(JSON.stringify({ ...result, seconds: (Date.now() - started) / 1000 }, null, 2));
  await sql.end();
}
