// Database addresses: DATABASE_URL is the owner (migrations, imports, operator CLI); the API serves through
// API_DATABASE_URL, by default the same server and database as the read-only role api_reader.
export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:55432/florida';

export function ownerDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.DATABASE_URL || DEFAULT_DATABASE_URL;
}

export function apiDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  if (env.API_DATABASE_URL) return env.API_DATABASE_URL;
  const url = new URL(ownerDatabaseUrl(env));
  url.username = 'api_reader';
  url.password = '';
  return url.toString();
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
