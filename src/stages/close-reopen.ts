/** `ramp-recon reopen` and `ramp-recon closes` (docs/closing.md "Reopen"): a signed period reopened with who and why,
 * and each close with its state.
 */
import type { Store } from '../store/db/database.js';
import { inTransaction } from '../store/db/database.js';
import { spanOf } from '../store/db/keyset.js';
import { anyDifference, inUtc } from '../store/workflow/close-records.js';
import { getClose, listCloses, markReopened, type CloseRecord } from '../store/workflow/closes.js';
import { appendAudit } from '../store/workflow/audit-log.js';
import { ConfigError } from '../errors.js';

/** Reopens a signed close, with its audit row in the same transaction. Refused (exit 2) unless it is signed. */
export async function reopenClose(
  store: Store,
  closeId: string,
  by: string,
  reason: string,
  now: Date,
): Promise<CloseRecord> {
  const close = await getClose(store.db, closeId);
  if (!close)
    throw new ConfigError([`close id ${JSON.stringify(closeId)}: no such close (\`ramp-recon closes\` lists them)`]);
  await inTransaction(store.db, async (trx) => {
    if (!(await markReopened(trx, closeId, by, now, reason)))
      throw new ConfigError([
        `close ${closeId}: already reopened (by ${close.reopenedBy ?? 'someone'}); only a signed close can be reopened`,
      ]);
    await appendAudit(
      trx,
      {
        actor: by,
        action: 'reopen',
        subject: closeId,
        payload: { account: close.account, period: close.period, reason },
      },
      now,
    );
  });
  return (await getClose(store.db, closeId))!;
}

export type ListedState = 'signed' | 'changed since sign-off' | 'reopened';

/** Every close of the accounts, newest first, with its state (a signed one is compared with the records now). */
export async function closesWithState(
  store: Store,
  accounts: readonly string[],
): Promise<Array<CloseRecord & { listed: ListedState }>> {
  const closes = await listCloses(store.db, accounts);
  const listed: Array<CloseRecord & { listed: ListedState }> = [];
  for (const close of closes) {
    if (close.state === 'reopened') {
      listed.push({ ...close, listed: 'reopened' });
      continue;
    }
    const changed = await inTransaction(store.db, async (trx) => {
      await inUtc(trx);
      return anyDifference(trx, close.id, close.account, spanOf(close.period));
    });
    listed.push({ ...close, listed: changed ? 'changed since sign-off' : 'signed' });
  }
  return listed;
}
