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

/** The text between the first and the last letter a-z: `2024p@ssword!!` -> `p@ssword`. */
function trimToLetters(p: string): string {
  let start = 0;
  let end = p.length;
  while (start < end && !/[a-z]/.test(p[start]!)) start++;
  while (end > start && !/[a-z]/.test(p[end - 1]!)) end--;
  return p.slice(start, end);
}

/** The letters that digits and symbols stand for inside a word: `p@ssw0rd` -> `password`. */
const LEET: Record<string, string> = {
  '0': 'o',
  '1': 'i',
  '!': 'i',
  '|': 'i',
  '3': 'e',
  '4': 'a',
  '@': 'a',
  '5': 's',
  $: 's',
  '7': 't',
  '+': 't',
  '8': 'b',
  '9': 'g',
};
const unLeet = (p: string) => p.replace(/[01345789!|@$+]/g, (c) => LEET[c]!);

/** The shortest unit the password repeats (`abcabcabc` -> `abc`), or the password itself. */
function repeatedUnit(p: string): string {
  for (let size = 1; size <= p.length / 2; size++) {
    if (p.length % size === 0 && p.slice(0, size).repeat(p.length / size) === p) return p.slice(0, size);
  }
  return p;
}

/** From one character to the next: 1 up, -1 down, 0 the same (digits wrap: 9 then 0 is up), else something else. */
function step(a: string, b: string): number {
  const digits = /\d/.test(a) && /\d/.test(b);
  const d = digits ? (Number(b) - Number(a) + 10) % 10 : b.codePointAt(0)! - a.codePointAt(0)!;
  return digits && d === 9 ? -1 : d;
}

/** How many runs of one character repeated or of consecutive ones (`aaaa`, `1234`, `9012`, `fedc`) make up the text. */
function runs(p: string): number {
  let count = 1;
  let direction: number | null = null;
  for (let i = 1; i < p.length; i++) {
    const d = step(p[i - 1]!, p[i]!);
    if (direction === null && Math.abs(d) <= 1) direction = d;
    else if (d !== direction) {
      count++;
      direction = null;
    }
  }
  return count;
}

/** The words of an email's name part (`john.smith` -> `john`, `smith`), of 3 letters or more. */
const nameWords = (email: string) =>
  email
    .slice(0, email.indexOf('@'))
    .split(/[^a-z]+/)
    .filter((w) => w.length >= 3);

/**
 * Why a new password is refused, or null when it is acceptable. Refused: shorter than 12 or longer than 256
 * characters; one of the common passwords in any letter case, also spelt with digits or symbols for letters
 * (`p@ssw0rd`), with digits or symbols added before or after it (`password2024!`), or repeated (`passwordpassword1`);
 * mostly runs of repeated or consecutive characters (`123456789012`, `aaaa1111bbbb`); the person's email address,
 * or a password that is mostly the words of its name part (`johnsmith1234` for john.smith@…).
 */
export function passwordProblem(password: string, person: { email?: string } = {}): string | null {
  const length = [...password].length;
  if (length < MIN_PASSWORD) return `Use at least ${MIN_PASSWORD} characters (this one has ${length}).`;
  if (length > MAX_PASSWORD) return `Use at most ${MAX_PASSWORD} characters.`;
  const lower = password.toLowerCase();
  // the word inside added digits and symbols (as written and read as letters), and the unit of a repetition
  const core = trimToLetters(lower);
  const words = [lower, core, unLeet(core)].flatMap((w) => [w, repeatedUnit(w)]);
  if (words.some((w) => w.length >= 4 && COMMON.has(w)) || repeatedUnit(lower).length <= 4) {
    return 'This password is one of the most common passwords, or one of them with letters swapped for digits or symbols, or with digits or symbols added: attackers try those first. Choose another.';
  }
  if (runs(lower) * 4 <= length) {
    return 'This password is mostly repeated or consecutive characters (like 1234 or aaaa), which attackers try first. Choose another.';
  }
  const email = person.email?.toLowerCase() ?? '';
  const local = email.slice(0, email.indexOf('@'));
  const rest = nameWords(email).reduce((p, w) => p.replaceAll(w, ''), unLeet(lower));
  if (email !== '' && (lower.includes(email) || (local.length >= 4 && lower.includes(local)) || rest.length < 8)) {
    return 'Do not build your password from your email address: use words that are not in it.';
  }
  return null;
}

