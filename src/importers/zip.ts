// Minimal zip reader: lists the central directory and streams one entry (stored or deflated) without a dependency
// or unpacking to disk. Zip64 sizes and offsets are read from the extra field, so entries over 4 GB work too.
import { open } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { createInflateRaw } from 'node:zlib';
import { PassThrough, Readable } from 'node:stream';
import { ImportError } from './errors.ts';

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

export async function listZip(path: string): Promise<ZipEntry[]> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const tailLen = Math.min(size, 65_557); // EOCD (22 bytes) + the longest possible comment
    const tail = Buffer.alloc(tailLen);
    await fh.read(tail, 0, tailLen, size - tailLen);
    let eocd = -1;
    for (let i = tailLen - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) === EOCD) {
        eocd = i;
        break;
      }
    }
    if (eocd < 0) throw new ImportError(`${path}: not a zip file (no end of central directory)`);
    const count = tail.readUInt16LE(eocd + 10);
    const cdSize = tail.readUInt32LE(eocd + 12);
    const cdOffset = tail.readUInt32LE(eocd + 16);
    if (cdOffset === 0xffffffff || count === 0xffff) {
      throw new ImportError(`${path}: zip64 central directories are not supported; unzip the file first`);
    }
    const cd = Buffer.alloc(cdSize);
    await fh.read(cd, 0, cdSize, cdOffset);
    const entries: ZipEntry[] = [];
    let p = 0;
    for (let i = 0; i < count; i++) {
      if (cd.readUInt32LE(p) !== CENTRAL) throw new ImportError(`${path}: corrupt zip central directory`);
      const method = cd.readUInt16LE(p + 10);
      let compressedSize = cd.readUInt32LE(p + 20);
      let uncompressed = cd.readUInt32LE(p + 24);
      const nameLen = cd.readUInt16LE(p + 28);
      const extraLen = cd.readUInt16LE(p + 30);
      const commentLen = cd.readUInt16LE(p + 32);
      let localHeaderOffset = cd.readUInt32LE(p + 42);
      const name = cd.toString('utf8', p + 46, p + 46 + nameLen);
      // Zip64 extended information: the 0xffffffff fields, in this order, in extra block 0x0001.
      let e = p + 46 + nameLen;
      const extraEnd = e + extraLen;
      while (e + 4 <= extraEnd) {
        const id = cd.readUInt16LE(e);
        const len = cd.readUInt16LE(e + 2);
        if (id === 0x0001) {
          let q = e + 4;
          const next = () => {
            const v = Number(cd.readBigUInt64LE(q));
            q += 8;
            return v;
          };
          if (uncompressed === 0xffffffff) uncompressed = next();
          if (compressedSize === 0xffffffff) compressedSize = next();
          if (localHeaderOffset === 0xffffffff) localHeaderOffset = next();
        }
        e += 4 + len;
      }
      entries.push({ name, method, compressedSize, size: uncompressed, localHeaderOffset });
      p = extraEnd + commentLen;
    }
    return entries;
  } finally {
    await fh.close();
  }
}

/** The entry's bytes, decompressed; `onRead` sees the compressed byte counts (progress against the zip's size). */
export async function openZipEntry(path: string, entry: ZipEntry, onRead?: (n: number) => void): Promise<Readable> {
  const fh = await open(path, 'r');
  const local = Buffer.alloc(30);
  try {
    await fh.read(local, 0, 30, entry.localHeaderOffset);
  } finally {
    await fh.close();
  }
  if (local.readUInt32LE(0) !== LOCAL) throw new ImportError(`${path}: corrupt zip local header for ${entry.name}`);
  const start = entry.localHeaderOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
  if (entry.compressedSize === 0) return Readable.from([]);
  const raw = createReadStream(path, { start, end: start + entry.compressedSize - 1, highWaterMark: 1 << 20 });
  // Counted through a pass-through: a bare 'data' listener would start the flow before the consumer is attached.
  const counted = new PassThrough({ highWaterMark: 1 << 20 });
  raw.on('data', (b) => onRead?.((b as Buffer).length));
  raw.on('error', (err) => counted.destroy(err));
  raw.pipe(counted);
  if (entry.method === 0) return counted;
  if (entry.method !== 8)
    throw new ImportError(
      `${path}: ${entry.name} uses zip method ${entry.method}; only stored and deflate are supported`,
    );
  const inflate = createInflateRaw({ chunkSize: 1 << 20 });
  counted.on('error', (err) => inflate.destroy(err));
  return counted.pipe(inflate);
}
