// The delivery workers' metrics (prom-client), counted where deliveries are sent: in each API process that runs the
// workers (WEBHOOK_WORKER, on the app's registry) or in `npm run worker` (its own registry, on METRICS_PORT).
// The queue they work through is measured from the database at scrape time (src/plugins/ops-metrics.ts).
import { Counter, Histogram, type Registry } from 'prom-client';

/** What became of one attempt: delivered, failed with a retry scheduled, or failed for good (no attempt left). */
export type AttemptOutcome = 'delivered' | 'retrying' | 'failed';

export interface DeliveryMetrics {
  /** One attempt's answer: its outcome, how long the receiver took, and when its event happened. */
  attempt: (outcome: AttemptOutcome, durationMs: number, eventCreatedAt: string) => void;
}

export function deliveryMetrics(registry: Registry): DeliveryMetrics {
  const registers = [registry];
  const attempts = new Counter({
    name: 'florida_webhook_deliveries_total',
    help: 'Delivery attempts by outcome: delivered, retrying (failed, another attempt scheduled), failed (no attempt left).',
    labelNames: ['outcome'],
    registers,
  });
  const duration = new Histogram({
    name: 'florida_webhook_attempt_duration_seconds',
    help: "Time from sending a delivery to the receiver's answer (or the timeout), by outcome.",
    labelNames: ['outcome'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const latency = new Histogram({
    name: 'florida_webhook_delivery_latency_seconds',
    help: 'Time from an event (its import committing) to its delivery, for delivered attempts.',
    buckets: [0.5, 1, 5, 15, 60, 300, 1800, 3600, 6 * 3600, 24 * 3600, 3 * 86400],
    registers,
  });
  for (const outcome of ['delivered', 'retrying', 'failed']) attempts.inc({ outcome }, 0);
  return {
    attempt(outcome, durationMs, eventCreatedAt) {
      attempts.inc({ outcome });
      duration.observe({ outcome }, durationMs / 1000);
      const created = Date.parse(eventCreatedAt);
      if (outcome === 'delivered' && Number.isFinite(created)) {
        latency.observe(Math.max(0, (Date.now() - created) / 1000));
      }
    },
  };
}
