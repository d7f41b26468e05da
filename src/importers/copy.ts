// COPY FROM STDIN in PostgreSQL's text format through postgres.js, with backpressure: rows are encoded into a
// buffer that is written when it reaches 256 KB, and writing waits for 'drain' so memory stays flat.
import type { Writable } from 'node:stream';
import type postgres from 'postgres';

export type CopyValue = string | number | boolean | null;

const SPECIAL = /[\\\t\n\r]/;
function encode(v: CopyValue): string {
  if (v === null) return '\\N';
  if (typeof v !== 'string') return String(v);
  return SPECIAL.test(v)
    ? v.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'))
    : v;
}

export class CopyWriter {
  private buf: string[] = [];
  private size = 0;
  private failed: Error | null = null;
  rows = 0;

  private constructor(private readonly stream: Writable) {
    stream.on('error', (err: Error) => (this.failed = err));
  }

  static async open(sql: postgres.Sql | postgres.ReservedSql, table: string, columns: string[]) {
    const stream = await sql.unsafe(`COPY ${table} (${columns.join(', ')}) FROM STDIN`).writable();
    return new CopyWriter(stream);
  }

  async push(values: CopyValue[]) {
    const line = values.map(encode).join('\t') + '\n';
    this.buf.push(line);
    this.size += line.length;
    this.rows++;
    if (this.size >= 256 * 1024) await this.flush();
  }

  private async flush() {
    if (this.failed) throw this.failed;
    if (this.buf.length === 0) return;
    const chunk = this.buf.join('');
    this.buf = [];
    this.size = 0;
    if (!this.stream.write(chunk)) {
      await new Promise<void>((resolve, reject) => {
        const onDrain = () => (this.stream.off('error', onError), resolve());
        const onError = (err: Error) => (this.stream.off('drain', onDrain), reject(err));
        this.stream.once('drain', onDrain);
        this.stream.once('error', onError);
      });
    }
  }

  /** Abandons the COPY (CopyFail), so the connection is free for the failure bookkeeping. */
  async abort() {
    if (this.stream.destroyed) return;
    await new Promise<void>((resolve) => {
      this.stream.once('close', () => resolve());
      this.stream.destroy(new Error('import aborted'));
    });
  }

  async end() {
    await this.flush();
    await new Promise<void>((resolve, reject) => {
      if (this.failed) return reject(this.failed);
      this.stream.once('error', reject);
      this.stream.once('finish', resolve);
      this.stream.end();
    });
  }
}
