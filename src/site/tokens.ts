// Random tokens for sessions and emailed links: 256 bits from the system's cryptographic source, base64url in the
// cookie or the link, SHA-256 in the database (a copy of the table opens no session and follows no link).
import { createHash, randomBytes } from 'node:crypto';

const TOKEN = /^[\w-]{43}$/;

export const newToken = () => randomBytes(32).toString('base64url');

/** Whether a string has the shape of a token; anything else is not looked up. */
export const isToken = (value: unknown): value is string => typeof value === 'string' && TOKEN.test(value);

export const tokenHash = (token: string) => createHash('sha256').update(token).digest();

/** The link's token as the request log may show it: `?token=` and `&token=` values become [REDACTED]. */
export const redactLinkTokens = (url: string) => url.replace(/([?&]token=)[^&#]*/gi, '$1[REDACTED]');
