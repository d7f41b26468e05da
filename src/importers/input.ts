// Opening an input file: a plain file, or the matching entry of a zip (FDOR ships one CSV per zip). Missing or
// unreadable files are one-line ImportErrors. Byte counts feed the progress bar's ETA.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { ImportError } from './errors.ts';
import { listZip, openZipEntry } from './zip.ts';

export interface OpenedInput {
  stream: Readable;
  /** Bytes the progress is measured against (the zip's compressed size for a zip entry). */
  totalBytes: number;
  bytesRead: () => number;
  /** What is actually read, e.g. `file.zip:NAL49F202501.csv`. */
  label: string;
  /** Resolves when the producer finished cleanly (ogr2ogr's exit status); rejects with its error. */
  done?: () => Promise<void>;
  /** Stops the producer early (after a failure). */
  close?: () => void;
}

export async function checkFile(path: string): Promise<number> {
  try {
    const s = await stat(path);
    if (!s.isFile()) throw new ImportError(`${path}: not a file`);
    return s.size;
  } catch (err) {
    if (err instanceof ImportError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new ImportError(code === 'ENOENT' ? `${path}: no such file` : `${path}: cannot read (${code})`);
  }
}

export const isZip = (path: string) => /\.zip$/i.test(path);

/** Opens `path`, or inside a zip the first entry whose name matches `entryPattern`. */
export async function openInput(path: string, entryPattern = /\.(csv|txt)$/i): Promise<OpenedInput> {
  const size = await checkFile(path);
  let read = 0;
  if (isZip(path)) {
    const entries = (await listZip(path)).filter((e) => entryPattern.test(e.name) && !e.name.startsWith('__MACOSX/'));
    const entry = entries[0];
    if (!entry) throw new ImportError(`${path}: the zip holds no file matching ${entryPattern}`);
    const stream = await openZipEntry(path, entry, (n) => (read += n));
    return { stream, totalBytes: entry.compressedSize, bytesRead: () => read, label: `${path}:${entry.name}` };
  }
  const file = createReadStream(path, { highWaterMark: 1 << 20 });
  // Counted through a pass-through: a bare 'data' listener would start the flow before the consumer is attached.
  const stream = new PassThrough({ highWaterMark: 1 << 20 });
  file.on('data', (b) => (read += (b as Buffer).length));
  file.on('error', (err) => stream.destroy(err));
  file.pipe(stream);
  return { stream, totalBytes: size, bytesRead: () => read, label: path };
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
