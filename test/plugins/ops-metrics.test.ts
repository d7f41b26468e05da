// The operator metrics read at scrape time and counted by the webhook workers: import progress from core.load_history
// (runs in progress and stalled, rows read, share read, last success per kind and county), a real import seen while
// it runs, the webhook queue and delivery outcomes through a real worker and receiver, and the shutdown's gauges.
import t from 'tap';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp } from '../helpers/app.ts';
import { FAST, api, importLiberty, quietLog, receiver, settingsFor, waitFor } from '../webhooks/helpers.ts';
import { importDelinquencies, STANDARD_COLUMNS } from '../../src/importers/delinquencies.ts';
import { WebhookWorker } from '../../src/webhooks/worker.ts';
import { deliveryMetrics } from '../../src/webhooks/metrics.ts';
import { shutdownMetrics } from '../../src/plugins/ops-metrics.ts';

const TOKEN = 'o'.repeat(40);
const ctx = await buildTestApp(t, { ...FAST, METRICS_TOKEN: TOKEN });
const { app, db } = ctx;
const sql = db.sql;

async function scrape(): Promise<string> {
  const res = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
  if (res.statusCode !== 200) throw new Error(res.body);
  return res.body;
}
/** The value of the series `name{labels}` (exactly those labels), or undefined when absent. */
function value(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  const head = want ? `${name}{${want}} ` : `${name} `;
  const line = text.split('\n').find((l) => l.startsWith(head));
  return line === undefined ? undefined : Number(line.slice(head.length));
}

t.test('import progress from core.load_history', async (t) => {
  const [dade] = await sql<{ id: number }[]>`SELECT id FROM core.counties WHERE slug = 'miami-dade'`;
  await sql`
    INSERT INTO core.load_history (county_id, kind, file_name, status, rows_read, bytes_read, bytes_total, progress_at,
                                   started_at, finished_at)
    VALUES (${dade!.id}, 'nal', 'running.csv', 'running', 5000, 250, 1000, now(), now() - interval '1 minute', NULL),
           (NULL, 'sdf', 'killed.csv', 'running', 10, 10, 100, now() - interval '10 minutes',
            now() - interval '11 minutes', NULL),
           (${dade!.id}, 'nal', 'done.csv', 'succeeded', 9, 0, 0, NULL,
            '2026-03-01T00:00:00Z', '2026-03-01T01:00:00Z'),
           (${dade!.id}, 'nal', 'failed.csv', 'failed', 9, 0, 0, NULL, '2026-03-02T00:00:00Z', '2026-03-02T01:00:00Z')`;
  t.teardown(
    () => sql`DELETE FROM core.load_history WHERE file_name IN ('running.csv', 'killed.csv', 'done.csv', 'failed.csv')`,
  );
  const text = await scrape();
  t.equal(value(text, 'florida_import_runs_in_progress', { kind: 'nal' }), 1, 'one nal run reporting');
  t.equal(value(text, 'florida_import_runs_in_progress', { kind: 'sdf' }), 0, 'the silent sdf run is not');
  t.equal(value(text, 'florida_import_runs_stalled', { kind: 'sdf' }), 1, 'but stalled');
  t.equal(value(text, 'florida_import_runs_stalled', { kind: 'nal' }), 0);
  t.equal(value(text, 'florida_import_rows_read', { kind: 'nal', county: 'miami-dade' }), 5000);
  t.equal(value(text, 'florida_import_progress_ratio', { kind: 'nal', county: 'miami-dade' }), 0.25);
  t.equal(value(text, 'florida_import_rows_read', { kind: 'sdf', county: 'all' }), 10, 'a file of several counties');
  t.equal(
    value(text, 'florida_import_last_success_timestamp_seconds', { kind: 'nal', county: 'miami-dade' }),
    Date.parse('2026-03-01T01:00:00Z') / 1000,
    'the last success, not the later failure',
  );
  t.equal(
    value(text, 'florida_import_last_success_timestamp_seconds', { kind: 'fixtures', county: 'broward' }),
    Date.parse('2026-07-15T06:00:00Z') / 1000,
  );
  t.match(text, /# TYPE florida_import_runs_in_progress gauge/);
});

t.test('a real import reports its progress while it runs, and its success after', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ops-metrics-'));
  const file = join(dir, 'liberty.csv');
  const rows = Array.from({ length: 50 }, (_, i) =>
    ['liberty', `OPS-${i}`, 1980, 'delinquent', '10.00', '12.00', `C-${i}`, '', 'OWNER', '1 MAIN ST', 'TaxCertSale']
      .concat(['', '', '', ''])
      .join(','),
  );
  writeFileSync(file, [STANDARD_COLUMNS.join(','), ...rows].join('\n') + '\n');
  let during = '';
  let reported: { rows_read: number; bytes_read: number; bytes_total: number } | undefined;
  await importDelinquencies({
    file,
    databaseUrl: db.ownerUrl,
    rejects: join(dir, 'rejects.csv'),
    quiet: true,
    progressEveryMs: 20,
    // inside the merge transaction: to every other session the run is still running
    beforeCommit: async () => {
      reported = await waitFor('a report after the file was read', async () => {
        const [r] = await sql<{ rows_read: number; bytes_read: number; bytes_total: number }[]>`
          SELECT rows_read::int, bytes_read::int, bytes_total::int FROM core.load_history
           WHERE kind = 'delinquencies' AND status = 'running' AND rows_read = 50`;
        return r;
      });
      during = await scrape();
    },
  });
  t.same(reported, { rows_read: 50, bytes_read: statSync(file).size, bytes_total: statSync(file).size });
  t.equal(value(during, 'florida_import_runs_in_progress', { kind: 'delinquencies' }), 1, 'in progress');
  t.equal(value(during, 'florida_import_progress_ratio', { kind: 'delinquencies', county: 'all' }), 1, 'file read');
  t.equal(value(during, 'florida_import_rows_read', { kind: 'delinquencies', county: 'all' }), 50);
  const after = await scrape();
  t.equal(value(after, 'florida_import_runs_in_progress', { kind: 'delinquencies' }), 0, 'done');
  t.equal(value(after, 'florida_import_rows_read', { kind: 'delinquencies', county: 'all' }), undefined);
  const success = value(after, 'florida_import_last_success_timestamp_seconds', {
    kind: 'delinquencies',
    county: 'liberty',
  });
  t.ok(success !== undefined && Math.abs(success - Date.now() / 1000) < 600, 'its success, just now');
});

