/**
 * The wall clock of a bench process, moved by a settable offset: `Date.now()` and `new Date()`
 * (no arguments) read the real clock plus the offset; everything else about Date is unchanged.
 * The bench runs the sandbox and each pipeline on the same simulated calendar (a first run, then
 * a nightly run one day later), in child processes of their own, so the balance snapshots the
 * sync stamps by the wall clock and the records the sandbox stamps by its clock agree. The tests
 * run on it too (test/helpers/clock.ts): every test file starts at one fixed instant.
 */
// The real Date, kept on the global object: a second copy of this module (a test runner loads one per test file)
// must shift the real clock, never a clock already shifted.
const REAL_DATE = Symbol.for('ramp-recon.realDate');
const holder = globalThis as typeof globalThis & { [REAL_DATE]?: DateConstructor };
const RealDate: DateConstructor = (holder[REAL_DATE] ??= Date);
let offsetMs = 0;

class ShiftedDate extends RealDate {
  constructor(...args: unknown[]) {
    if (args.length === 0) super(RealDate.now() + offsetMs);
    else super(...(args as [string | number | Date]));
  }

  static override now(): number {
    return RealDate.now() + offsetMs;
  }

  // Dates made before the shift was installed, or by node itself, are still Dates.
  static override [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof RealDate;
  }
}

/** Sets the offset (ms) of this process's clock from the real one; installs the shift on first use. */
export function setClockOffset(ms: number): void {
  offsetMs = ms;
  if (globalThis.Date !== ShiftedDate) globalThis.Date = ShiftedDate as DateConstructor;
}

/** The real clock (ms), whatever offset is set. */
export function realNow(): number {
  return RealDate.now();
}

/** How far this process's clock is from the real one now (ms; 0 when no offset was ever set). */
export function clockOffset(): number {
  // Another copy of this module may have installed its own shift: then read the difference.
  if (globalThis.Date === ShiftedDate) return offsetMs;
  return globalThis.Date === RealDate ? 0 : globalThis.Date.now() - RealDate.now();
}
