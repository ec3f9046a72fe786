/** UTC periods: what --from/--to accept, refuse, and when a period is not over yet. */
import { describe, expect, it } from 'vitest';
import { isPartial, parsePeriod, PeriodError } from '../../src/util/dates.js';

const NOW = new Date('2026-11-25T10:00:00Z');

describe('parsePeriod', () => {
  it('defaults to yesterday, and to one day from either end', () => {
    expect(parsePeriod({}, NOW)).toEqual({ from: '2026-11-24', to: '2026-11-25' });
    expect(parsePeriod({ from: '2026-11-01' }, NOW)).toEqual({ from: '2026-11-01', to: '2026-11-02' });
    expect(parsePeriod({ to: '2026-11-01' }, NOW)).toEqual({ from: '2026-10-31', to: '2026-11-01' });
  });

  it('refuses a period that has not begun, naming the flag, the day and today', () => {
    expect(() => parsePeriod({ from: '2027-03-01' }, NOW)).toThrow(PeriodError);
    expect(() => parsePeriod({ from: '2026-11-26' }, NOW)).toThrow(
      '--from 2026-11-26 is after today (2026-11-25 UTC): that period has not begun, nothing to reconcile',
    );
    // today has begun: it is reconciled, as a partial period
    expect(parsePeriod({ from: '2026-11-25' }, NOW)).toEqual({ from: '2026-11-25', to: '2026-11-26' });
  });

  it('refuses a --to after tomorrow before any request, naming the date; tomorrow itself ends the period with today', () => {
    expect(() => parsePeriod({ from: '2026-11-01', to: '2099-01-01' }, NOW)).toThrow(
      '--to 2099-01-01 is after tomorrow (2026-11-26 UTC): the days after today have not happened; give --to 2026-11-26 at the latest',
    );
    expect(() => parsePeriod({ to: '2026-11-27' }, NOW)).toThrow(PeriodError);
    expect(parsePeriod({ from: '2026-11-20', to: '2026-11-26' }, NOW)).toEqual({
      from: '2026-11-20',
      to: '2026-11-26',
    });
  });

  it('refuses impossible days and empty periods', () => {
    expect(() => parsePeriod({ from: '2026-02-30' }, NOW)).toThrow(
      '--from: must be a date YYYY-MM-DD (got "2026-02-30")',
    );
    expect(() => parsePeriod({ from: '2026-11-05', to: '2026-11-05' }, NOW)).toThrow('must be before --to');
  });
});

describe('isPartial', () => {
  it('is a period that includes today or a later day', () => {
    expect(isPartial({ from: '2026-11-24', to: '2026-11-25' }, NOW)).toBe(false);
    expect(isPartial({ from: '2026-11-24', to: '2026-11-26' }, NOW)).toBe(true);
    expect(isPartial({ from: '2026-11-25', to: '2026-11-26' }, NOW)).toBe(true);
    expect(isPartial({ from: '2026-11-20', to: '2026-12-01' }, NOW)).toBe(true);
  });
});
