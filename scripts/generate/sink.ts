// Where the profiles' files go: a buffered, backpressure-aware line writer for the statewide state (rows joined into
// ~256 KB chunks, 'drain' awaited whenever the file stream is behind, so memory stays bounded however large a county
// is), and for the small fixture files a whole-file line writer and a zip with fixed timestamps.
import { createWriteStream, writeFileSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { crc32, deflateRawSync } from 'node:zlib';

const CHUNK = 256 * 1024;

export class Sink {
  private stream: WriteStream;
  private buf = '';
  private blocked: Promise<unknown> | null = null;
  rows = 0;
  bytes = 0;

  constructor(readonly path: string) {
    this.stream = createWriteStream(path, { highWaterMark: 1024 * 1024 });
  }

  /** Appends one line (without its newline); `counted` = false for header lines. */
  line(text: string, counted = true): void {
    this.buf += text + '\n';
    if (counted) this.rows++;
    if (this.buf.length >= CHUNK) this.push();
  }

  private push(): void {
    if (!this.buf) return;
    const chunk = Buffer.from(this.buf, 'utf8');
    this.buf = '';
    this.bytes += chunk.length;
    if (!this.stream.write(chunk)) this.blocked ??= once(this.stream, 'drain').then(() => (this.blocked = null));
  }

  /** Resolves when the stream has room again (immediately when it is not behind). */
  ready(): Promise<unknown> | null {
    return this.blocked;
  }

  async close(): Promise<void> {
    this.push();
    if (this.blocked) await this.blocked;
    this.stream.end();
    await once(this.stream, 'close');
  }
}

/** Writes lines, each ended by `eol`; a Buffer line is written as its bytes (another encoding than UTF-8). */
export function writeLines(path: string, lines: readonly (string | Buffer)[], eol = '\n'): void {
  writeFileSync(path, Buffer.concat(lines.map((l) => Buffer.concat([Buffer.from(l), Buffer.from(eol)]))));
}

/** A deflated zip whose entries are all dated 2025-07-01 00:00, so the same entries always give the same bytes. */
export function zip(entries: readonly { name: string; data: Buffer }[]): Buffer {
  const DATE = ((2025 - 1980) << 9) | (7 << 5) | 1;
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const body = deflateRawSync(e.data, { level: 9 });
    const name = Buffer.from(e.name);
    const crc = crc32(e.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt16LE(0, 10); // 00:00
    local.writeUInt16LE(DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(e.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt16LE(DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(body.length, 20);
    central.writeUInt32LE(e.data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    centrals.push(central, name);
    offset += 30 + name.length + body.length;
  }
  const cd = Buffer.concat(centrals);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(entries.length, 8);
  eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(cd.length, 12);
  eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, eocd]);
}
