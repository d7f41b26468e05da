// Service addresses: DATABASE_URL is the owner (migrations, imports, operator CLI); the API serves through
// API_DATABASE_URL, by default the same server and database as the read-only role api_reader; it records usage through
// METER_DATABASE_URL, by default the same again as the role api_meter (docs/security.md); the account site writes
// through SITE_DATABASE_URL, as the role api_site.
/** The project-local services of scripts/services.sh, on PGPORT / REDIS_PORT when those are set. */
export const localDatabaseUrl = (env: NodeJS.ProcessEnv = process.env) =>
  `postgres://postgres@127.0.0.1:${env.PGPORT || '55432'}/florida`;
export const localRedisUrl = (env: NodeJS.ProcessEnv = process.env) =>
  `redis://127.0.0.1:${env.REDIS_PORT || '56379'}/0`;

export function ownerDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.DATABASE_URL || localDatabaseUrl(env);
}

/** The same server and database as another role, without a password (the local cluster trusts loopback). */
export function withRole(url: string, role: string): string {
  const u = new URL(url);
  u.username = role;
  u.password = '';
  return u.toString();
}

export function apiDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.API_DATABASE_URL || withRole(ownerDatabaseUrl(env), 'api_reader');
}

/** The usage writer's connection: by default the API's server and database as the role api_meter. */
export function meterDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.METER_DATABASE_URL || withRole(apiDatabaseUrl(env), 'api_meter');
}

/** The account site's connection: by default the API's server and database as the role api_site (docs/site.md). */
export function siteDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.SITE_DATABASE_URL || withRole(apiDatabaseUrl(env), 'api_site');
}

/** The webhooks' connection (management writes, delivery workers): the API's server and database as api_webhooks. */
export function webhooksDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.WEBHOOKS_DATABASE_URL || withRole(apiDatabaseUrl(env), 'api_webhooks');
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
