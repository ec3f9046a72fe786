/**
 * The wall clock of a bench process, moved by a settable offset: `Date.now()` and `new Date()`
 * (no arguments) read the real clock plus the offset; everything else about Date is unchanged.
 * The bench runs the sandbox and each pipeline on the same simulated calendar (a first run, then
 * a nightly run one day later), in child processes of their own, so the balance snapshots the
 * sync stamps by the wall clock and the records the sandbox stamps by its clock agree.
 */
const RealDate = Date;
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
