/** UTC calendar days: parsing and validating YYYY-MM-DD, periods, day arithmetic. */
import { z } from 'zod';
import type { Period } from '../domain/period.js';
import { ConfigError } from '../errors.js';

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
export const MS_PER_DAY = 86_400_000;

/** A real calendar day in YYYY-MM-DD (2026-02-30 is rejected). */
export const dayString = z.string().refine(
  (v) => {
    const m = DAY.exec(v);
    if (!m) return false;
    const d = new Date(`${v}T00:00:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v;
  },
  { message: 'must be a date YYYY-MM-DD' },
);

export function dayStart(day: string): Date {
  return new Date(`${day}T00:00:00.000Z`);
}

export function toDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function addDays(day: string, n: number): string {
  return toDay(new Date(dayStart(day).getTime() + n * MS_PER_DAY));
}

/** Every UTC day of the period, in order. */
export function daysOf(period: Period): string[] {
  const days: string[] = [];
  for (let d = period.from; d < period.to; d = addDays(d, 1)) days.push(d);
  return days;
}

/** Yesterday in UTC relative to now: the default period of `run`. */
export function yesterday(now: Date): Period {
  const today = toDay(now);
  return { from: addDays(today, -1), to: today };
}

/** Validates a --from/--to pair: real days, from < to. Throws a message naming the flag and value. */
export function parsePeriod(input: { from?: string; to?: string }, now: Date): Period {
  const fallback = yesterday(now);
  const problems: string[] = [];
  for (const flag of ['from', 'to'] as const) {
    const v = input[flag];
    if (v !== undefined && !dayString.safeParse(v).success)
      problems.push(`--${flag}: must be a date YYYY-MM-DD (got ${JSON.stringify(v)})`);
  }
  if (problems.length) throw new PeriodError(problems);
  const from = input.from ?? (input.to ? addDays(input.to, -1) : fallback.from);
  const to = input.to ?? (input.from ? addDays(input.from, 1) : fallback.to);
  if (from >= to) throw new PeriodError([`--from ${from} must be before --to ${to} (--to is exclusive)`]);
  // A period that has not begun has nothing to reconcile: a clean report about it would be a false one.
  const today = toDay(now);
  if (from > today)
    throw new PeriodError([
      `--from ${from} is after today (${today} UTC): that period has not begun, nothing to reconcile`,
    ]);
  // Days after today have not happened: walking them would cost requests (a day each) and report nothing.
  const tomorrow = addDays(today, 1);
  if (to > tomorrow)
    throw new PeriodError([
      `--to ${to} is after tomorrow (${tomorrow} UTC): the days after today have not happened; give --to ${tomorrow} at the latest (--to is exclusive, so that period ends with today)`,
    ]);
  return { from, to };
}

/**
 * Whether the period is not over at `now`: it includes today (UTC) or a later day, so its records are still arriving
 * and its report says so (partial).
 */
export function isPartial(period: Period, now: Date): boolean {
  return period.to > toDay(now);
}

/** A bad --from/--to: a usage error (exit 2). */
export class PeriodError extends ConfigError {}
