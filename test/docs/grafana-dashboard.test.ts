// docs/grafana-dashboard.json: valid JSON a Grafana of schema 39 imports (a Prometheus datasource variable every panel
// uses), and every metric its panels query is one the app exposes, or one that only an app with read replicas
// registers (LISTED).
import t from 'tap';
import { readFileSync } from 'node:fs';
import { buildTestApp } from '../helpers/app.ts';
import { shutdownMetrics } from '../../src/plugins/ops-metrics.ts';
import { deliveryMetrics } from '../../src/webhooks/metrics.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const TOKEN = 'd'.repeat(40);

/** Metrics the dashboard queries that only an app with read replicas registers (src/db/replicas.ts). */
const LISTED = [
  'florida_db_query_duration_seconds_bucket',
  'florida_db_queries_total',
  'florida_replica_lag_seconds',
  'florida_replica_in_rotation',
];

/** PromQL functions, aggregations and keywords the dashboard uses: anything else in an expression is a metric. */
const PROMQL = new Set([
  'sum',
  'max',
  'min',
  'avg',
  'count',
  'rate',
  'irate',
  'increase',
  'histogram_quantile',
  'time',
  'by',
  'without',
]);

interface Panel {
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: { expr: string; refId: string; datasource?: { uid: string } }[];
}

const dashboard = JSON.parse(readFileSync(`${ROOT}docs/grafana-dashboard.json`, 'utf8')) as {
  schemaVersion: number;
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: unknown }[] };
};

/** The metric names an expression selects: what is left once strings, matchers, ranges and groupings are removed. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"[^"]*"/g, '')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without)\s*\([^)]*\)/g, ' ');
  return (bare.match(/[A-Za-z_:][A-Za-z0-9_:]*/g) ?? []).filter((w) => !PROMQL.has(w));
}

t.test('the dashboard: schema 39, a Prometheus datasource variable, every panel on it', async (t) => {
  t.ok(dashboard.schemaVersion >= 39, 'schemaVersion');
  t.ok(dashboard.uid && dashboard.title, 'uid and title');
  const ds = dashboard.templating.list.find((v) => v.type === 'datasource');
  t.match(ds, { name: 'datasource', query: 'prometheus' }, 'a Prometheus datasource variable');
  const queried = dashboard.panels.filter((p) => p.type !== 'row');
  t.ok(queried.length >= 20, `${queried.length} panels`);
  const ids = new Set<string>();
  for (const p of queried) {
    t.equal(p.datasource?.uid, '${datasource}', `${p.title}: on the datasource variable`);
    t.ok(p.targets && p.targets.length > 0, `${p.title}: queries something`);
    for (const target of p.targets ?? []) {
      t.ok(target.expr.trim().length > 0 && target.refId, `${p.title}: an expression and a refId`);
      t.equal(target.datasource?.uid ?? '${datasource}', '${datasource}');
    }
    t.ok(p.gridPos.x + p.gridPos.w <= 24, `${p.title}: inside the grid`);
    ids.add(`${p.gridPos.x},${p.gridPos.y}`);
  }
  t.equal(ids.size, queried.length, 'no two panels in the same place');
});

t.test('the metric names extracted from an expression', async (t) => {
  t.same(
    metricNames(
      'histogram_quantile(0.95, sum by (le, server) (rate(a_seconds_bucket{instance=~"$i"}[$__rate_interval])))',
    ),
    ['a_seconds_bucket'],
  );
  t.same(metricNames('time() - max by (kind) (x_timestamp{k="v"})'), ['x_timestamp']);
});

t.test('every metric a panel queries is exposed by the app or listed', async (t) => {
  const { app } = await buildTestApp(t, { METRICS_TOKEN: TOKEN });
  // what a serving process adds to the app's registry (src/server.ts): the shutdown's gauges, the webhook workers'
  shutdownMetrics(app.metrics, () => ({ inFlight: 0, shuttingDown: false }));
  deliveryMetrics(app.metrics);
  const text = (await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body;
  const exposed = new Set<string>(LISTED);
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    exposed.add(name!);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) exposed.add(`${name}${s}`);
    if (type === 'summary') for (const s of ['_sum', '_count']) exposed.add(`${name}${s}`);
  }
  const used = new Set<string>();
  for (const p of dashboard.panels)
    for (const target of p.targets ?? []) for (const m of metricNames(target.expr)) used.add(m);
  t.ok(used.size >= 20, `${used.size} metrics queried`);
  for (const name of [...used].sort()) t.ok(exposed.has(name), name);
  for (const name of LISTED) t.ok(used.has(name), `${name}: on the dashboard`);
});