/**
 * argon2id with the library's defaults (64 MiB, 3 passes, 4 lanes). Each hash holds 64 MiB and a core while it runs,
 * so a process runs at most HASHES_AT_ONCE and keeps at most HASHES_WAITING waiting; one address holds at most
 * PER_ADDRESS of them, running or waiting. Waiting work is served one address at a time in turn, so a burst from one
 * address (or a few) delays another address's sign-in by about one hash, not by the burst. Past a bound the work is
 * refused at once with PasswordsBusy, never queued: memory and waiting both stay bounded.
 */
export const HASHES_AT_ONCE = 4;
export const HASHES_WAITING = 8;
export const PER_ADDRESS = 2;

/** Refused before any hashing: too much password work waiting in this process, or from this address. */
export class PasswordsBusy extends Error {
  /** Seconds to suggest in Retry-After: about one turn of the queue. */
  readonly retryAfter = 2;
  override readonly name = 'PasswordsBusy';
  constructor() {
    super('too many password checks waiting');
  }
}

let running = 0;
let waiting = 0;
/** Work per address, running or waiting. */
const held = new Map<string, number>();
/** Waiting turns by address; the map's order is the order addresses are served in (each goes to the back after). */
const turns = new Map<string, (() => void)[]>();

/** Hands a freed slot to the next address's oldest waiting work, or frees it. */
function passOn() {
  const next = turns.entries().next();
  if (next.done) {
    running--;
    return;
  }
  const [address, queue] = next.value;
  turns.delete(address);
  const go = queue.shift()!;
  if (queue.length > 0) turns.set(address, queue);
  waiting--;
  go();
}

/** Runs `work` in one of the process's password slots, in `address`'s turn; throws PasswordsBusy past a bound. */
export async function withPasswordSlot<T>(address: string, work: () => Promise<T>): Promise<T> {
  const mine = held.get(address) ?? 0;
  if (mine >= PER_ADDRESS || (running >= HASHES_AT_ONCE && waiting >= HASHES_WAITING)) throw new PasswordsBusy();
  held.set(address, mine + 1);
  try {
    if (running < HASHES_AT_ONCE) running++;
    else {
      waiting++;
      await new Promise<void>((resolve) => {
        const queue = turns.get(address);
        if (queue) queue.push(resolve);
        else turns.set(address, [resolve]);
      });
    }
    try {
      return await work();
    } finally {
      passOn();
    }
  } finally {
    const left = held.get(address)! - 1;
    if (left === 0) held.delete(address);
    else held.set(address, left);
  }
}

/** The password work of this process now, for tests and metrics. */
export const passwordWork = () => ({ running, waiting });

/** `address`: the request's, whose share of the hashing this takes (see withPasswordSlot). */
export const hashPassword = (password: string, address: string) =>
  withPasswordSlot(address, () => argon2.hash(password, { type: argon2.argon2id }));

/** A hash of a random password, checked when the email is unknown so that the answer takes as long as a real check. */
let decoy: Promise<string> | null = null;

/**
 * Whether `password` matches `hash`; with no hash (unknown email, or no password set yet) checks the decoy: false.
 * Throws PasswordsBusy, as hashPassword.
 */
export async function verifyPassword(
  hash: string | null | undefined,
  password: string,
  address: string,
): Promise<boolean> {
  const check = (h: string) => withPasswordSlot(address, () => argon2.verify(h, password).catch(() => false));
  if (!hash) {
    decoy ??= argon2.hash(randomBytes(16).toString('hex'), { type: argon2.argon2id });
    await check(await decoy);
    return false;
  }
  return check(hash);
}
