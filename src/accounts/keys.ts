// API keys: `flprop_{live|test}_{32 base62}` from a cryptographic source; only HMAC-SHA256(secret, key) is stored.
import { createHmac, randomInt } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const KEY_PREFIX = 'flprop';
export type KeyMode = 'live' | 'test';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}_(live|test)_[0-9A-Za-z]{32}$`);
/** Where `make run` keeps a generated local secret (git-ignored). */
export const LOCAL_SECRET_FILE = join(new URL('../..', import.meta.url).pathname, '.local', 'api-key-secret');

export function generateKey(mode: KeyMode): string {
  let body = '';
  for (let i = 0; i < 32; i++) body += BASE62[randomInt(62)];
  return `${KEY_PREFIX}_${mode}_${body}`;
}

export const isWellFormedKey = (key: string) => KEY_PATTERN.test(key);

export function hashKey(secret: string, key: string): Buffer {
  return createHmac('sha256', secret).update(key).digest();
}

/** What the account page and `key list` show: the prefix and the last four characters, never the key. */
export function displayKey(key: string): string {
  return `${key.slice(0, key.lastIndexOf('_') + 1)}…${key.slice(-4)}`;
}

/**
 * The HMAC secret: API_KEY_SECRET, else the file named by API_KEY_SECRET_FILE, else (outside production) the
 * local file `make run` generates. The server, the operator CLI and the demo key all read it here.
 */
export function resolveKeySecret(env: NodeJS.ProcessEnv = process.env, opts: { create?: boolean } = {}): string {
  if (env.API_KEY_SECRET) return env.API_KEY_SECRET;
  if (env.API_KEY_SECRET_FILE) return readFileSync(env.API_KEY_SECRET_FILE, 'utf8').trim();
  if (env.NODE_ENV === 'production')
    throw new Error('API_KEY_SECRET (or API_KEY_SECRET_FILE) is required in production');
  if (!existsSync(LOCAL_SECRET_FILE)) {
    if (!opts.create)
      throw new Error(`no API key secret: set API_KEY_SECRET or run 'make run' to create ${LOCAL_SECRET_FILE}`);
    mkdirSync(dirname(LOCAL_SECRET_FILE), { recursive: true });
    let secret = '';
    for (let i = 0; i < 48; i++) secret += BASE62[randomInt(62)];
    writeFileSync(LOCAL_SECRET_FILE, `${secret}\n`, { mode: 0o600 });
  }
  return readFileSync(LOCAL_SECRET_FILE, 'utf8').trim();
}
