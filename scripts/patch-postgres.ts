// Fixes a slowdown in postgres.js 3.4.9 (the newest release): run by `postinstall`, idempotent.
//
// postgres.js keeps each connection queue (open, busy, full, ...) in an array with a head index: `shift` leaves a hole
// and only empties the array when it takes the last element; `remove` scans the array from its start. Under sustained
// load every connection stays in the busy queue, so that never happens: each query shifts a connection off the busy
// queue and pushes it back, the array grows by one element per query, and `remove` (called on every move) scans all
// of it. The API process gets slower the longer the load lasts: GET /parcels/1 at 32 connections went from 59 to
// 150 µs of CPU a request within 40 s, and 45% of the process's time was `remove` (bench/steady.ts).
//
// The patch makes `remove` search only the live part of the array and `shift` drop the consumed head once it is at
// least half the array, so every operation is amortized O(1) in the queue's live length. It rewrites the ESM and CJS
// copies of queue.js; an installed file that is neither the known original nor the patched one stops the install
// (a new postgres.js: check whether it fixed this, then drop or adapt this script).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const REMOVE: [before: string, after: string] = [
  `      const index = xs.indexOf(x)
      return index === -1
        ? null
        : (xs.splice(index, 1), x)`,
  `      // patched (scripts/patch-postgres.ts): only the live part, from the head on
      const at = xs.indexOf(x, index)
      return at === -1
        ? null
        : (xs.splice(at, 1), x)`,
];
const SHIFT: [before: string, after: string] = [
  `        xs[index - 1] = undefined
      }`,
  `        xs[index - 1] = undefined
        // patched (scripts/patch-postgres.ts): drop the consumed head once it is half the array
        if (index >= 64 && index * 2 >= xs.length) {
          xs = xs.slice(index)
          index = 0
        }
      }`,
];
/** Each change to queue.js: [the 3.4.9 text, the patched text]. */
export const PATCHES = [REMOVE, SHIFT];

/** The installed copies of queue.js: ESM (what the API imports) and CJS. */
export const QUEUE_FILES = ['src/queue.js', 'cjs/src/queue.js'].map((f) =>
  fileURLToPath(new URL(`../node_modules/postgres/${f}`, import.meta.url)),
);

/** queue.js patched; the text unchanged when it is patched already; throws on any other text. */
export function patchQueue(text: string): string {
  if (PATCHES.every(([, after]) => text.includes(after))) return text;
  if (!PATCHES.every(([before]) => text.includes(before))) {
    throw new Error(
      'postgres.js queue.js is not the 3.4.9 text this patch knows: check whether the new release fixed the ' +
        'growing connection queue, then update or remove scripts/patch-postgres.ts',
    );
  }
  return PATCHES.reduce((patched, [before, after]) => patched.replace(before, after), text);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    for (const file of QUEUE_FILES) {
      const text = readFileSync(file, 'utf8');
      const patched = patchQueue(text);
      if (patched !== text) writeFileSync(file, patched);
    }
  } catch (err) {
    console.error(`patch-postgres: ${(err as Error).message}`);
    process.exit(1);
  }
}
