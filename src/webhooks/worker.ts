// The delivery workers (docs/webhooks.md#delivery), on graphile-worker: jobs in the schema webhooks_jobs carry the
// wake-ups, the state lives in the webhooks tables (sql/webhooks/deliveries.sql). Three tasks:
//   webhooks_fanout   matches queued imports against the saved searches (saved.match_next), then turns their events
//                     into deliveries (NOTIFY webhooks_outbox at an import's commit);
//   webhooks_drain    sends one endpoint's due deliveries in event order, under a lease on the endpoint, and schedules
//                     itself for the endpoint's next retry; a client's endpoints take at most its share of the slots;
//   webhooks_sweep    every WEBHOOK_SWEEP_MS: queued imports and due endpoints whose wake-up was lost or whose worker
//                     died (its lease ran out), and the retention purge.
// Any number of processes may run it: jobs are taken once, imports are fanned out once (row locks), an endpoint is
// drained by one worker at a time (its lease). A worker killed mid-delivery leaves its claims to run out; the next
// worker records an interrupted attempt and sends again with the same webhook-id.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import postgres from 'postgres';
import { Logger, run, type LogLevel, type Runner, type Task, type TaskSpec } from 'graphile-worker';
import type { WebhookSettings } from './settings.ts';
import { openSecret } from './secrets.ts';
import { Sender, eventBody, signer, type AttemptResult } from './send.ts';
import type { DeliveryMetrics } from './metrics.ts';

/** The pino methods the worker logs with (a Fastify logger or a pino instance). */
export interface WorkerLog {
  debug: (obj: object, msg?: string) => void;
  info: (obj: object, msg?: string) => void;
  warn: (obj: object, msg?: string) => void;
  error: (obj: object, msg?: string) => void;
}

export const JOB_SCHEMA = 'webhooks_jobs';
/** Deliveries claimed at once; the lease is renewed between them when a slow receiver needs it. */
const BATCH = 100;
/** Events fanned out per transaction. */
const FANOUT_CHUNK = 10_000;
/** Consecutive failed attempts after which an endpoint rests until its earliest retry. */
const BREAKER = 5;
const PURGE_LIMIT = 10_000;

interface Claimed {
  delivery_id: string;
  attempt: number;
  manual: boolean;
  event_id: string;
  type: string;
  created_at: string;
  data: string;
  previous: string | null;
}

/**
 * The slots of a process one client's endpoints may take at once: half (at least one), so that a client whose
 * receivers hang (each attempt holding a slot until the timeout) leaves the other half to every other client.
 */
export const clientSlots = (concurrency: number) => Math.max(1, Math.floor(concurrency / 2));

/** When attempt `n` (1-based) failed: the time of the next one, or null when none is left. Jitter: ±20%. */
export function nextAttemptAt(settings: Pick<WebhookSettings, 'retryScheduleMs'>, n: number, now = Date.now()) {
  const delay = settings.retryScheduleMs[n - 1];
  if (delay === undefined) return null;
  return new Date(now + Math.round(delay * (0.8 + 0.4 * Math.random())));
}

export class WebhookWorker {
  readonly id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private seq = 0;
  private runner: Runner | null = null;
  private timer: NodeJS.Timeout | null = null;
  private listening: { unlisten: () => Promise<void> } | null = null;
  private readonly sql: postgres.Sql;
  private readonly pool: pg.Pool;
  private readonly sender: Sender;
  private readonly maxAttempts: number;
  private readonly clientSlots: number;
  /** Drains running in this process, by client. */
  private readonly running = new Map<string, number>();
  /** Endpoints handed back because their client had used its share, by client: queued again when a slot frees. */
  private readonly waiting = new Map<string, Set<string>>();

