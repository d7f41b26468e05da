// The daily overage job on graphile-worker (the project's job runner), queue schema billing_jobs: at 00:10 UTC it
// sends the previous UTC day's overage (src/billing/overage.ts). Cron items are taken once across every process that
// runs this, and `?fill=2d` runs a day missed while no process was up. `admin billing overage --day` runs one by hand.
import pg from 'pg';
import { Logger, run, type LogLevel, type Runner } from 'graphile-worker';
import { previousDay, sendOverage } from './overage.ts';
import type { Billing } from './stripe.ts';

export const BILLING_JOB_SCHEMA = 'billing_jobs';
export const OVERAGE_CRONTAB = '10 0 * * * billing_overage ?fill=2d';

interface Log {
  info: (obj: object, msg?: string) => void;
  warn: (obj: object, msg?: string) => void;
  error: (obj: object, msg?: string) => void;
}

export async function startBillingWorker(b: Billing, databaseUrl: string, log: Log): Promise<() => Promise<void>> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 3, application_name: 'florida-billing-jobs' });
  // an idle connection that fails is dropped by the pool and replaced; it must not crash the process
  pool.on('error', (err) => log.warn({ err: err.message }, 'billing job queue connection failed'));
  pool.on('connect', (client) =>
    client.on('error', (err) => log.warn({ err: err.message }, 'billing job queue connection failed')),
  );
  let runner: Runner;
  try {
    runner = await run({
      pgPool: pool,
      schema: BILLING_JOB_SCHEMA,
      concurrency: 1,
      noHandleSignals: true,
      pollInterval: 10_000,
      crontab: OVERAGE_CRONTAB,
      taskList: {
        billing_overage: async (payload) => {
          const ts = (payload as { _cron?: { ts: string } })._cron?.ts;
          const day = previousDay(ts ? Date.parse(ts) : Date.now());
          const result = await sendOverage(b, day);
          log.info({ day, items: result.sent.length }, 'overage invoice items sent');
        },
      },
      logger: new Logger(() => (level: LogLevel, message: string) => {
        if (level === 'error') log.error({}, `billing jobs: ${message}`);
        else if (level === 'warning') log.warn({}, `billing jobs: ${message}`);
      }),
    });
  } catch (err) {
    await pool.end().catch(() => {});
    throw err;
  }
  return async () => {
    await runner.stop().catch(() => {});
    await pool.end().catch(() => {});
  };
}
