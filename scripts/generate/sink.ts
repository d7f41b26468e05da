// A buffered, backpressure-aware line writer: rows are joined into ~256 KB chunks and the generator awaits 'drain'
// whenever the file stream is behind, so memory stays bounded however large a county is.
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';

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