t.test('webhook queue depth and delivery outcomes', async (t) => {
  const m = api(ctx);
  // the first request fails (a retry is scheduled), every other succeeds
  const r = await receiver(t, (_req, n) => ({ status: n === 1 ? 500 : 200 }));
  await m.create({ url: r.url, events: ['tax_delinquency.created'], counties: ['liberty'] });
  await importLiberty(db, 1975, 2);
  const queued = await scrape();
  t.equal(value(queued, 'florida_webhook_queue_depth', { state: 'outbox' }), 1, 'the import waits for its fan-out');
  t.equal(value(queued, 'florida_webhook_queue_depth', { state: 'due' }), 0);

  const worker = await WebhookWorker.start(settingsFor(db), quietLog, deliveryMetrics(app.metrics));
  t.teardown(() => worker.stop());
  await waitFor('2 deliveries recorded', async () => {
    const [n] = await sql<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM webhooks.deliveries WHERE status = 'delivered'`;
    return n!.n === 2;
  });
  const text = await scrape();
  t.equal(value(text, 'florida_webhook_deliveries_total', { outcome: 'retrying' }), 1, 'one failed attempt, retried');
  t.equal(value(text, 'florida_webhook_deliveries_total', { outcome: 'delivered' }), 2);
  t.equal(value(text, 'florida_webhook_deliveries_total', { outcome: 'failed' }), 0);
  t.equal(value(text, 'florida_webhook_attempt_duration_seconds_count', { outcome: 'delivered' }), 2);
  t.equal(value(text, 'florida_webhook_delivery_latency_seconds_count'), 2);
  for (const state of ['outbox', 'due', 'scheduled']) {
    t.equal(value(text, 'florida_webhook_queue_depth', { state }), 0, `${state}: empty again`);
  }
  t.equal(value(text, 'florida_webhook_oldest_due_seconds'), 0);
});

t.test('the shutdown gauges read the serving state at each scrape', async (t) => {
  const state = { inFlight: 3, shuttingDown: false };
  shutdownMetrics(app.metrics, () => state);
  let text = await scrape();
  t.equal(value(text, 'florida_http_requests_in_flight'), 3);
  t.equal(value(text, 'florida_shutting_down'), 0);
  state.inFlight = 0;
  state.shuttingDown = true;
  text = await scrape();
  t.equal(value(text, 'florida_http_requests_in_flight'), 0);
  t.equal(value(text, 'florida_shutting_down'), 1);
});

t.test('a database that does not answer leaves the series out, and the scrape still answers', async (t) => {
  const broken = await buildTestApp(t, { ...FAST, METRICS_TOKEN: TOKEN, API_DATABASE_URL: deadUrl() }, { db });
  const res = await broken.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  t.equal(res.statusCode, 200);
  t.equal(value(res.body, 'florida_import_runs_in_progress', { kind: 'fixtures' }), undefined);
  t.match(res.body, /http_requests_total|process_cpu/, 'the rest is there');
});

/** The API's database URL on a port nothing listens on (3318, in this helper's range). */
function deadUrl() {
  const url = new URL(db.apiUrl);
  url.port = '3318';
  return url.toString();
}
