/** Temporary `.partial` names of reports being written, and the clean-up of those a killed report left. Workers on
 * several machines (or containers, where every worker is process 1) may share one reports folder: a name carries the
 * writer's host, process and a random part, so no two writers ever share one, and no writer judges another's file
 * by its process id. Only the writer removes its own partial file (when its write fails); anyone removes a partial
 * untouched for a day.
 */
import { randomBytes } from 'node:crypto';
import { readdir, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** Who writes a temporary file: the host and the process. */
export interface Writer {
  host: string;
  pid: number;
}

/** This process, as its temporary names say. */
export const THIS_WRITER: Writer = { host: hostname(), pid: process.pid };

/**
 * The name a file or folder is written under until it is complete: `<path>.<host>-<pid>-<random>.partial` (the host's
 * characters other than letters, digits and "-" as "-"). A fresh random part each call: two writes of one process, or
 * of two processes of one pid, never share a name.
 */
export function partialPath(path: string, writer: Writer = THIS_WRITER): string {
  const host = writer.host.replace(/[^A-Za-z0-9-]/g, '-').slice(0, 63) || 'host';
  return `${path}.${host}-${writer.pid}-${randomBytes(4).toString('hex')}.partial`;
}

/**
 * A workbook or detail folder being written: `<name>.xlsx.<host>-<pid>-<random>.partial`, and the names of earlier
 * versions (`<name>.xlsx.<pid>.partial`, `<name>.xlsx.partial`, `<name>_detail.<pid>.partial`).
 */
const PARTIAL = /(?:\.xlsx|_detail)(?:\.[A-Za-z0-9-]+)?\.partial$/;

/**
 * A partial untouched for this long is a killed writer's: no report takes a day, and a live writer touches its file
 * (or a file in its detail folder) as it writes.
 */
export const STALE_AFTER_MS = 24 * 3600_000;

/**
 * Removes the `.partial` workbooks and detail folders in `dir` (any run, any period, any writer) untouched for a day.
 * Fresher ones are left alone whoever wrote them: another worker sharing the folder may be writing them now.
 * Returns the paths removed; a folder that does not exist has none.
 */
export async function removeStalePartials(dir: string, now = Date.now()): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const removed: string[] = [];
  for (const name of names.filter((n) => PARTIAL.test(n))) {
    const path = join(dir, name);
    const touched = await lastTouched(path);
    if (touched === null || now - touched <= STALE_AFTER_MS) continue;
    await rm(path, { force: true, recursive: true });
    removed.push(path);
  }
  return removed;
}

/** The newest mtime of a file, or of a folder and the files in it (written into without changing the folder's own). */
async function lastTouched(path: string): Promise<number | null> {
  try {
    const info = await stat(path);
    if (!info.isDirectory()) return info.mtimeMs;
    let newest = info.mtimeMs;
    for (const name of await readdir(path)) {
      const inner = await stat(join(path, name)).catch(() => null);
      if (inner) newest = Math.max(newest, inner.mtimeMs);
    }
    return newest;
  } catch {
    return null; // gone meanwhile
  }
}
