// Operator metrics read from PostgreSQL when Prometheus scrapes (prom-client's collect()), never on the request path:
// import progress from core.load_history (the importers are a separate CLI process; they record their runs and, every
// few seconds, their progress there: src/importers/heartbeat.ts) and the webhook delivery queue
// (webhooks.queue_depth(), through the api_webhooks connection). Also the shutdown's gauges (src/server.ts) and a
// bare /metrics server for a process without the API (`npm run worker`).
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { Gauge, type Registry } from 'prom-client';
import type { Sql } from './db.ts';

/** A scrape waits this long for the database, then reports the gauges without those series. */
const READ_MS = 2000;
/** A running import that has not reported for this long is counted as stalled (its importer was killed). */
export const STALLED_AFTER_S = 60;

/**
 * `read` run once per scrape, however many gauges use it (prom-client collects a scrape's metrics all at once, so they
 * share the read under way), and null when it fails or takes longer than READ_MS: a scrape never fails because the
 * database does not answer.
 */
function perScrape<T>(read: () => Promise<T>, onError: (err: Error) => void): () => Promise<T | null> {
  let pending: Promise<T | null> | null = null;
  return () => {
    if (pending) return pending;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(resolve, READ_MS, null)));
    pending = Promise.race([
      read().catch((err: Error) => {
        onError(err);
        return null;
      }),
      late,
    ]).finally(() => {
      clearTimeout(timer);
      pending = null;
    });
    return pending;
  };
}

interface ImportRow {
  kind: string;
  county: string;
  running: boolean;
  stalled: boolean;
  rows_read: number;
  bytes_read: number | null;
  bytes_total: number | null;
  last_success: number | null;
}

/** Import progress: runs in progress and stalled, rows read and share of the file read, last success per source. */
export function importMetrics(registry: Registry, sql: Sql, onError: (err: Error) => void) {
  const snapshot = perScrape(
    () => sql<ImportRow[]>`
      SELECT h.kind, coalesce(c.slug, 'all') AS county, true AS running,
             coalesce(h.progress_at, h.started_at) < now() - make_interval(secs => ${STALLED_AFTER_S}) AS stalled,
             h.rows_read::float8 AS rows_read, h.bytes_read::float8 AS bytes_read, h.bytes_total::float8 AS bytes_total,
             NULL::float8 AS last_success
        FROM core.load_history h LEFT JOIN core.counties c ON c.id = h.county_id
       WHERE h.status = 'running'
      UNION ALL
      SELECT h.kind, coalesce(c.slug, 'all'), false, false, 0, NULL, NULL,
             extract(epoch FROM max(h.finished_at))::float8
        FROM core.load_history h LEFT JOIN core.counties c ON c.id = h.county_id
       WHERE h.status = 'succeeded'
       GROUP BY h.kind, c.slug`,
    onError,
  );
  /** A gauge set afresh at each scrape from the snapshot's rows (left empty when the database does not answer). */
  const fromRows = (
    name: string,
    help: string,
    labelNames: string[],
    fill: (gauge: Gauge, rows: ImportRow[]) => void,
  ) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const rows = await snapshot();
        this.reset();
        fill(this, rows ?? []);
      },
    });
  // every kind ever imported shows, at 0 when none runs
  fromRows(
    'florida_import_runs_in_progress',
    'Imports running now and reporting progress (core.load_history), by kind.',
    ['kind'],
    (g, rows) => {
      for (const r of rows) g.inc({ kind: r.kind }, r.running && !r.stalled ? 1 : 0);
    },
  );
  fromRows(
    'florida_import_runs_stalled',
    `Imports still marked running that have not reported progress for ${STALLED_AFTER_S} s (a killed importer), by kind.`,
    ['kind'],
    (g, rows) => {
      for (const r of rows) g.inc({ kind: r.kind }, r.running && r.stalled ? 1 : 0);
    },
  );
  fromRows(
    'florida_import_rows_read',
    'Rows read so far by the running imports, by kind and county (all: a file of several counties).',
    ['kind', 'county'],
    (g, rows) => {
      for (const r of rows) if (r.running) g.inc({ kind: r.kind, county: r.county }, r.rows_read);
    },
  );
  fromRows(
    'florida_import_progress_ratio',
    'Share of its input a running import has read (0 to 1, by bytes), by kind and county; absent when unknown.',
    ['kind', 'county'],
    (g, rows) => {
      for (const r of rows) {
        if (r.running && r.bytes_total && r.bytes_read !== null) {
          g.set({ kind: r.kind, county: r.county }, Math.min(1, r.bytes_read / r.bytes_total));
        }
      }
    },
  );
  fromRows(
    'florida_import_last_success_timestamp_seconds',
    'When the last successful import of each kind and county finished (Unix seconds).',
    ['kind', 'county'],
    (g, rows) => {
      for (const r of rows) if (r.last_success !== null) g.set({ kind: r.kind, county: r.county }, r.last_success);
    },
  );
}

/** The webhook delivery queue, read with `sql` (a connection as api_webhooks). */
export function webhookQueueMetrics(registry: Registry, sql: Sql, onError: (err: Error) => void) {
  const snapshot = perScrape(async () => {
    const [r] = await sql<{ due: number; scheduled: number; outbox: number; oldest_due_seconds: number }[]>`
      SELECT due::float8 AS due, scheduled::float8 AS scheduled, outbox::float8 AS outbox, oldest_due_seconds
        FROM webhooks.queue_depth()`;
    return r ?? null;
  }, onError);
  new Gauge({
    name: 'florida_webhook_queue_depth',
    help: 'Pending webhook deliveries: due (to send now) and scheduled (waiting for a retry); outbox: imports not fanned out yet.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const r = await snapshot();
      this.reset();
      if (!r) return;
      this.set({ state: 'due' }, r.due);
      this.set({ state: 'scheduled' }, r.scheduled);
      this.set({ state: 'outbox' }, r.outbox);
    },
  });
  new Gauge({
    name: 'florida_webhook_oldest_due_seconds',
    help: 'How long the oldest due webhook delivery has waited (0 when none is due).',
    registers: [registry],
    async collect() {
      const r = await snapshot();
      this.reset();
      if (r) this.set(r.oldest_due_seconds);
    },
  });
}

/** The shutdown's view of a serving process (src/server.ts): requests in flight, and whether it is stopping. */
export function shutdownMetrics(registry: Registry, state: () => { inFlight: number; shuttingDown: boolean }) {
  new Gauge({
    name: 'florida_http_requests_in_flight',
    help: 'Requests received and not yet answered by this process.',
    registers: [registry],
    collect() {
      this.set(state().inFlight);
    },
  });
  new Gauge({
    name: 'florida_shutting_down',
    help: '1 while this process is shutting down (not ready, finishing what is in flight), else 0.',
    registers: [registry],
    collect() {
      this.set(state().shuttingDown ? 1 : 0);
    },
  });
}

/** The API process's scrape-time metrics: import progress (app.sql) and the webhook queue (app.webhooks.sql). */
export default fp(
  async (app: FastifyInstance) => {
    const warn = (what: string) => (err: Error) => app.log.warn({ err: err.message }, `metrics: ${what} not read`);
    importMetrics(app.metrics, app.sql, warn('import progress'));
    webhookQueueMetrics(app.metrics, app.webhooks.sql, warn('webhook queue'));
  },
  { name: 'ops-metrics', dependencies: ['metrics', 'db', 'webhooks'] },
);
