// `make bench`: the API as a user runs it (its own process, auth and metering on), driven per endpoint from this
// process on loopback, beside two floors measured in the same run: the database alone (pgbench calling the same
// api.* function) and the HTTP stack alone (a fixed body of the same size). Writes bench/RESULTS.md.
//   node --import tsx bench/run.ts [--seconds 10] [--concurrency 4] [--service-seconds 5] [--port 3999]
import { execFileSync, execSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { writeReport } from './report.ts';
import { cpus, totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { apiDatabaseUrl, ownerDatabaseUrl } from '../src/db-url.ts';
import { benchClient, startApi } from './api.ts';
import { drive, type DriveResult } from './driver.ts';
import { COMPONENTS, componentPids, withCpu } from './load.ts';
import { buildWorkloads, mixed } from './workload.ts';
import { measureRecall } from './recall.ts';
import { buildQualitySet, measureQuality, readQualitySet } from './quality.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    concurrency: { type: 'string', default: '4' },
    'service-seconds': { type: 'string', default: '5' },
    'mixed-concurrency': { type: 'string', default: '16' },
    port: { type: 'string', default: '3999' },
    workers: { type: 'string', default: '1' },
    out: { type: 'string', default: 'bench/RESULTS.md' },
    'recall-queries': { type: 'string', default: '40' },
  },
});
const seconds = Number(values.seconds);
/** Latency per endpoint is measured at a moderate load; throughput (the mixed run) at a higher one. */
const concurrency = Number(values.concurrency);
const mixedConcurrency = Number(values['mixed-concurrency']);
/** Each endpoint again at one connection: its service time, with nothing queued in front of a request. */
const serviceSeconds = Number(values['service-seconds']);
const base = `http://127.0.0.1:${values.port}`;

/** Targets of issue 9 on the full synthetic state: [percentile, ms]. */
const TARGETS: Record<string, [keyof DriveResult, number][]> = {
  'parcel by id': [['p99', 5]],
  'parcel by parcel id': [['p99', 5]],
  county: [['p99', 5]],
  usage: [['p99', 5]],
  'search statewide': [
    ['p95', 50],
    ['p99', 150],
  ],
  'search in county': [['p95', 30]],
  autocomplete: [['p95', 15]],
  point: [['p95', 5]],
  'near 500 m': [['p95', 20]],
  'bbox 1 km2': [['p95', 20]],
  structured: [['p95', 100]],
  'structured + facets': [['p95', 250]],
  'delinquency search': [['p95', 20]],
  'delinquency by parcel': [['p95', 20]],
  'delinquency counts': [['p95', 20]],
};
/** The throughput targets: the mixed run's req/s, and by id's share of its database floor. */
const MIXED_TARGET_RPS = 3000;
const BY_ID_FLOOR_TARGET = 0.6;

/**
 * Why a target is missed on this machine class and what would meet it, printed beside the measured number of every
 * target a run misses (the measurements behind each are in bench/results/analysis.md). Keyed as TARGETS, plus
 * 'mixed', 'by id floor' and 'unexplained' (a missed target without an entry of its own).
 */
