// The rejects file: one CSV row per record that was not loaded (line number, reason, the raw record), streamed
// so a file full of bad rows costs no memory.
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { csvLine } from './csv.ts';
import { ImportError } from './errors.ts';

export class RejectsFile {
  count = 0;
  private constructor(
    readonly path: string,
    private readonly out: WriteStream,
  ) {}

  static async open(path: string) {
    const out = createWriteStream(path, { encoding: 'utf8' });
    try {
      await once(out, 'open');
    } catch (err) {
      throw new ImportError(`--rejects ${path}: cannot write (${(err as NodeJS.ErrnoException).code})`);
    }
    out.write('line,reason,raw\n');
    return new RejectsFile(path, out);
  }

  async add(line: number, reason: string, raw: string) {
    this.count++;
    if (!this.out.write(csvLine([line, reason, raw]) + '\n')) await once(this.out, 'drain');
  }

  async close() {
    this.out.end();
    await once(this.out, 'finish');
  }
}
