// Webhooks: (1) what the events cost an import: a county's delinquency list that changes 50,000 records, imported with
// an endpoint subscribed (one tax_delinquency.updated event per record, written in the import's transaction) and
// without one (no event written), alternating in one run; (2) how fast the workers deliver: the events of such an
// import fanned out and POSTed, signed, to a receiver on this machine (a process of its own), with one endpoint and
// with four. Writes bench/results/webhooks.md. Uses its own database, cloned from the test template.
//   node --import tsx bench/webhooks.ts [--records 50000] [--rounds 5] [--template florida_test_template_webhooks]
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { loadConfig } from '../src/config.ts';
import { ownerDatabaseUrl, withDatabase, withRole } from '../src/db-url.ts';
import { importDelinquencies, STANDARD_COLUMNS } from '../src/importers/delinquencies.ts';
import type { ImportSummary } from '../src/importers/pipeline.ts';
import { newSigningSecret, sealSecret } from '../src/webhooks/secrets.ts';
import { webhookSettings } from '../src/webhooks/settings.ts';
import { WebhookWorker } from '../src/webhooks/worker.ts';
import { writeReport } from './report.ts';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '50000' },
    rounds: { type: 'string', default: '5' },
    template: { type: 'string', default: process.env.TEST_TEMPLATE_DB || 'florida_test_template_webhooks' },
    database: { type: 'string', default: 'florida_bench_webhooks' },
  },
});
const RECORDS = Number(values.records);
const ROUNDS = Number(values.rounds);
const ROOT = new URL('..', import.meta.url).pathname;
const COUNTY = 'alachua';
const YEAR = 2019;

const base = ownerDatabaseUrl(process.env);
const url = withDatabase(base, values.database!);