const LOOKUP_MISS = {
  why: 'a lone request is quick (the "alone" column); under load its p99 is time spent waiting for the 2 cores, which the API process (about 120 µs of CPU a request with auth and metering: bench/results/overhead.md), Postgres, Redis and the load generator share (analysis.md, section 1)',
  meet: 'the API process and the load generator on cores of their own, Postgres on its own: then nothing a lookup does waits for another program',
};
const PLACE_MISS = {
  why: "the SQL of a place query is 1 ms (point) to 3-5 ms (near 500 m with its total) warm; the rest is the request path and waiting for the 2 shared cores, and after the cache warm-up part of the parcel pages a place reads are outside PostgreSQL's buffers (analysis.md, section 2)",
  meet: 'cores of its own for the API and the load generator, and memory to hold the whole database in cache',
};
const SEARCH_MISS = {
  why: 'a search costs the database about 13 ms of CPU statewide and 8 ms in a county at full state (bench/search-cost.ts), of which 4.6-5.6 ms read the query\'s words against the vocabulary and the deletion index, then the intersections of its terms\' postings, ranking and the exact total; under load on 2 shared cores a request waits for the searches ahead of it (compare the "alone" column)',
  meet: 'one core for Postgres per two concurrent searches (read replicas: results/replicas.md), a cheaper reading of the query\'s words, and intersections that skip instead of copy (results/search.md, "Database CPU per search")',
};
const AUTOCOMPLETE_MISS = {
  why: "the workload types into the second word, which is computed live: the first word read as a search reads it (typos included), the second word's completions, then about 30 candidates scored (bench/autocomplete.ts breaks it down; no step dominates); only a single word of 1-3 letters is precomputed (core.typeahead_prefixes)",
  meet: 'a second precomputed level keyed on the first word as read plus 1-3 letters of the second, for first words held by many parcels; or cores of its own for Postgres',
};
const MISSES: Record<string, { why: string; meet: string }> = {
  'parcel by id': LOOKUP_MISS,
  'parcel by parcel id': LOOKUP_MISS,
  county: LOOKUP_MISS,
  usage: LOOKUP_MISS,
  'search statewide': SEARCH_MISS,
  'search in county': SEARCH_MISS,
  autocomplete: AUTOCOMPLETE_MISS,
  point: PLACE_MISS,
  'near 500 m': PLACE_MISS,
  'bbox 1 km2': PLACE_MISS,
  mixed: {
    why: 'the mix interleaves the 15 workloads evenly, so 3 of every 15 requests are searches (statewide, in a county, autocomplete); they use most of the 2 cores, and the other 12 requests add about 1 ms each across the API, Postgres, Redis and the load generator',
    meet: 'search on cores of its own (a read replica per 2-4 cores behind the same API), plus the cheaper search above',
  },
  /** A missed target this file does not explain yet. */
  unexplained: {
    why: 'not analysed yet: compare the "alone" column',
    meet: 'to be found',
  },
  'by id floor': {
    why: 'the database floor is pgbench with Postgres alone on both cores; through the API the same 2 cores also run the API process (about 120 µs of CPU a request with auth and metering, against about 80 µs in Postgres), Redis (about 30 µs) and the load generator',
    meet: 'the API and the load generator on cores of their own, as in production, where the ratio compares Postgres with itself',
  },
};

const owner = postgres(ownerDatabaseUrl(), { max: 2, onnotice: () => {} });

/**
 * Reads the data's tables and indexes once (pg_prewarm into the operating system's cache) as far as the memory
 * available less 2 GiB, so that the runs measure a server that has been serving rather than a cold disk: the
 * workloads ask about random places across the state, and each workload's warm-up reads only its own requests'
 * pages. core.parcels and its indexes come first (every parcel endpoint reads them), then the rest, smallest first.
 * Without the extension (it needs a superuser) the runs start cold, and the report says so.
 */
async function warmCache(): Promise<string> {
  try {
    await owner`CREATE EXTENSION IF NOT EXISTS pg_prewarm`;
  } catch (err) {
    return `the cache was not warmed (pg_prewarm: ${(err as Error).message}): the runs started cold`;
  }
  const available = Number(/MemAvailable:\s+(\d+)/.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0) * 1024;
  const relations = await owner<{ oid: number; bytes: string }[]>`
    SELECT c.oid::int AS oid, pg_relation_size(c.oid)::text AS bytes FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_index i ON i.indexrelid = c.oid
     WHERE n.nspname IN ('core', 'accounts', 'meter') AND c.relkind IN ('r', 'i', 't', 'm')
     ORDER BY coalesce(i.indrelid, c.oid) = 'core.parcels'::regclass DESC, pg_relation_size(c.oid)`;
  const budget = available - 2 * 2 ** 30;
  const started = performance.now();
  let read = 0;
  let skipped = 0;
  for (const r of relations) {
    if (read + Number(r.bytes) > budget) skipped++;
    else {
      await owner`SELECT pg_prewarm(${r.oid}::int::regclass, 'read')`;
      read += Number(r.bytes);
    }
  }
  const gb = (b: number) => (b / 2 ** 30).toFixed(1);
  return `${gb(read)} GB of tables and indexes were read into the cache in ${((performance.now() - started) / 1000).toFixed(0)} s${skipped ? ` (${skipped} relations left out: over the ${gb(available)} GB available less 2)` : ''}`;
}
const [{ parcels }] = (await owner`SELECT count(*)::int AS parcels FROM core.parcels`) as unknown as [
  { parcels: number },
];
const [{ delinquencies }] =
  (await owner`SELECT count(*)::int AS delinquencies FROM core.tax_delinquencies`) as unknown as [
    { delinquencies: number },
  ];
