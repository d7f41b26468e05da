// Zip inputs through yauzl: the entry names from the central directory (Zip64 included) and one entry's bytes,
// stored or deflated, streamed without unpacking to disk. yauzl's errors become one-line ImportErrors.
import type { Readable } from 'node:stream';
import { openPromise, type Entry, type ZipFile } from 'yauzl';
import { ImportError } from './errors.ts';

async function openZip(path: string): Promise<ZipFile> {
  try {
    return await openPromise(path, { lazyEntries: true, autoClose: false });
  } catch (err) {
    throw new ImportError(`${path}: cannot read the zip (${(err as Error).message})`);
  }
}

/** The names of the zip's file entries, in central directory order. */
export async function listZip(path: string): Promise<string[]> {
  const zip = await openZip(path);
  try {
    const names: string[] = [];
    for await (const entry of zip.eachEntry()) if (!entry.fileName.endsWith('/')) names.push(entry.fileName);
    return names;
  } catch (err) {
    throw new ImportError(`${path}: cannot read the zip (${(err as Error).message})`);
  } finally {
    zip.close();
  }
}

export interface OpenedEntry {
  name: string;
  /** Uncompressed size in bytes. */
  size: number;
  /** The entry's bytes, decompressed. */
  stream: Readable;
}

/** The first file entry whose name `match` accepts, opened for reading; null when none does. */
export async function openZipEntry(path: string, match: (name: string) => boolean): Promise<OpenedEntry | null> {
  const zip = await openZip(path);
  try {
    let found: Entry | null = null;
    for await (const entry of zip.eachEntry()) {
      if (!entry.fileName.endsWith('/') && match(entry.fileName)) {
        found = entry;
        break;
      }
    }
    if (!found) return null;
    if (found.compressionMethod !== 0 && found.compressionMethod !== 8) {
      throw new ImportError(
        `${path}: ${found.fileName} uses zip method ${found.compressionMethod}; only stored and deflate are supported`,
      );
    }
    const stream = await zip.openReadStreamPromise(found);
    return { name: found.fileName, size: found.uncompressedSize, stream };
  } catch (err) {
    if (err instanceof ImportError) throw err;
    throw new ImportError(`${path}: cannot read the zip (${(err as Error).message})`);
  } finally {
    // The file stays open until the entry's stream has ended.
    zip.close();
  }
}
