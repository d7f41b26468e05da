// Opening an input file: a plain file, or the matching entry of a zip (FDOR ships one CSV per zip). Missing or
// unreadable files are one-line ImportErrors. Byte counts feed the progress bar's ETA.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { ImportError } from './errors.ts';
import { openZipEntry } from './zip.ts';

export interface OpenedInput {
  stream: Readable;
  /** Bytes the progress is measured against (the entry's uncompressed size for a zip entry). */
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
  let source: Readable;
  let totalBytes = size;
  let label = path;
  if (isZip(path)) {
    const entry = await openZipEntry(path, (name) => entryPattern.test(name) && !name.startsWith('__MACOSX/'));
    if (!entry) throw new ImportError(`${path}: the zip holds no file matching ${entryPattern}`);
    source = entry.stream;
    totalBytes = entry.size;
    label = `${path}:${entry.name}`;
  } else source = createReadStream(path, { highWaterMark: 1 << 20 });
  let read = 0;
  // Counted through a pass-through: a bare 'data' listener would start the flow before the consumer is attached.
  const stream = new PassThrough({ highWaterMark: 1 << 20 });
  source.on('data', (b) => (read += (b as Buffer).length));
  source.on('error', (err) => stream.destroy(err));
  stream.on('close', () => source.destroy());
  source.pipe(stream);
  return { stream, totalBytes, bytesRead: () => read, label };
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
