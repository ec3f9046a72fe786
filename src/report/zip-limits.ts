/** A returned workbook is a zip: before it is loaded whole (exceljs reads every entry into memory), its size and what it
 * unzips to are checked against limits, so a zip bomb is refused instead of taking the process's memory. The sizes the
 * zip's central directory declares are summed, then each entry is inflated as a stream (nothing kept) and counted, so
 * an entry that lies about its size is caught too.
 */
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { createInflateRaw } from 'node:zlib';

export interface ZipLimits {
  /** The file's own size. */
  maxBytes: number;
  /** Every entry unzipped, in all. */
  maxUnzippedBytes: number;
}

interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

const EOCD = 0x06054b50;
const CENTRAL_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
const ZIP64_MARK = 0xffffffff;

/** The problem with this file against the limits, or null when it is within them (or not a zip: said by the reader). */
export async function zipLimitProblem(path: string, limits: ZipLimits): Promise<string | null> {
  const { size } = await stat(path);
  if (size > limits.maxBytes)
    return `${path} is ${size} bytes, over the limit of ${limits.maxBytes} (reports.maxImportBytes)`;
  const entries = await centralDirectory(path, size);
  if (!entries) return null;
  const over = (total: number) =>
    `${path} unzips to more than ${limits.maxUnzippedBytes} bytes (reports.maxImportUnzippedBytes: ${total} ` +
    'bytes or more); it was not loaded';
  if (entries.some((e) => e.size === ZIP64_MARK || e.compressedSize === ZIP64_MARK))
    return `${path} is a ZIP64 archive, which no workbook needs; it was not loaded`;
  const declared = entries.reduce((sum, e) => sum + e.size, 0);
  if (declared > limits.maxUnzippedBytes) return over(declared);
  let total = 0;
  for (const entry of entries) {
    const inflated = await inflatedSize(path, entry, limits.maxUnzippedBytes - total);
    if (inflated === null) return over(limits.maxUnzippedBytes + 1);
    if (inflated !== entry.size)
      return `${path}: entry ${entry.name} unzips to ${inflated} bytes, not the ${entry.size} it declares; it was not loaded`;
    total += inflated;
  }
  return null;
}

/** The entries of the zip's central directory, or null when the file has none (not a zip). */
async function centralDirectory(path: string, size: number): Promise<ZipEntry[] | null> {
  const file = await open(path, 'r');
  try {
    // The end record is 22 bytes, after a comment of at most 65,535.
    const tailLength = Math.min(size, 22 + 0xffff);
    const tail = Buffer.alloc(tailLength);
    await file.read(tail, 0, tailLength, size - tailLength);
    let at = -1;
    for (let i = tailLength - 22; i >= 0; i--)
      if (tail.readUInt32LE(i) === EOCD) {
        at = i;
        break;
      }
    if (at < 0) return null;
    const count = tail.readUInt16LE(at + 10);
    const cdSize = tail.readUInt32LE(at + 12);
    const cdOffset = tail.readUInt32LE(at + 16);
    if (cdOffset + cdSize > size) return null;
    const cd = Buffer.alloc(cdSize);
    await file.read(cd, 0, cdSize, cdOffset);
    const entries: ZipEntry[] = [];
    let p = 0;
    for (let i = 0; i < count && p + 46 <= cd.length && cd.readUInt32LE(p) === CENTRAL_ENTRY; i++) {
      const nameLength = cd.readUInt16LE(p + 28);
      entries.push({
        method: cd.readUInt16LE(p + 10),
        compressedSize: cd.readUInt32LE(p + 20),
        size: cd.readUInt32LE(p + 24),
        localHeaderOffset: cd.readUInt32LE(p + 42),
        name: cd.toString('utf8', p + 46, p + 46 + nameLength),
      });
      p += 46 + nameLength + cd.readUInt16LE(p + 30) + cd.readUInt16LE(p + 32);
    }
    // Where its data starts: after the local header's own name and extra field.
    for (const e of entries) {
      const local = Buffer.alloc(30);
      await file.read(local, 0, 30, e.localHeaderOffset);
      if (local.readUInt32LE(0) !== LOCAL_HEADER) return null;
      e.localHeaderOffset += 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
    }
    return entries;
  } finally {
    await file.close();
  }
}

/** The entry's size unzipped, counted as it streams; null once it passes `budget` (the rest is not inflated). */
async function inflatedSize(path: string, entry: ZipEntry, budget: number): Promise<number | null> {
  if (entry.compressedSize === 0) return 0;
  const raw = createReadStream(path, {
    start: entry.localHeaderOffset,
    end: entry.localHeaderOffset + entry.compressedSize - 1,
  });
  // Stored (0) as it is; deflated (8) inflated; another method is the reader's to refuse.
  const stream = entry.method === 8 ? raw.pipe(createInflateRaw()) : raw;
  let size = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > budget) return null;
    }
  } catch {
    return entry.size; // a corrupt entry: the reader says so
  } finally {
    raw.destroy();
    stream.destroy();
  }
  return size;
}
