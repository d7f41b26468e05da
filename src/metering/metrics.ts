// The metering's Prometheus series, on the app's registry (src/plugins/metrics.ts): credits charged, requests admitted
// without Redis (fail open), the Redis scripts' latency, and how far the usage flush to Postgres is behind.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Starts timing one call of a Redis script; the function returned records its duration. */
export type ScriptTimer = (script: 'turn' | 'take' | 'ack' | 'reap' | 'init') => () => void;

export function meteringMetrics(registry: Registry, flushLagSeconds: () => number) {
  const registers = [registry];
  const script = new Histogram({
    name: 'florida_redis_script_duration_seconds',
    help: 'Round trip of the metering Redis scripts, by script (turn: admissions and settlements of one turn).',
    labelNames: ['script'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers,
  });
  const timeScript: ScriptTimer = (name) => script.startTimer({ script: name });
  new Gauge({
    name: 'florida_usage_flush_lag_seconds',
    help: 'Seconds since this process last recorded usage in Postgres successfully (it flushes every second).',
    registers,
    collect() {
      this.set(flushLagSeconds());
    },
  });
  return {
    timeScript,
    charged: new Counter({
      name: 'florida_credits_charged_total',
      help: 'Credits charged for 2xx answers of this process, by surface and ledger bucket (unmetered: admitted without Redis).',
      labelNames: ['surface', 'bucket'],
      registers,
    }),
    failOpen: new Counter({
      name: 'florida_metering_fail_open_total',
      help: 'Requests admitted without the rate limit and credit check because Redis did not answer (fail open).',
      labelNames: ['surface'],
      registers,
    }),
    flushFailures: new Counter({
      name: 'florida_usage_flush_failures_total',
      help: 'Usage flushes to Postgres that failed (retried on the next one).',
      registers,
    }),
    replicationTimeouts: new Counter({
      name: 'florida_usage_replication_timeouts_total',
      help: 'Usage flushes whose batches no Redis replica confirmed within 500 ms (Sentinel mode): held back, or recorded all the same once none has answered for a minute.',
      registers,
    }),
  };
}
export type MeteringMetrics = ReturnType<typeof meteringMetrics>;
