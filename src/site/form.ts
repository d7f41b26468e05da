// Reading the site's form bodies (application/x-www-form-urlencoded, parsed by @fastify/formbody): a field is a
// string or absent; a repeated field, or one longer than its bound, reads as absent rather than as an error page.

export function field(body: unknown, name: string, max = 1000): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' && value.length <= max ? value : '';
}

/** One @ with something on each side, a dot in the domain, no spaces, at most 254 characters. */
export function isEmail(email: string): boolean {
  if (email.length > 254 || /\s/.test(email)) return false;
  const at = email.indexOf('@');
  return at > 0 && at === email.lastIndexOf('@') && email.slice(at + 1).includes('.') && !email.endsWith('.');
}

/** Where to go after signing in: a page of the site, never another origin. */
export function safeNext(next: string): string {
  return /^\/account(\/[\w-]+)*$/.test(next) ? next : '/account';
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
