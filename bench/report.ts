// Writing a benchmark's report over the last one while keeping the notes written by hand below it.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** The line after which a report file holds notes kept by hand; a benchmark rewrites only what comes before it. */
export const HISTORY = '<!-- Kept by hand below this line: the benchmark rewrites only the report above it. -->';

/** Writes `report` as the file's generated part; whatever followed HISTORY in the file stays. */
export function writeReport(file: string, report: string): void {
  const kept = existsSync(file) ? readFileSync(file, 'utf8').split(HISTORY)[1] : undefined;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${report.trimEnd()}\n\n${HISTORY}${kept ?? '\n'}`);
}
