// Shared by the importer tests: fixture paths, a scratch rejects path, reading rejects files and raw fixture lines.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCsv } from '../../src/importers/csv.ts';

export const FIXTURES = new URL('../../fixtures/import/', import.meta.url).pathname;
export const fixture = (p: string) => join(FIXTURES, p);

const scratch = mkdtempSync(join(tmpdir(), 'importer-test-'));
export const rejectsPath = (name: string) => join(scratch, `${name}.rejects.csv`);

/** Rejects file rows (line, reason, raw), header dropped. Multi-line raw records are not used by the fixtures. */
export function readRejects(path: string): { line: number; reason: string; raw: string }[] {
  const text = readFileSync(path, 'utf8').trimEnd().split('\n').slice(1);
  return text.map((l) => {
    const [line, reason, raw] = parseCsv(l)!;
    return { line: Number(line), reason: reason!, raw: raw! };
  });
}

/** The fixture's record whose first fields match, as a column -> value map (header from line 1). */
export function rawRow(path: string, match: (fields: string[]) => boolean, encoding: BufferEncoding = 'utf8') {
  const lines = readFileSync(fixture(path), encoding)
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/);
  const header = parseCsv(lines[0]!)!;
  for (const l of lines.slice(1)) {
    const f = parseCsv(l);
    if (f && match(f)) return Object.fromEntries(header.map((h, i) => [h, f[i]!]));
  }
  throw new Error(`no row in ${path}`);
}