const [{ sales }] = (await owner`SELECT count(*)::int AS sales FROM core.sales`) as unknown as [{ sales: number }];
console.error(`bench: ${parcels} parcels, ${sales} sales, ${delinquencies} delinquency records`);

const cache = await warmCache();
console.error(`bench: ${cache}`);

/** The API process and its workers (WORKERS > 1). */
function apiProcessIds(): number[] {
  const pid = api.process.pid!;
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/);
  return [pid, ...children.filter(Boolean).map(Number)];
}

const bench = await benchClient(owner);
const headers = { authorization: `Bearer ${bench.key}` };
// the default pool, as users run it; a machine busy with other work starts it slowly
const api = await startApi(Number(values.port), { WORKERS: values.workers }, [], 120);

const workloads = await buildWorkloads(owner);
const results: Record<string, DriveResult> = {};
const alone: Record<string, DriveResult> = {};
for (const [name, paths] of Object.entries(workloads)) {
  if (paths.length === 0) continue;
  // warm-up: each distinct request once (at least 2 s, at most 60), as on a server that has been answering them
  await drive({ base, paths, headers, concurrency, seconds: Math.min(2, seconds) });
  await drive({ base, paths, headers, concurrency, seconds: 60, requests: paths.length });
  results[name] = await drive({ base, paths, headers, concurrency, seconds });
  alone[name] = await drive({ base, paths, headers, concurrency: 1, seconds: serviceSeconds });
  const r = results[name]!;
  console.error(
    `${name.padEnd(22)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(1)}  p95 ${r.p95.toFixed(1)}  p99 ${r.p99.toFixed(1)} ms  non-2xx ${r.non2xx}  alone p50 ${alone[name]!.p50.toFixed(1)}  p95 ${alone[name]!.p95.toFixed(1)} ms`,
  );
}
// The mixed run's CPU per request, from /proc, of the API process(es), Postgres's backends and Redis: what the machine's
// cores could serve at most at that cost (the load generator, in this process, left out), beside what the run served.
const components = await componentPids(api.process.pid!, owner);
const mixedResult = await withCpu(
  async () => ({
    ...(await components()),
    api: apiProcessIds(),
    // the API's own backends (createSql names them): autovacuum workers come and go during a run
    pg: (
      await owner<{ pid: number }[]>`
        SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'florida-api'`
    ).map((r) => r.pid),
  }),
  () => drive({ base, paths: mixed(workloads), headers, concurrency: mixedConcurrency, seconds }),
);
const mixedCpuUs = COMPONENTS.reduce((sum, c) => sum + mixedResult.cpu[c], 0);
const mixedBoundRps = (cpus().length * 1e6) / mixedCpuUs;
console.error(
  `mixed ${mixedResult.rps.toFixed(0)} req/s, CPU µs per request: api ${mixedResult.cpu.api.toFixed(0)} pg ${mixedResult.cpu.pg.toFixed(0)} redis ${mixedResult.cpu.redis.toFixed(0)}: ${((mixedResult.rps / mixedBoundRps) * 100).toFixed(0)}% of the ${mixedBoundRps.toFixed(0)} req/s bound`,
);

