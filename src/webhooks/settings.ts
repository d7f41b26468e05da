// Webhook settings, read once from the configuration (src/config.ts; docs/webhooks.md#settings).
import { createHash, hkdfSync } from 'node:crypto';
import type { Config } from '../config.ts';

export interface WebhookSettings {
  /** api_webhooks: the management writes and the workers. */
  databaseUrl: string;
  /** Run the delivery workers inside the API process. */
  worker: boolean;
  /** Endpoints drained at once by one process. */
  concurrency: number;
  /** A delivery is delivered when a 2xx answer arrives within this; otherwise the attempt failed. */
  timeoutMs: number;
  /** Delay before each retry; a delivery has 1 + length attempts. */
  retryScheduleMs: number[];
  /** An endpoint whose every attempt failed for this long is disabled. */
  disableAfterMs: number;
  sweepMs: number;
  /** http:// and loopback targets allowed (WEBHOOK_ALLOW_LOOPBACK, for local development; off unless set). */
  allowLoopback: boolean;
  /** AES-256-GCM key of the signing secrets at rest. */
  secretKey: Buffer;
  /** How long a worker holds an endpoint (renewed while it sends); a worker that dies loses it after this. */
  leaseMs: number;
  maxEndpoints: number;
  /** Finished deliveries and their events are kept this long. */
  retentionMs: number;
  /** The replaced secret keeps signing this long after a rotation. */
  rotationOverlapMs: number;
}

export const MAX_ENDPOINTS_PER_CLIENT = 10;

/** Logged at start by every process that registers or sends webhooks while loopback targets are allowed. */
export const LOOPBACK_WARNING =
  "WEBHOOK_ALLOW_LOOPBACK is on: any client may register http:// webhooks on this machine's loopback ports " +
  "(its database, Redis, anything listening on 127.0.0.1) and read their answers' status codes. Turn it off " +
  'wherever clients other than you can register webhooks.';

const DAY_MS = 86_400_000;

/** The 32-byte key of the secrets at rest: WEBHOOK_SECRET_KEY, else derived from API_KEY_SECRET (HKDF-SHA256). */
export function secretKeyOf(config: Pick<Config, 'WEBHOOK_SECRET_KEY' | 'API_KEY_SECRET'>): Buffer {
  const material = config.WEBHOOK_SECRET_KEY ?? config.API_KEY_SECRET;
  const salt = createHash('sha256').update('florida-property webhooks').digest();
  return Buffer.from(hkdfSync('sha256', material, salt, 'webhook signing secrets at rest', 32));
}

export function webhookSettings(config: Config): WebhookSettings {
  return {
    databaseUrl: config.WEBHOOKS_DATABASE_URL,
    worker: config.WEBHOOK_WORKER,
    concurrency: config.WEBHOOK_CONCURRENCY,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    retryScheduleMs: config.WEBHOOK_RETRY_SCHEDULE.split(',').map((s) => Math.round(Number(s) * 1000)),
    disableAfterMs: Math.round(config.WEBHOOK_DISABLE_AFTER_SECONDS * 1000),
    sweepMs: config.WEBHOOK_SWEEP_MS,
    allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK,
    secretKey: secretKeyOf(config),
    leaseMs: config.WEBHOOK_TIMEOUT_MS + 5000,
    maxEndpoints: MAX_ENDPOINTS_PER_CLIENT,
    retentionMs: 30 * DAY_MS,
    rotationOverlapMs: DAY_MS,
  };
}
