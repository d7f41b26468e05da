// Configuration: one TypeBox schema over the environment, decoded once; every bad setting is listed in one error.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  apiDatabaseUrl,
  localRedisUrl,
  meterDatabaseUrl,
  siteDatabaseUrl,
  webhooksDatabaseUrl,
  withRole,
} from './db-url.ts';
import { resolveKeySecret } from './accounts/keys.ts';
import { replicaUrlProblems } from './db/replica-urls.ts';

const ConfigSchema = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('test'), Type.Literal('production')], {
    default: 'development',
  }),
  HOST: Type.String({ default: '127.0.0.1' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  /** The API's own connection, as the read-only role; derived from DATABASE_URL when not set (db-url.ts). */
  API_DATABASE_URL: Type.String({ pattern: '^postgres(ql)?://' }),
  /** The usage writer's connection (usage flush, trial cap, last-used), as api_meter; derived from API_DATABASE_URL. */
  METER_DATABASE_URL: Type.String({ pattern: '^postgres(ql)?://' }),
  /**
   * Connections per API process. Default: the cores plus one. postgres.js pipelines queries on a busy connection, so
   * a few connections kept busy answer more than many each woken for one query (bench/results/ has the measurement).
   */
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 100, default: availableParallelism() + 1 }),
  /**
   * Connections of the pool heavy requests (large pages, facets, CSV and GeoJSON of a list: src/db/heavy.ts) may hold
   * at once; the others wait. Default: DATABASE_POOL_SIZE - 1, at least 1, so light requests always find one.
   */
  HEAVY_CONNECTIONS: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  /**
   * Connections an API process holds at once, and from one client address (0: no per-address cap). Default per
   * address: 256, or none with TRUST_PROXY set, since behind a proxy every connection comes from the proxy's address.
   * Past either, a new connection is closed at once (src/server.ts).
   */
  MAX_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10_000 }),
  MAX_CONNECTIONS_PER_ADDRESS: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  /** How long a keep-alive connection may stay idle between requests before the server closes it. */
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 5000 }),
  /**
   * Streaming read replicas of the API's database (comma-separated postgres:// URLs, as api_reader like
   * API_DATABASE_URL): the API's reads go to them, the primary is the fallback (src/db/replicas.ts, docs/deploy.md).
   */
  DATABASE_REPLICA_URLS: Type.Optional(Type.String()),
  /** A replica further behind the primary than this is taken out of rotation until it catches up. */
  REPLICA_MAX_LAG_MS: Type.Integer({ minimum: 10, maximum: 3_600_000, default: 5000 }),
  /** API processes sharing the port (node:cluster); every one meters through the same Redis and Postgres. */
  WORKERS: Type.Integer({ minimum: 1, maximum: 64, default: 1 }),
  /** Default: the project-local Redis (REDIS_PORT). */
  REDIS_URL: Type.String({ pattern: '^rediss?://' }),
  /**
   * Whether /readyz says not ready while Redis is unreachable. Default false: without Redis the metering fails open
   * (requests are served and charged later), so the API can still serve.
   */
  REDIS_REQUIRED: Type.Boolean({ default: false }),
  /**
   * How long a process stopping on SIGTERM lets requests in flight finish before it cuts them; then usage is flushed
   * and the pools closed (src/server.ts).
   */
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 600_000, default: 10_000 }),
  REDIS_KEY_PREFIX: Type.String({ default: 'fl:' }),
  /**
   * Redis Sentinels (host:port, comma-separated): set, the API asks them for the master named REDIS_SENTINEL_NAME
   * and follows its failovers; REDIS_URL then gives only the user, password, database and TLS (docs/metering.md#failover).
   */
  REDIS_SENTINELS: Type.Optional(
    Type.String({
      pattern:
        '^\\s*(\\[[0-9A-Fa-f:.]+\\]|[^,:\\s\\[\\]]+):\\d{1,5}(\\s*,\\s*(\\[[0-9A-Fa-f:.]+\\]|[^,:\\s\\[\\]]+):\\d{1,5})*\\s*$',
    }),
  ),
  REDIS_SENTINEL_NAME: Type.String({ default: 'florida', minLength: 1 }),
  /** The Sentinels' own password (or REDIS_SENTINEL_PASSWORD_FILE), when they require one. */
  REDIS_SENTINEL_PASSWORD: Type.Optional(Type.String({ minLength: 1 })),
  /**
   * How long charged requests are counted into one usage batch in Redis before it closes; a batch is recorded in
   * Postgres once closed, so usage reaches Postgres within this plus the flush interval (1 s).
   */
  USAGE_BATCH_MS: Type.Integer({ minimum: 10, maximum: 60_000, default: 1000 }),
  /** HMAC secret for API-key hashes (or API_KEY_SECRET_FILE); outside production the local file `make run` makes. */
  API_KEY_SECRET: Type.String({ minLength: 32 }),
  /** Prometheus metrics at /metrics on the API's port for `Authorization: Bearer <METRICS_TOKEN>` (docs/operations.md). */
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 32 })),
  /** Prometheus metrics at /metrics on this port of HOST, without a token (a private scrape network). */
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  /** The map explorer's base map: a MapLibre style URL; unset, parcels are drawn on a plain background. */
  MAP_STYLE_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s"<>]+$' })),
  /** The account site's connection, as api_site; derived from API_DATABASE_URL (docs/site.md). */
  SITE_DATABASE_URL: Type.String({ pattern: '^postgres(ql)?://' }),
  /** The address people reach the service at, for the links the site emails; default http://HOST:PORT. */
  SITE_URL: Type.String({ pattern: '^https?://[^/?#\\s]+$' }),
  /**
   * Proxies whose X-Forwarded-For / X-Forwarded-Proto are believed: '' (none), 'true' (any), a number of hops, or
   * addresses and CIDR ranges separated by commas. Behind an HTTPS proxy it makes the site's cookies Secure and its
   * sign-in limits count the client's address rather than the proxy's.
   */
  TRUST_PROXY: Type.String({ default: '', pattern: '^(|true|false|\\d{1,2}|[0-9A-Za-z.:/]+(, *[0-9A-Za-z.:/]+)*)$' }),
  /** SMTP server for the site's mail (smtp[s]://user:pass@host:port, or SMTP_URL_FILE); unset: mail goes to the log outside production. */
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://' })),
  MAIL_FROM: Type.String({ default: 'Florida Property API <no-reply@localhost>' }),
  /** Where the site tells customers to write to change plan or buy a credit pack. */
  SUPPORT_EMAIL: Type.String({ default: 'support@localhost', pattern: '^[^@\\s]+@[^@\\s]+$' }),
  /** Webhooks (docs/webhooks.md#settings): the api_webhooks connection, derived from API_DATABASE_URL. */
  WEBHOOKS_DATABASE_URL: Type.String({ pattern: '^postgres(ql)?://' }),
  /** Whether each API process also runs the delivery workers (`npm run worker` runs them alone). */
  WEBHOOK_WORKER: Type.Boolean({ default: true }),
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 4 }),
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 60_000, default: 10_000 }),
  /** Seconds before each retry (jittered by up to 20%); after the last, a delivery has failed. About 3 days. */
  WEBHOOK_RETRY_SCHEDULE: Type.String({
    pattern: '^\\d+(\\.\\d+)?(,\\d+(\\.\\d+)?)*$',
    default: '5,60,300,1800,3600,7200,14400,28800,43200,43200,43200,43200,28800',
  }),
  WEBHOOK_DISABLE_AFTER_SECONDS: Type.Number({ minimum: 0, default: 5 * 86400 }),
  WEBHOOK_SWEEP_MS: Type.Integer({ minimum: 50, maximum: 600_000, default: 10_000 }),
  /** http:// and loopback targets (127.0.0.1, ::1): off unless set (`make run` sets it), refused in production. */
  WEBHOOK_ALLOW_LOOPBACK: Type.Boolean({ default: false }),
  /** Key that encrypts the signing secrets at rest; default derived from API_KEY_SECRET. */
  WEBHOOK_SECRET_KEY: Type.Optional(Type.String({ minLength: 32 })),
  /** Stripe (docs/billing.md): the secret key (or STRIPE_SECRET_KEY_FILE); unset, billing is off. */
  STRIPE_SECRET_KEY: Type.Optional(Type.String({ pattern: '^(sk|rk)_(test|live)_[0-9A-Za-z_]+$' })),
  /** The webhook endpoint's signing secret (or STRIPE_WEBHOOK_SECRET_FILE). */
  STRIPE_WEBHOOK_SECRET: Type.Optional(Type.String({ pattern: '^whsec_[0-9A-Za-z_]+$' })),
  /** Another address for Stripe's API (a test double, staging); unset, Stripe's own. */
  STRIPE_API_BASE: Type.Optional(Type.String({ pattern: '^https?://[^/?#\\s]+/?$' })),
  /** Billing's connection, as api_billing; derived from API_DATABASE_URL. */
  BILLING_DATABASE_URL: Type.String({ pattern: '^postgres(ql)?://' }),
});
export type Config = Static<typeof ConfigSchema>;

