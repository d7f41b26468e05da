// scripts/patch-postgres.ts: postgres.js's connection queues must not grow with the number of queries served.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { PATCHES, QUEUE_FILES, patchQueue } from '../../scripts/patch-postgres.ts';

type Queue<T> = { length: number; push: (x: T) => T; shift: () => T; remove: (x: T) => T | null };
const [esm] = QUEUE_FILES;
const { default: Queue } = (await import(pathToFileURL(esm!).href)) as { default: <T>(initial?: T[]) => Queue<T> };

t.test('the installed postgres.js has the patched queue, in its ESM and CJS copies', async (t) => {
  for (const file of QUEUE_FILES) {
    const text = readFileSync(file, 'utf8');
    t.equal(patchQueue(text), text, `${file} is patched already`);
    t.match(text, /xs\.indexOf\(x, index\)/, `${file}: remove searches from the head`);
  }
});

t.test(
  'the patch turns the published text into the installed one, once, and refuses a text it does not know',
  async (t) => {
    const patched = readFileSync(QUEUE_FILES[0]!, 'utf8');
    const published = PATCHES.reduce((text, [before, after]) => text.replace(after, before), patched);
    t.not(published, patched);
    t.equal(patchQueue(published), patched, 'the published 3.4.9 text, patched');
    t.equal(patchQueue(patched), patched, 'idempotent');
    t.throws(() => patchQueue('export default function Queue() {}'), /not the 3\.4\.9 text/);
  },
);

t.test('the busy-queue cycle of a saturated pool keeps its order and its length', async (t) => {
  // What postgres.js does per query while all connections are busy: shift one, remove it from its queue, push it.
  const busy = Queue(['a', 'b', 'c']);
  const seen: string[] = [];
  const lengths = new Set<number>();
  let found = 0;
  for (let i = 0; i < 10_000; i++) {
    const c = busy.shift();
    seen.push(c);
    if (busy.remove(c) !== null) found++;
    busy.push(c);
    lengths.add(busy.length);
  }
  t.equal(found, 0, 'a shifted connection is no longer in the queue');
  t.same([...lengths], [3], 'the length stays 3');
  t.same(seen.slice(-6), ['b', 'c', 'a', 'b', 'c', 'a'], 'round robin, in order');
  t.equal(busy.remove('b'), 'b', 'a live element is found and removed');
  t.same([busy.shift(), busy.shift(), busy.length], ['c', 'a', 0]);
});
