/** `ramp-recon close`: signs off an account's period under its run lock (docs/closing.md); the close itself is
 * stages/close.ts.
 */
import { toDay } from '../util/dates.js';
import { periodLabel } from '../stages/report.js';
import { closeLocked, CloseRefused, type CloseCall, type CloseResult } from '../stages/close.js';
import { RunLockedError, withRunLock } from './lock.js';

export { CloseRefused, type CloseCall, type CloseRequest, type CloseResult } from '../stages/close.js';

/** Signs off the period for the config's account, under its run lock. */
export async function closePeriod(close: CloseCall): Promise<CloseResult> {
  const { store, config, request, now } = close;
  const account = config.account;
  const { period } = request;
  if (period.to > toDay(now))
    throw new CloseRefused(
      account,
      `the period ${periodLabel(period.from, period.to)} has not ended (--to ${period.to} is after today, ${toDay(now)} UTC)`,
    );
  try {
    return await withRunLock(store, { account }, () => closeLocked(close));
  } catch (err) {
    if (err instanceof RunLockedError) throw new CloseRefused(account, err.message.replace(/; try again.*$/, ''));
    throw err;
  }
}
