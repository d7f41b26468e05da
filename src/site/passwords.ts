// Passwords for the account site: the rules a new one must meet, and argon2id hashing (the `argon2` binding of the
// reference implementation). The common-password list is common-passwords.txt, the 10,000 most common passwords of
// Mark Burnett's ten-million-password corpus as SecLists publishes it (docs/site.md says where from).
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import argon2 from 'argon2';

export const MIN_PASSWORD = 12;
/** Longer input buys no security and costs hashing time. */
export const MAX_PASSWORD = 256;

/** Lower-cased, so that `PassWord` counts as `password`. */
const COMMON = new Set(
  readFileSync(new URL('./common-passwords.txt', import.meta.url), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.toLowerCase()),
);
export const commonPasswordCount = () => COMMON.size;

/** The text between the first and the last letter a-z: `2024password!!` -> `password`. */
function trimToLetters(p: string): string {
  let start = 0;
  let end = p.length;
  while (start < end && !/[a-z]/.test(p[start]!)) start++;
  while (end > start && !/[a-z]/.test(p[end - 1]!)) end--;
  return p.slice(start, end);
}

/** The shortest unit the password repeats (`abcabcabc` -> `abc`), or the password itself. */
function repeatedUnit(p: string): string {
  for (let size = 1; size <= p.length / 2; size++) {
    if (p.length % size === 0 && p.slice(0, size).repeat(p.length / size) === p) return p.slice(0, size);
  }
  return p;
}

/**
 * Why a new password is refused, or null when it is acceptable. Refused: shorter than 12 or longer than 256
 * characters; one of the common passwords in any letter case, also with digits or symbols added before or after it
 * (`password2024!`), or repeated (`qwertyqwerty`); a repetition of a few characters; the person's email address or
 * its name part.
 */
export function passwordProblem(password: string, person: { email?: string } = {}): string | null {
  const length = [...password].length;
  if (length < MIN_PASSWORD) return `Use at least ${MIN_PASSWORD} characters (this one has ${length}).`;
  if (length > MAX_PASSWORD) return `Use at most ${MAX_PASSWORD} characters.`;
  const lower = password.toLowerCase();
  const common = 'This password is one of the most common passwords, which attackers try first. Choose another.';
  if (COMMON.has(lower)) return common;
  // the word inside added digits and symbols, and the unit of a repetition
  const core = trimToLetters(lower);
  const unit = repeatedUnit(lower);
  if ((core.length >= 4 && COMMON.has(core)) || (unit !== lower && (COMMON.has(unit) || unit.length <= 4))) {
    return common;
  }
  const email = person.email?.toLowerCase() ?? '';
  const local = email.slice(0, email.indexOf('@'));
  if (email !== '' && (lower.includes(email) || (local.length >= 4 && lower.includes(local)))) {
    return 'Do not use your email address in your password.';
  }
  return null;
}

/**
 * argon2id with the library's defaults (64 MiB, 3 passes, 4 lanes). Each hash holds 64 MiB while it runs, so at most
 * HASHES_AT_ONCE run at a time and the rest wait their turn: memory stays bounded however many sign-ins arrive.
 */
const HASHES_AT_ONCE = 4;
let running = 0;
const waiting: (() => void)[] = [];

async function bounded<T>(work: () => Promise<T>): Promise<T> {
  if (running >= HASHES_AT_ONCE) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

export const hashPassword = (password: string) => bounded(() => argon2.hash(password, { type: argon2.argon2id }));

/** A hash of a random password, checked when the email is unknown so that the answer takes as long as a real check. */
let decoy: Promise<string> | null = null;

/** Whether `password` matches `hash`; with no hash (unknown email, or no password set yet) checks the decoy: false. */
export async function verifyPassword(hash: string | null | undefined, password: string): Promise<boolean> {
  if (!hash) {
    decoy ??= hashPassword(randomBytes(16).toString('hex'));
    const d = await decoy;
    await bounded(() => argon2.verify(d, password)).catch(() => false);
    return false;
  }
  return bounded(() => argon2.verify(hash, password)).catch(() => false);
}
