/** Simulator: partner timestamps as the wire writes them (milliseconds, nanoseconds, whole seconds). */
import { flat, type Rng } from './prng.js';

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;

export interface TimeText {
  at: string;
  atMs: number;
  atKey: string;
}

/**
 * A partner timestamp as the wire shows it: with milliseconds, with a nanosecond fraction, or
 * with whole seconds. atMs is the instant floored to the millisecond, atKey sorts correctly
 * (the raw texts do not: ".123Z" sorts after ".123456789Z").
 */
export function timeText(ms: number, rng: Rng): TimeText {
  const r = rng.next();
  const iso = new Date(ms).toISOString();
  const head = iso.slice(0, 19);
  if (r < 0.3) {
    const frac = `${iso.slice(20, 23)}${String(rng.int(0, 999_999)).padStart(6, '0')}`;
    const at = flat(`${head}.${frac}Z`);
    return { at, atMs: ms, atKey: at };
  }
  if (r < 0.4) {
    const whole = Math.floor(ms / 1000) * 1000;
    return { at: flat(`${head}Z`), atMs: whole, atKey: `${head}.000000000Z` };
  }
  return { at: iso, atMs: ms, atKey: `${head}.${iso.slice(20, 23)}000000Z` };
}

/** Sortable form of a wire timestamp: the ISO date with a 9-digit fraction. */
export function timeKey(at: string): string {
  const frac = at.length > 20 ? at.slice(20, -1) : '';
  return `${at.slice(0, 19)}.${frac.padEnd(9, '0')}Z`;
}

/** Plain millisecond text (events created by the sandbox itself). */
export function msText(ms: number): TimeText {
  const iso = new Date(ms).toISOString();
  return { at: iso, atMs: ms, atKey: `${iso.slice(0, 23)}000000Z` };
}

export function utcDayStart(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

export function dayText(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
