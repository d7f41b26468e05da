// Search in a county on owner names drawn at random from the state: parcels drawn uniformly, so a common name (JOHNSON
// JOHN, GONZALEZ JOSE) comes as often as the roll holds it, each owner name searched in its own county as the API
// sends it (api.parcel_search_hits: the query read inside, a page of 25 and the total), one at a time and then at 4
// connections. Reports p50 / p95 / max and the slowest queries, and the same names' reading alone
// (api.parcel_query_words, one at a time): the part of each search no intersection can save. With --old, the same
// names run against a second database too (the code before a change), the two alternated phase by phase, so both
// meet the same machine.
//   DATABASE_URL=<the bench database> node --import tsx bench/county-names.ts [--names 400] [--seed 7] [--old <url>]
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { ownerDatabaseUrl } from '../src/db-url.ts';
import { Rng } from '../scripts/generate/prng.ts';

export interface CountyName {
  query: string;
  county: string;
}

/** Owner names of parcels drawn at random (ids uniform between the smallest and largest), each with its county. */
export async function drawCountyNames(sql: postgres.Sql, n: number, seed: number): Promise<CountyName[]> {
  const rng = new Rng(seed);
  const [bounds] = await sql<{ lo: string; hi: string }[]>`
    SELECT min(id)::text AS lo, max(id)::text AS hi FROM core.parcels`;
  const lo = Number(bounds?.lo ?? 0);
  const hi = Number(bounds?.hi ?? 0);
  const out: CountyName[] = [];
  while (out.length < n && hi > 0) {
    const ids = Array.from({ length: n }, () => rng.int(lo, hi));
    const rows = await sql<{ id: string; owner: string; slug: string }[]>`
      SELECT p.id::text, p.owner_name AS owner, c.slug
        FROM core.parcels p JOIN core.counties c ON c.id = p.county_id
       WHERE p.id = ANY (${ids}::bigint[]) AND p.owner_name ~ '[A-Za-z0-9]'`;
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    // in the order drawn, a parcel drawn twice searched twice: as often as people would type it
    for (const id of ids) {
      const r = byId.get(id);
      if (r && out.length < n) out.push({ query: r.owner, county: r.slug });
    }
  }
  return out;
}

export interface Timed extends CountyName {
  ms: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/**
 * Every name searched once, by `connections` workers each on its own connection; the latency of each. With
 * `readingOnly`, only the query's reading (api.parcel_query_words), which every search does first.
 */
export async function searchNames(
  url: string,
  names: CountyName[],
  connections: number,
  readingOnly = false,
): Promise<Timed[]> {
  const sql = postgres(url, {
    max: connections,
    onnotice: () => {},
    connection: { application_name: 'florida-bench', max_parallel_workers_per_gather: '0' },
  });
  try {
    // open the connections first, so that no query pays for one
    await Promise.all(Array.from({ length: connections }, () => sql`SELECT 1`));
    const timed: Timed[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < names.length) {
          const name = names[next++]!;
          const t0 = performance.now();
          if (readingOnly) await sql`SELECT api.parcel_query_words(${name.query})`;
          else
            await sql`SELECT total, hits FROM api.parcel_search_hits(p_query => ${name.query},
                        p_county => ${[name.county]}::text[], p_limit => 25)`;
          timed.push({ ...name, ms: performance.now() - t0 });
        }
      }),
    );
    return timed;
  } finally {
    await sql.end();
  }
}

export function summary(timed: Timed[]) {
  const ms = timed.map((t) => t.ms).sort((a, b) => a - b);
  return {
    p50: percentile(ms, 50),
    p95: percentile(ms, 95),
    max: ms[ms.length - 1] ?? 0,
    slowest: [...timed].sort((a, b) => b.ms - a.ms).slice(0, 10),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      names: { type: 'string', default: '400' },
      seed: { type: 'string', default: '7' },
      old: { type: 'string' },
    },
  });
  const url = ownerDatabaseUrl();
  const sampler = postgres(url, { max: 1, onnotice: () => {} });
  const names = await drawCountyNames(sampler, Number(values.names), Number(values.seed));
  await sampler.end();
  const targets: [string, string][] = values.old
    ? [
        ['old', values.old],
        ['new', url],
      ]
    : [['this', url]];
  const db = (u: string) => new URL(u).pathname.slice(1);
  console.log(`${names.length} owner names drawn at random (seed ${values.seed}), each searched in its own county`);
  console.log(targets.map(([label, u]) => `${label}: ${db(u)}`).join('; '));
  const rows: string[] = [];
  const slow: string[] = [];
  for (const connections of [1, 4]) {
    for (const [label, u] of targets) {
      const s = summary(await searchNames(u, names, connections));
      rows.push(`| ${label} | ${connections} | ${s.p50.toFixed(1)} | ${s.p95.toFixed(1)} | ${s.max.toFixed(1)} |`);
      if (connections === 1)
        slow.push(`${label}: ${s.slowest.map((t) => `${t.query} (${t.county}) ${t.ms.toFixed(0)} ms`).join('; ')}`);
    }
  }
  for (const [label, u] of targets) {
    const s = summary(await searchNames(u, names, 1, true));
    rows.push(
      `| ${label}, reading the query alone | 1 | ${s.p50.toFixed(1)} | ${s.p95.toFixed(1)} | ${s.max.toFixed(1)} |`,
    );
  }
  console.log('\n| code | connections | p50 ms | p95 ms | max ms |\n| --- | ---: | ---: | ---: | ---: |');
  for (const r of rows) console.log(r);
  console.log('\nslowest one at a time:');
  for (const s of slow) console.log(`- ${s}`);
}
