// Bytes -> CSV records with their line numbers: optional BOM dropped, each line decoded as UTF-8 or, when it is
// not valid UTF-8, as Windows-1252 (the usual non-UTF-8 encoding of roll files), quoted fields spanning lines
// joined. Records come in batches (one per chunk read) so the per-record cost stays low.
import type { Readable } from 'node:stream';
import { parseCsv } from './csv.ts';

export interface SourceRecord {
  /** Physical line the record starts on (1 = the header). */
  line: number;
  text: string;
  /** null: a quoted field never closed (the record swallowed the following lines; rejected as a whole). */
  fields: string[] | null;
}

export interface DecodeStats {
  fallbackLines: number;
}

const cp1252 = new TextDecoder('windows-1252');
/** A record whose quote stays open longer than this is treated as broken, not as a giant multi-line field. */
const MAX_CONTINUATION_LINES = 50;

function decodeBlock(block: Buffer, stats: DecodeStats): string {
  const s = block.toString('utf8');
  if (!s.includes('\uFFFD')) return s;
  // Some line is not UTF-8: decode line by line so only the broken lines fall back.
  const parts: string[] = [];
  let start = 0;
  for (;;) {
    const nl = block.indexOf(10, start);
    const line = block.subarray(start, nl < 0 ? block.length : nl);
    const u = line.toString('utf8');
    if (u.includes('\uFFFD')) {
      stats.fallbackLines++;
      parts.push(cp1252.decode(line));
    } else parts.push(u);
    if (nl < 0) break;
    start = nl + 1;
  }
  return parts.join('\n');
}

export async function* readRecords(
  stream: Readable,
  stats: DecodeStats,
  delimiter: () => string = () => ',',
): AsyncGenerator<SourceRecord[]> {
  let carry: Buffer | null = null;
  let lineNo = 0;
  let first = true;
  let open: { line: number; text: string; lines: number } | null = null;

  const take = (lines: string[], out: SourceRecord[]) => {
    for (let raw of lines) {
      lineNo++;
      if (raw.endsWith('\r')) raw = raw.slice(0, -1);
      if (open) {
        open.text += '\n' + raw;
        open.lines++;
        const fields = parseCsv(open.text, delimiter());
        if (fields || open.lines > MAX_CONTINUATION_LINES) {
          out.push({ line: open.line, text: open.text, fields });
          open = null;
        }
        continue;
      }
      if (raw.length === 0) continue; // blank lines carry no record
      const fields = parseCsv(raw, delimiter());
      if (fields) out.push({ line: lineNo, text: raw, fields });
      else open = { line: lineNo, text: raw, lines: 1 };
    }
  };

  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let buf: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
    if (first) {
      first = false;
      if (buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) buf = buf.subarray(3);
    }
    const nl = buf.lastIndexOf(10);
    if (nl < 0) {
      carry = buf;
      continue;
    }
    carry = nl + 1 < buf.length ? Buffer.from(buf.subarray(nl + 1)) : null;
    const out: SourceRecord[] = [];
    take(decodeBlock(buf.subarray(0, nl), stats).split('\n'), out);
    if (out.length) yield out;
  }
  const out: SourceRecord[] = [];
  if (carry && carry.length) take([decodeBlock(carry, stats)], out);
  const last = open as { line: number; text: string } | null;
  if (last) out.push({ line: last.line, text: last.text, fields: null });
  if (out.length) yield out;
}