// Floors. HTTP: a fixed body the size of a parcel-by-id answer. Database: pgbench calling api.get_parcel.
const sampleBody = await (
  await fetch(`${base}${workloads['parcel by id']?.[0] ?? '/v1/counties/lee'}`, { headers })
).text();
const httpFloor = await drive({
  base,
  paths: [`/bench/fixed?bytes=${sampleBody.length}`],
  concurrency: mixedConcurrency,
  seconds,
});
// parcel by id at the floors' concurrency, so the ratio compares like with like
const byIdAtLoad = workloads['parcel by id']?.length
  ? await drive({ base, paths: workloads['parcel by id'], headers, concurrency: mixedConcurrency, seconds })
  : undefined;
const [{ lo, hi }] =
  (await owner`SELECT coalesce(min(id), 1)::text AS lo, coalesce(max(id), 1)::text AS hi FROM core.parcels`) as unknown as [
    { lo: string; hi: string },
  ];
const script = join(mkdtempSync(join(tmpdir(), 'bench-')), 'by-id.sql');
writeFileSync(script, `\\set id random(${lo}, ${hi})\nSELECT * FROM api.get_parcel(p_id => :id);\n`);
let dbFloorTps = 0;
try {
  const out = execFileSync(
    'pgbench',
    [
      '-n',
      '-M',
      'prepared',
      '-c',
      String(mixedConcurrency),
      '-j',
      '2',
      '-T',
      String(seconds),
      '-f',
      script,
      apiDatabaseUrl(),
    ],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  dbFloorTps = Number(/tps = ([\d.]+)/.exec(out)?.[1] ?? 0);
} catch (err) {
  console.error(`bench: pgbench failed: ${(err as Error).message.split('\n')[0]}`);
}

const searchQueries = (workloads['search statewide'] ?? []).map((path) =>
  new URL(path, base).searchParams.get('query')!,
);
const recallSample = searchQueries
  .filter((_, i) => i % Math.max(1, Math.floor(searchQueries.length / Number(values['recall-queries']))) === 0)
  .slice(0, Number(values['recall-queries']));
console.error(`bench: recall of the top 25 for ${recallSample.length} queries against the exhaustive ranking`);
const recall = await measureRecall(owner, recallSample, 25);
// bench/quality-set.json names parcels of the 1M-parcel state of seed 1 (bench/quality.ts --build drew it from that
// state); another state holds other owners at those parcel ids, so its set is drawn from it the same way
const ownSet = new URL(ownerDatabaseUrl()).pathname === '/florida_bench_1000000_seed1';
const qualitySet = ownSet ? readQualitySet() : await buildQualitySet(owner);
const qualitySource = ownSet ? 'bench/quality-set.json' : 'drawn from this state by bench/quality.ts';
console.error(`bench: recall@1 and @10 of the ${qualitySet.length} damaged queries ${qualitySource}`);
const quality = await measureQuality(owner, qualitySet).catch((e: Error) => e);

/** Peak resident memory of each API process (the workers; the supervising primary too when there is one). */
const hwm = (pid: number) =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const apiPids = apiProcessIds();
const peakRssMb = Math.max(...apiPids.map(hwm));
const [{ size }] = (await owner`SELECT pg_size_pretty(pg_database_size(current_database())) AS size`) as unknown as [
  { size: string },
];
await api.stop();
await bench.retire();
await owner.end();

let commit = 'unknown';
try {
  commit = execSync('git rev-parse --short HEAD', { stdio: ['ignore', 'pipe', 'ignore'] })
    .toString()
    .trim();
} catch {
  // not a checkout
}
const verdict = (name: string, r: DriveResult) =>
  (TARGETS[name] ?? [])
    .map(
      ([p, ms]) => `${p} ≤ ${ms} ms: ${(r[p] as number) <= ms ? 'met' : `**missed** (${(r[p] as number).toFixed(1)})`}`,
    )
    .join('; ');
const byIdShare = byIdAtLoad && dbFloorTps > 0 ? byIdAtLoad.rps / dbFloorTps : NaN;
/** One row per reason: the targets it misses, measured (an endpoint also alone), why, and what would meet it. */
const measuredByReason = new Map<{ why: string; meet: string }, string[]>();
const noteMiss = (reason: { why: string; meet: string }, measured: string) =>
  measuredByReason.set(reason, [...(measuredByReason.get(reason) ?? []), measured]);
for (const [name, r] of Object.entries(results)) {
  const misses = (TARGETS[name] ?? []).filter(([p, ms]) => (r[p] as number) > ms);
  if (misses.length === 0) continue;
  const a = alone[name]!;
  noteMiss(
    MISSES[name] ?? MISSES.unexplained!,
    `${name}: ${misses.map(([p, ms]) => `${p} ${(r[p] as number).toFixed(1)} ms (target ${ms})`).join(', ')}, alone p95 ${a.p95.toFixed(1)} / p99 ${a.p99.toFixed(1)} ms`,
  );
}
const mixedMet = mixedResult.rps >= MIXED_TARGET_RPS;
if (!mixedMet) {
  noteMiss(
    MISSES.mixed!,
    `mixed: ${mixedResult.rps.toFixed(0)} req/s (target ${MIXED_TARGET_RPS.toLocaleString('en-US')})`,
  );
}
if (!(byIdShare >= BY_ID_FLOOR_TARGET)) {
  noteMiss(
    MISSES['by id floor']!,
    `by id: ${(byIdShare * 100).toFixed(0)}% of its database floor (target ${BY_ID_FLOOR_TARGET * 100}%)`,
  );
}
const missed = [...measuredByReason].map(
  ([reason, measured]) => `| ${measured.join('; ')} | ${reason.why} | ${reason.meet} |`,
);
const rows = Object.entries(results).map(
  ([name, r]) =>
    `| ${name} | ${r.rps.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p95.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.non2xx} | ${alone[name]!.p50.toFixed(2)} / ${alone[name]!.p95.toFixed(2)} / ${alone[name]!.p99.toFixed(2)} | ${(r.rps / httpFloor.rps).toFixed(2)} | ${verdict(name, r)} |`,
);
const report = `# Benchmark results (latest run)

- When: ${new Date().toISOString()}, commit ${commit}
- Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; load generator on the same machine
- Data: ${parcels.toLocaleString('en-US')} parcels, ${sales.toLocaleString('en-US')} sales, ${delinquencies.toLocaleString('en-US')} delinquency records; database size ${size}
- Command: \`RECALL_QUERIES=${values['recall-queries']} make bench SCALE=${parcels}\` (the state from \`bench/state.ts\`, then \`node --import tsx bench/run.ts --seconds ${seconds} --concurrency ${concurrency} --service-seconds ${serviceSeconds} --mixed-concurrency ${mixedConcurrency} --recall-queries ${values['recall-queries']}\`)
- The API runs as ${values.workers} worker process(es) of \`src/main.ts\` (\`WORKERS=${values.workers}\`) with auth and metering on (an Enterprise key with a very high RPM) and its default database pool (\`DATABASE_POOL_SIZE\`: the cores + 1). Each endpoint:
  ${concurrency} concurrent keep-alive connections, ${seconds} s after a warm-up (2 s, then each of its distinct requests once), exact percentiles. The mixed run,
  the HTTP floor and the database floor use ${mixedConcurrency} connections / clients. "Alone" is the same workload again
  at 1 connection for ${serviceSeconds} s: each request's own service time, with nothing queued in front of it (targets are
  judged at ${concurrency} connections).
- Cache: before the runs, ${cache} (\`pg_prewarm\`, mode read), as on a server that has been serving.

| endpoint | req/s | p50 ms | p95 ms | p99 ms | non-2xx | alone p50 / p95 / p99 ms | ratio to HTTP floor | targets (full state) |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
${rows.join('\n')}
| mixed workload | ${mixedResult.rps.toFixed(0)} | ${mixedResult.p50.toFixed(2)} | ${mixedResult.p95.toFixed(2)} | ${mixedResult.p99.toFixed(2)} | ${mixedResult.non2xx} | — | ${(mixedResult.rps / httpFloor.rps).toFixed(2)} | ≥ ${MIXED_TARGET_RPS.toLocaleString('en-US')} req/s: ${mixedMet ? 'met' : '**missed**'} |

Floors measured in the same run:

| floor | throughput | note |
| --- | --- | --- |
| HTTP stack alone (fixed ${sampleBody.length}-byte body) | ${httpFloor.rps.toFixed(0)} req/s | p50 ${httpFloor.p50.toFixed(2)} ms |
| database alone (pgbench, api.get_parcel, ${mixedConcurrency} clients) | ${dbFloorTps.toFixed(0)} tps | parcel by id at the same concurrency: ${byIdAtLoad ? `${byIdAtLoad.rps.toFixed(0)} req/s, ${Number.isNaN(byIdShare) ? '—' : (byIdShare * 100).toFixed(0)}% of the floor` : '—'} (target ≥ ${BY_ID_FLOOR_TARGET * 100}%) |

Mixed workload against the machine's limit: CPU per request over the mixed run, from /proc, was API
${mixedResult.cpu.api.toFixed(0)} µs + Postgres ${mixedResult.cpu.pg.toFixed(0)} µs + Redis ${mixedResult.cpu.redis.toFixed(0)} µs = ${mixedCpuUs.toFixed(0)} µs, so ${cpus().length} cores serve at most
${mixedBoundRps.toFixed(0)} req/s of this mix; the run served ${mixedResult.rps.toFixed(0)} req/s, **${((mixedResult.rps / mixedBoundRps) * 100).toFixed(0)}% of that bound** (the rest of the
cores went to the load generator, in the benchmark's own process, and to anything else running on the machine).

API process peak memory (VmHWM, the largest of ${apiPids.length - (apiPids.length > 1 ? 1 : 0)} API worker process(es)): ${peakRssMb.toFixed(0)} MB (target ≤ 300 MB).

Search quality: recall of the top 25 for ${recall.queries} of the ${searchQueries.length} statewide search queries, against an
exhaustive ranking by the same documented semantics (\`bench/recall.ts\`): **${recall.recall.toFixed(3)}** (target ≥ 0.95:
${recall.recall >= 0.95 ? 'met' : '**missed**'}). Lowest: ${recall.worst.map((w) => `${w.query} ${w.recall.toFixed(2)}`).join(', ')}.${
  recall.skipped.length > 0
    ? ` Not computed (the exhaustive ranking took over ${recall.limitSeconds} s, so these are not in the mean): ${recall.skipped.length} queries, ${recall.skipped.join(', ')}.`
    : ''
}

${
  quality instanceof Error
    ? `Quality set (\`bench/quality.ts\`): not measured on this state (${quality.message}).`
    : `Quality set (\`bench/quality.ts\`, ${quality.pairs} damaged queries ${qualitySource}): recall@1 ${quality.statewide.at1.toFixed(3)} and recall@10 **${quality.statewide.at10.toFixed(3)}** statewide (target ≥ 0.97: ${quality.statewide.at10 >= 0.97 ? 'met' : '**missed**'}), ${quality.inCounty.at1.toFixed(3)} and ${quality.inCounty.at10.toFixed(3)} in the parcel's county. Recall@10 statewide by damage: ${Object.entries(
        quality.byDamage,
      )
        .map(([k, v]) => `${k} ${v.toFixed(3)}`)
        .join(', ')}.`
}

${
  missed.length === 0
    ? 'Every target is met.'
    : `Each missed target: what was measured, why it is missed on this machine, and what would meet it (the measurements behind
each are in \`bench/results/analysis.md\`):

| missed, measured | why | what would meet it |
| --- | --- | --- |
${missed.join('\n')}`
}
`;
writeReport(values.out, report);
console.log(report);
process.exit(0);