async function freshDatabase() {
  const admin = postgres(withDatabase(base, 'postgres'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP DATABASE IF EXISTS "${values.database}" WITH (FORCE)`);
  await admin.unsafe(`CREATE DATABASE "${values.database}" TEMPLATE "${values.template}"`);
  await admin.end();
}

/** Two versions of one county's list for one tax year: the same records, every one with other amounts and status. */
function writeLists(dir: string): [string, string] {
  const files: [string, string] = [join(dir, 'list-a.csv'), join(dir, 'list-b.csv')];
  files.forEach((file, v) => {
    const lines = [STANDARD_COLUMNS.join(',')];
    for (let i = 0; i < RECORDS; i++) {
      const due = 150 + (i % 9000) + v * 10.5;
      lines.push(
        [
          COUNTY,
          `BENCH-${String(i).padStart(7, '0')}`,
          YEAR,
          v === 0 ? 'delinquent' : 'certificate_sold',
          (due * 0.9).toFixed(2),
          due.toFixed(2),
          `${YEAR}-${String(i).padStart(6, '0')}`,
          v === 0 ? '' : `${YEAR + 1}-06-01`,
          `OWNER NUMBER ${i}`,
          `${i} BENCH AVE`,
          'LienHub',
          v === 0 ? '' : (due * 0.95).toFixed(2),
          v === 0 ? '' : 'BENCH CAPITAL LLC',
          v === 0 ? '' : '18.00',
          v === 0 ? '' : String(0.25 + (i % 72) / 4),
        ].join(','),
      );
    }
    writeFileSync(file, lines.join('\n') + '\n');
  });
  return files;
}

const importList = (file: string, dir: string): Promise<ImportSummary> =>
  importDelinquencies({ file, databaseUrl: url, rejects: join(dir, 'rejects.csv'), quiet: true });

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A receiver in a process of its own: answers 200 at once and counts requests (GET /count). */
async function startReceiver(): Promise<{ child: ChildProcess; port: number; count: () => Promise<number> }> {
  const code = `
    const http = require('node:http');
    let n = 0;
    const s = http.createServer((req, res) => {
      if (req.method === 'GET') { res.end(String(n)); return; }
      req.resume();
      req.on('end', () => { n++; res.writeHead(200); res.end(); });
    });
    s.keepAliveTimeout = 60000;
    s.listen(0, '127.0.0.1', () => process.send(s.address().port));`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [port] = (await once(child, 'message')) as [number];
  const count = async () => Number(await (await fetch(`http://127.0.0.1:${port}/count`)).text());
  return { child, port, count };
}

async function main() {
  const started = new Date();
  await freshDatabase();
  const sql = postgres(url, { max: 2, onnotice: () => {} });
  const dir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'));
  const [listA, listB] = writeLists(dir);
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'development',
    API_DATABASE_URL: withRole(url, 'api_reader'),
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    WEBHOOK_WORKER: 'false',
    LOG_LEVEL: 'warn',
  });
  const settings = webhookSettings(config);
  const [client] = await sql<{ id: string }[]>`
    INSERT INTO accounts.clients (name, email, plan) VALUES ('Bench', 'bench@example.com', 'growth') RETURNING id`;
  const receiver = await startReceiver();
  const endpoints: string[] = [];
  const addEndpoint = async (status: 'enabled' | 'disabled') => {
    const id = randomUUID();
    await sql`
      INSERT INTO webhooks.endpoints (id, client_id, url, events, counties, status, secret_box)
      VALUES (${id}::uuid, ${client!.id}::uuid, ${`http://127.0.0.1:${receiver.port}/hook`},
              '{tax_delinquency.created,tax_delinquency.updated,tax_delinquency.removed,county.data_refreshed}',
              NULL, ${status}, ${sealSecret(settings.secretKey, id, newSigningSecret())})`;
    endpoints.push(id);
    return id;
  };
  const endpoint = await addEndpoint('disabled');
  const setEvents = (on: boolean) =>
    sql`UPDATE webhooks.endpoints SET status = ${on ? 'enabled' : 'disabled'} WHERE id = ${endpoint}::uuid`;
  const clearEvents = () => sql`TRUNCATE webhooks.outbox, webhooks.attempts, webhooks.deliveries, webhooks.events`;

  // (1) the import, with and without events; the first load (inserts) is not measured
  process.stdout.write(`first load of ${RECORDS} records… `);
  await importList(listA, dir);
  console.log('done');
  const runs: { events: boolean; seconds: number; merge: number; updated: number; written: number }[] = [];
  let next = listB;
  // alternating with / without, starting each way in turn (ABBA), so a drift in the machine's load hits both alike
  const order = Array.from({ length: ROUNDS }, (_, i) => (i % 2 === 0 ? [false, true] : [true, false])).flat();
  for (const events of order) {
    await clearEvents();
    await sql`VACUUM ANALYZE core.tax_delinquencies`;
    await setEvents(events);
    const s = await importList(next, dir);
    next = next === listA ? listB : listA;
    const c = s.counties.find((x) => x.county === COUNTY)!;
    const [{ n }] = (await sql`SELECT count(*)::int AS n FROM webhooks.events`) as unknown as [{ n: number }];
    runs.push({ events, seconds: s.seconds, merge: s.phases.merge, updated: Number(c.updated), written: n });
    console.log(
      `import ${events ? 'with' : 'without'} events: ${s.seconds.toFixed(2)} s (merge ${s.phases.merge.toFixed(2)} s), ${c.updated} updated, ${n} events`,
    );
  }
  const withRuns = runs.filter((r) => r.events);
  const withoutRuns = runs.filter((r) => !r.events);
  const tWith = median(withRuns.map((r) => r.seconds));
  const tWithout = median(withoutRuns.map((r) => r.seconds));
  const overhead = tWith / tWithout - 1;
  // each round's two imports ran back to back: their ratio is the least disturbed by other work on the machine
  const pairRatios = Array.from({ length: ROUNDS }, (_, i) => {
    const [a, b] = [runs[2 * i]!, runs[2 * i + 1]!];
    return (a.events ? a.seconds : b.seconds) / (a.events ? b.seconds : a.seconds);
  });
  const mergeWith = median(withRuns.map((r) => r.merge));
  const mergeWithout = median(withoutRuns.map((r) => r.merge));
  const load = loadavg()[0]!;

  // (2) delivery: the events of the last import with events, fanned out and sent by the workers (4 endpoints drained
  // at once by default). One endpoint first, then four (each event to each).
  const deliveryRuns: {
    endpoints: number;
    events: number;
    deliveries: number;
    seconds: number;
    sendSeconds: number;
  }[] = [];
  for (const n of [1, 4]) {
    await clearEvents();
    await sql`UPDATE webhooks.endpoints SET status = 'disabled'`;
    while (endpoints.length < n) await addEndpoint('disabled');
    await sql`UPDATE webhooks.endpoints SET status = 'enabled' WHERE id = ANY (${endpoints.slice(0, n)}::uuid[])`;
    await importList(next, dir);
    next = next === listA ? listB : listA;
    const [{ events }] = (await sql`SELECT count(*)::int AS events FROM webhooks.events`) as unknown as [
      { events: number },
    ];
    const expected = events * n;
    const before = await receiver.count();
    const t0 = performance.now();
    const worker = await WebhookWorker.start(settings, {
      debug: () => {},
      info: () => {},
      warn: (o, msg) => console.warn(msg, o),
      error: (o, msg) => console.error(msg, o),
    });
    for (;;) {
      const [{ done }] = (await sql`
        SELECT count(*)::int AS done FROM webhooks.deliveries WHERE status <> 'pending'`) as unknown as [
        { done: number },
      ];
      if (done >= expected) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const seconds = (performance.now() - t0) / 1000;
    await worker.stop();
    const [span] = await sql<{ s: number; bad: number }[]>`
      SELECT extract(epoch FROM max(attempted_at) - min(attempted_at))::float8 AS s,
             (SELECT count(*)::int FROM webhooks.deliveries WHERE status <> 'delivered') AS bad
        FROM webhooks.attempts`;
    const received = (await receiver.count()) - before;
    if (span!.bad > 0 || received !== expected)
      throw new Error(`expected ${expected} deliveries, got ${received} (${span!.bad} not delivered)`);
    deliveryRuns.push({ endpoints: n, events, deliveries: expected, seconds, sendSeconds: span!.s });
    console.log(
      `${n} endpoint(s): ${expected} deliveries in ${seconds.toFixed(2)} s (${Math.round(expected / seconds)}/s; sending alone ${span!.s.toFixed(2)} s)`,
    );
  }
  receiver.child.kill();
  await sql.end();

  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const report = `# Webhooks benchmark

\`node --import tsx bench/webhooks.ts --records ${RECORDS} --rounds ${ROUNDS}\` on ${started.toISOString().slice(0, 10)};
${availableParallelism()} cores (${cpus()[0]?.model.trim()}), shared with other work; database \`${values.database}\` cloned from
\`${values.template}\`. One county's delinquency list (${COUNTY}, tax year ${YEAR}) of ${RECORDS.toLocaleString('en-US')}
records, imported whole each time through \`npm run import\`'s code; two versions of it alternate, so every import
updates all ${RECORDS.toLocaleString('en-US')} records (status, amounts, certificate fields).

## Import: with events and without

With: one enabled endpoint subscribed to the delinquency events, so the import writes one
\`tax_delinquency.updated\` event (data and previous) per record in its own transaction. Without: the endpoint
disabled, so no event is written. The runs alternate (ABBA); seconds are the whole import (read, check, COPY, merge,
commit).

| run | events | seconds | merge s | records updated | events written |
| --- | --- | ---: | ---: | ---: | ---: |
${runs.map((r, i) => `| ${i + 1} | ${r.events ? 'with' : 'without'} | ${r.seconds.toFixed(2)} | ${r.merge.toFixed(2)} | ${r.updated} | ${r.written} |`).join('\n')}

Median with events ${tWith.toFixed(2)} s, without ${tWithout.toFixed(2)} s: **${pct(overhead)} longer** with events
(target: at most 20%). Per round (the two imports run back to back), with / without:
${pairRatios.map((r) => r.toFixed(2)).join(', ')} (median ${median(pairRatios).toFixed(2)}). The merge transaction alone:
median ${mergeWith.toFixed(2)} s with events, ${mergeWithout.toFixed(2)} s without. Load average when the imports ended:
${load.toFixed(2)} (other work on the machine makes single runs vary; the alternation spreads it over both).

## Delivery

The events of one more such import (${deliveryRuns[0]?.events.toLocaleString('en-US')} events), fanned out and POSTed by
one worker process (\`WEBHOOK_CONCURRENCY\` ${settings.concurrency}) to a receiver on this machine in a process of its
own that answers 200 at once. Each POST is signed (standardwebhooks) and recorded; an endpoint's deliveries go out one
at a time, in order, so one endpoint is one stream and four endpoints are four. Seconds: from the worker's start
(fan-out included) until every delivery is recorded; sending: from the first attempt to the last.

| endpoints | deliveries | seconds | deliveries/s | sending s | deliveries/s while sending |
| ---: | ---: | ---: | ---: | ---: | ---: |
${deliveryRuns.map((r) => `| ${r.endpoints} | ${r.deliveries} | ${r.seconds.toFixed(2)} | ${Math.round(r.deliveries / r.seconds)} | ${r.sendSeconds.toFixed(2)} | ${Math.round(r.deliveries / r.sendSeconds)} |`).join('\n')}

Target: at least 500 events per second to a local receiver.
`;
  writeReport(join(ROOT, 'bench/results/webhooks.md'), report);
  console.log(`wrote bench/results/webhooks.md: import overhead ${pct(overhead)}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