/** TRUST_PROXY as Fastify's `trustProxy` option (a number of hops as the function proxy-addr makes of it). */
export function trustProxyOption(value: string): boolean | string | ((address: string, hop: number) => boolean) {
  if (value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    return (_address, hop) => hop < hops;
  }
  return value;
}

/** Where a person on this machine reaches the service when SITE_URL is not set. */
function localSiteUrl(host = '127.0.0.1', port = '3000'): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}

/** Reads `NAME` or, failing that, the file named by `NAME_FILE` (for secrets mounted as files). */
function readSetting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const direct = env[name];
  if (direct !== undefined && direct !== '') return direct;
  const file = env[`${name}_FILE`];
  return file ? readFileSync(file, 'utf8').trim() : undefined;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(ConfigSchema.properties)) {
    const value = readSetting(env, key);
    if (value !== undefined) raw[key] = value;
  }
  raw.API_DATABASE_URL ??= apiDatabaseUrl(env);
  raw.METER_DATABASE_URL ??= meterDatabaseUrl({ ...env, API_DATABASE_URL: String(raw.API_DATABASE_URL) });
  raw.REDIS_URL ??= localRedisUrl(env);
  raw.SITE_DATABASE_URL ??= siteDatabaseUrl({ ...env, API_DATABASE_URL: String(raw.API_DATABASE_URL) });
  raw.SITE_URL ??= localSiteUrl(raw.HOST as string | undefined, raw.PORT as string | undefined);
  raw.BILLING_DATABASE_URL ??= withRole(String(raw.API_DATABASE_URL), 'api_billing');
  raw.WEBHOOKS_DATABASE_URL ??= webhooksDatabaseUrl({ ...env, API_DATABASE_URL: String(raw.API_DATABASE_URL) });
  try {
    raw.API_KEY_SECRET ??= resolveKeySecret(env);
  } catch {
    // reported below as a missing API_KEY_SECRET, together with every other problem
  }
  const decoded = Value.Convert(ConfigSchema, Value.Default(ConfigSchema, raw));
  const problems = [...Value.Errors(ConfigSchema, decoded)].map((e) => `${e.path.slice(1) || '(root)'}: ${e.message}`);
  const webhooks = decoded as { NODE_ENV?: string; WEBHOOK_ALLOW_LOOPBACK?: unknown };
  if (webhooks.NODE_ENV === 'production' && webhooks.WEBHOOK_ALLOW_LOOPBACK === true) {
    problems.push('WEBHOOK_ALLOW_LOOPBACK: must not be true in production (webhook targets are https:// only)');
  }
  problems.push(...replicaUrlProblems(decoded as { DATABASE_REPLICA_URLS?: unknown }));
  if (problems.length > 0) throw new Error(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  return decoded as Config;
}