  private constructor(
    private readonly settings: WebhookSettings,
    private readonly log: WorkerLog,
    private readonly metrics: DeliveryMetrics | null,
  ) {
    this.sql = postgres(settings.databaseUrl, {
      max: settings.concurrency + 1,
      idle_timeout: 60,
      connect_timeout: 10,
      onnotice: () => {},
      connection: { application_name: 'florida-webhooks' },
    });
    this.pool = new pg.Pool({
      connectionString: settings.databaseUrl,
      max: settings.concurrency + 2,
      application_name: 'florida-webhooks-jobs',
    });
    // an idle connection that fails is dropped by the pool and replaced; it must not crash the process
    this.pool.on('error', (err) => log.warn({ err: err.message }, 'webhook job queue connection failed'));
    this.pool.on('connect', (client) =>
      client.on('error', (err) => log.warn({ err: err.message }, 'webhook job queue connection failed')),
    );
    this.sender = new Sender({ allowLoopback: settings.allowLoopback }, settings.timeoutMs);
    this.maxAttempts = settings.retryScheduleMs.length + 1;
    this.clientSlots = clientSlots(settings.concurrency);
  }

  /** Installs or upgrades the job queue (inside webhooks_jobs), then starts taking jobs; counts attempts in `metrics`. */
  static async start(
    settings: WebhookSettings,
    log: WorkerLog,
    metrics: DeliveryMetrics | null = null,
  ): Promise<WebhookWorker> {
    const w = new WebhookWorker(settings, log, metrics);
    try {
      await w.begin();
    } catch (err) {
      await w.stop();
      throw err;
    }
    return w;
  }

  private async begin() {
    const tasks: Record<string, Task> = {
      webhooks_fanout: () => this.fanOut(),
      webhooks_drain: (payload) => this.drain((payload as { endpoint: string }).endpoint),
      webhooks_sweep: () => this.sweep(),
    };
    const log = this.log;
    const logger = new Logger(() => (level: LogLevel, message: string) => {
      if (level === 'error') log.error({}, `webhook jobs: ${message}`);
      else if (level === 'warning') log.warn({}, `webhook jobs: ${message}`);
      else log.debug({}, `webhook jobs: ${message}`);
    });
    this.runner = await run({
      pgPool: this.pool,
      schema: JOB_SCHEMA,
      concurrency: this.settings.concurrency,
      noHandleSignals: true,
      pollInterval: 1000,
      taskList: tasks,
      logger,
    });
    this.listening = await this.sql.listen(
      'webhooks_outbox',
      () => void this.add('webhooks_fanout', {}, { jobKey: 'webhooks_fanout' }),
      // on every (re)connection: anything queued while nobody listened is found by a sweep
      () => void this.add('webhooks_sweep', {}, { jobKey: 'webhooks_sweep' }),
    );
    this.timer = setInterval(
      () => void this.add('webhooks_sweep', {}, { jobKey: 'webhooks_sweep' }),
      this.settings.sweepMs,
    );
    this.timer.unref();
    this.log.info({ worker: this.id, concurrency: this.settings.concurrency }, 'webhook workers started');
  }

