// The read router's metrics (src/db/replicas.ts): queries and their latency by server and outcome, retries, and, read
// at each scrape, queries in flight, pool size, and each replica's lag and rotation. A server is named primary,
// replica1, replica2... in the order of DATABASE_REPLICA_URLS, never by its address.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** The counters and histogram a query of the router updates. */
export function queryMetrics(registry: Registry) {
  const registers = [registry];
  return {
    queries: new Counter({
      name: 'florida_db_queries_total',
      help: 'API database queries by server (primary, replica1...) and outcome (ok, error: refused by the statement, connection_error, recovery_conflict).',
      labelNames: ['server', 'outcome'],
      registers,
    }),
    duration: new Histogram({
      name: 'florida_db_query_duration_seconds',
      help: 'Time from sending an API database query to its answer, by server.',
      labelNames: ['server'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
      registers,
    }),
    retries: new Counter({
      name: 'florida_db_read_retries_total',
      help: 'Reads run again on another server after a replica could not answer them.',
      labelNames: ['from', 'to'],
      registers,
    }),
  };
}

/** The gauges read from the router's state at each scrape. */
export function serverGauges(
  registry: Registry,
  servers: { name: string; inFlight: number }[],
  replicas: { name: string; lagSeconds: number | null; inRotation: boolean }[],
  poolSize: number,
): void {
  const registers = [registry];
  new Gauge({
    name: 'florida_db_queries_in_flight',
    help: 'API database queries sent and not yet answered, by server (the pool in use).',
    labelNames: ['server'],
    registers,
    collect() {
      for (const s of servers) this.set({ server: s.name }, s.inFlight);
    },
  });
  new Gauge({
    name: 'florida_db_pool_max_connections',
    help: 'Connections each API process may open to the server for requests.',
    labelNames: ['server'],
    registers,
    collect() {
      for (const s of servers) this.set({ server: s.name }, poolSize);
    },
  });
  new Gauge({
    name: 'florida_replica_lag_seconds',
    help: "How far the replica's data is behind the primary: the time since the newest primary WAL position it has replayed was current.",
    labelNames: ['server'],
    registers,
    collect() {
      for (const r of replicas) if (r.lagSeconds !== null) this.set({ server: r.name }, r.lagSeconds);
    },
  });
  new Gauge({
    name: 'florida_replica_in_rotation',
    help: 'Whether the replica serves reads (1) or is out until it is reachable and within REPLICA_MAX_LAG_MS (0).',
    labelNames: ['server'],
    registers,
    collect() {
      for (const r of replicas) this.set({ server: r.name }, r.inRotation ? 1 : 0);
    },
  });
}
