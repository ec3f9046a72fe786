/** Sortable, readable ids of runs, batches and closes: a letter, the UTC time to the second and a random tail. */
import { randomBytes } from 'node:crypto';

/** `r20261122T020000Z-3fa9c1` for prefix `r` (a run; `b` a batch, `c` a close): sorts by time. */
export function stampedId(prefix: 'r' | 'b' | 'c', now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  return `${prefix}${stamp}-${randomBytes(3).toString('hex')}`;
}