  /** Stops taking jobs, lets the running ones finish (graphile-worker's graceful stop), closes the connections. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.listening?.unlisten().catch(() => {});
    this.listening = null;
    await this.runner?.stop().catch((err: Error) => this.log.warn({ err: err.message }, 'webhook workers stop'));
    this.runner = null;
    this.sender.close();
    await this.sql.end({ timeout: 5 });
    await this.pool.end().catch(() => {});
  }

  private async add(task: string, payload: object, spec: TaskSpec) {
    try {
      await this.runner?.addJob(task, payload, spec);
    } catch (err) {
      this.log.warn({ err: (err as Error).message, task }, 'could not queue a webhook job; the sweep will');
    }
  }

  private kick(endpoint: string) {
    return this.add('webhooks_drain', { endpoint }, { jobKey: `webhooks_drain:${endpoint}` });
  }

  /**
   * Matches the queued imports against the saved searches, oldest first, one transaction each. A matching that fails
   * is logged and stays queued (the sweep brings it back, and the imports after it wait: matches are made in order);
   * it never holds back the fan-out of the imports' own events.
   */
  private async matchQueued() {
    try {
      for (;;) {
        const [m] = await this.sql<{ load_id: string | null; events: number | null }[]>`
          SELECT load_id, events FROM saved.match_next()`;
        if (m!.load_id === null) return;
        this.log.debug({ load: m!.load_id, events: m!.events }, 'saved searches matched');
      }
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'saved-search matching failed; the import stays queued');
    }
  }

  /** The queued imports matched against the saved searches, then their events turned into deliveries. */
  private async fanOut() {
    await this.matchQueued();
    for (;;) {
      const [r] = await this.sql<{ took: boolean; endpoint_ids: string[]; more: boolean }[]>`
        SELECT took, endpoint_ids, more FROM webhooks.fan_out(${FANOUT_CHUNK})`;
      for (const endpoint of r!.endpoint_ids) await this.kick(endpoint);
      if (!r!.took || !r!.more) return;
    }
  }

  private async sweep() {
    const [r] = await this.sql<{ outbox_pending: boolean; due_endpoints: string[]; purged: number }[]>`
      SELECT outbox_pending, due_endpoints, purged FROM webhooks.sweep(${this.settings.retentionMs}, ${PURGE_LIMIT})`;
    if (r!.outbox_pending) await this.add('webhooks_fanout', {}, { jobKey: 'webhooks_fanout' });
    for (const endpoint of r!.due_endpoints) await this.kick(endpoint);
    if (r!.purged > 0) this.log.debug({ purged: r!.purged }, 'webhook retention purge');
  }

  /**
   * Sends the endpoint's due deliveries while it holds the endpoint's lease; another worker's lease means it is done.
   * When the endpoint's client already has its share of this process's slots, the endpoint is handed back at once.
   */
  async drain(endpoint: string): Promise<void> {
    const owner = `${this.id}:${++this.seq}`;
    let client: string | null = null;
    try {
      for (;;) {
        const [ep] = await this.sql<
          { url: string; secret_box: Buffer; old_secret_box: Buffer | null; client_id: string }[]
        >`
          SELECT url, secret_box, old_secret_box, client_id::text
            FROM webhooks.acquire_endpoint(${endpoint}::uuid, ${owner}, ${this.settings.leaseMs})`;
        if (!ep) return;
        if (client === null) {
          if ((this.running.get(ep.client_id) ?? 0) >= this.clientSlots) {
            await this.handBack(endpoint, owner, ep.client_id);
            return;
          }
          client = ep.client_id;
          this.running.set(client, (this.running.get(client) ?? 0) + 1);
        }
        let restUntil: Date | null = null;
        let failure: unknown = null;
        try {
          restUntil = await this.sendDue(endpoint, owner, ep);
        } catch (err) {
          failure = err;
          // (a database failure, or a secret that no longer opens): rest, and let the job be retried
          restUntil = new Date(Date.now() + this.settings.sweepMs);
        }
        const [left] = await this.sql<{ due_now: boolean | null; next_at: Date | null }[]>`
          SELECT due_now, next_at FROM webhooks.release_endpoint(${endpoint}::uuid, ${owner}, ${restUntil})`;
        if (failure) throw failure;
        if (left?.due_now) continue;
        if (left?.next_at) {
          await this.add('webhooks_drain', { endpoint }, { jobKey: `webhooks_retry:${endpoint}`, runAt: left.next_at });
        }
        return;
      }
    } finally {
      if (client !== null) this.slotFreed(client);
    }
  }

  /** Releases the lease of an endpoint whose client has used its share; it is queued again once a slot frees. */
  private async handBack(endpoint: string, owner: string, client: string) {
    await this.sql`SELECT FROM webhooks.release_endpoint(${endpoint}::uuid, ${owner}, NULL)`;
    this.log.debug({ endpoint, client }, "webhook endpoint waits for its client's share of the slots");
    if ((this.running.get(client) ?? 0) < this.clientSlots) {
      await this.kick(endpoint); // a slot freed meanwhile
      return;
    }
    const waiting = this.waiting.get(client) ?? new Set<string>();
    this.waiting.set(client, waiting.add(endpoint));
  }

  private slotFreed(client: string) {
    const n = this.running.get(client)! - 1;
    if (n > 0) this.running.set(client, n);
    else this.running.delete(client);
    const waiting = this.waiting.get(client);
    this.waiting.delete(client);
    for (const endpoint of waiting ?? []) void this.kick(endpoint);
  }

  /** Claims and sends batch after batch; returns when the endpoint should rest (after BREAKER failures in a row). */
  private async sendDue(
    endpoint: string,
    owner: string,
    ep: { url: string; secret_box: Buffer; old_secret_box: Buffer | null },
  ): Promise<Date | null> {
    const key = this.settings.secretKey;
    const sign = signer(
      openSecret(key, endpoint, ep.secret_box),
      ep.old_secret_box ? openSecret(key, endpoint, ep.old_secret_box) : null,
    );
    let failedInARow = 0;
    for (;;) {
      const claimedAt = Date.now();
      const batch = await this.sql<Claimed[]>`
        SELECT delivery_id::text, attempt, manual, event_id, type, created_at, data, previous
          FROM webhooks.claim_deliveries(${endpoint}::uuid, ${owner}, ${BATCH}, ${this.settings.leaseMs},
                                         ${this.maxAttempts})`;
      if (batch.length === 0) return null;
      let leaseEnds = claimedAt + this.settings.leaseMs;
      const results: (AttemptResult & { d: Claimed; next: Date | null })[] = [];
      const unsent: string[] = [];
      let rest: Date | null = null;
      for (const d of batch) {
        if (rest === null && Date.now() + this.settings.timeoutMs + 1000 > leaseEnds) {
          const renewedAt = Date.now();
          const [r] = await this.sql<{ until: Date | null }[]>`
            SELECT webhooks.renew_lease(${endpoint}::uuid, ${owner}, ${this.settings.leaseMs}) AS until`;
          if (!r?.until) rest = new Date(); // the lease is gone (this worker stalled): stop; the other worker sends
          leaseEnds = renewedAt + this.settings.leaseMs;
        }
        if (rest !== null) {
          unsent.push(d.delivery_id);
          continue;
        }
        const body = eventBody(d);
        const at = new Date();
        const result = await this.sender.post(
          ep.url,
          {
            'webhook-id': d.event_id,
            'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
            'webhook-signature': sign.sign(d.event_id, at, body),
          },
          body,
        );
        const next = result.ok || d.manual ? null : nextAttemptAt(this.settings, d.attempt);
        results.push({ ...result, d, next });
        this.metrics?.attempt(result.ok ? 'delivered' : next ? 'retrying' : 'failed', result.durationMs, d.created_at);
        failedInARow = result.ok ? 0 : failedInARow + 1;
        if (failedInARow >= BREAKER) {
          const retries = results.filter((r) => !r.ok && r.next).map((r) => r.next!.getTime());
          rest = new Date(retries.length ? Math.min(...retries) : Date.now() + this.settings.sweepMs);
        }
      }
      const lastSuccess = results.map((r) => r.ok).lastIndexOf(true);
      const firstFailureAfter = results.slice(lastSuccess + 1).find((r) => !r.ok);
      const [rec] = await this.sql<{ enabled: boolean }[]>`
        SELECT webhooks.record_attempts(
          ${endpoint}::uuid,
          ${this.sql.json(
            results.map((r) => ({
              delivery_id: Number(r.d.delivery_id),
              attempt: r.d.attempt,
              attempted_at: r.attemptedAt.toISOString(),
              duration_ms: r.durationMs,
              status_code: r.statusCode,
              error: r.error,
              ok: r.ok,
              next_attempt_at: r.next?.toISOString() ?? null,
            })),
          )}::jsonb,
          ${unsent}::bigint[],
          ${lastSuccess >= 0},
          ${firstFailureAfter?.attemptedAt ?? null},
          ${this.settings.disableAfterMs}
        ) AS enabled`;
      if (!rec?.enabled) return null;
      if (rest) return rest;
    }
  }
}
