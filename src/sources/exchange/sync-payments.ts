/** Exchange sync step: deposits and withdrawals by time windows, then the non-final ones by id. */
import { inTransaction } from '../../store/database.js';
import { writeOrSplit } from '../common/record-fallback.js';
import type { Page } from './client.js';
import {
  DEPOSIT_NON_FINAL,
  depositSchema,
  validateRecords,
  WITHDRAWAL_NON_FINAL,
  withdrawalSchema,
  type Deposit,
  type Withdrawal,
} from './schemas.js';
import { toDepositRow, toWithdrawalRow } from './transform.js';
import type { NewExchangeDeposit, NewExchangeWithdrawal } from '../../store/schema.js';
import { nonFinalIds, upsertDeposits, upsertWithdrawals } from '../../store/exchange-records.js';
import { handleQuarantine, type SyncEnv } from './sync-common.js';
import { checkAbort } from '../common/abort.js';
import { syncAnswers } from './sync-answers.js';
import { loadPageCap, padded, type StreamCap, type WindowStream } from './sync-windows.js';

function depositStream(env: SyncEnv, cap: StreamCap): WindowStream<Deposit, NewExchangeDeposit> {
  return {
    stream: 'deposits',
    cursor: 'deposits.time',
    entity: 'deposit',
    keyField: 'depositId',
    int64Key: false,
    schema: depositSchema,
    cap,
    overlapMs: PAYMENTS_OVERLAP_MS,
    endAtLeastMs: env.balancesFetchedAtMs,
    fetch: (w, _symbol, signal) => env.client.deposits(padded(w), signal),
    toRow: toDepositRow,
    key: (r) => r.deposit_id,
    timestampOf: (d) => d.timestamp,
    write: async (db, rows, bookkeeping) => {
      const n = await upsertDeposits(db, env.account, rows, env.startedAt, bookkeeping);
      env.counters.deposits += n;
      return n;
    },
  };
}

function withdrawalStream(env: SyncEnv, cap: StreamCap): WindowStream<Withdrawal, NewExchangeWithdrawal> {
  return {
    stream: 'withdrawals',
    cursor: 'withdrawals.time',
    entity: 'withdrawal',
    keyField: 'withdrawalId',
    int64Key: false,
    schema: withdrawalSchema,
    cap,
    overlapMs: PAYMENTS_OVERLAP_MS,
    endAtLeastMs: env.balancesFetchedAtMs,
    fetch: (w, _symbol, signal) => env.client.withdrawals(padded(w), signal),
    toRow: toWithdrawalRow,
    key: (r) => r.withdrawal_id,
    timestampOf: (d) => d.timestamp,
    write: async (db, rows, bookkeeping) => {
      const n = await upsertWithdrawals(db, env.account, rows, env.startedAt, bookkeeping);
      env.counters.withdrawals += n;
      return n;
    },
  };
}

const BY_ID_BATCH = 50;

/**
 * Deposits and withdrawals are few and their lists have no page limit (syncAnswers checks that an
 * answer was not cut), while a deposit can be listed late (after its time): each run re-reads
 * three days before its cursor, the window the partner side also re-reads for late state changes.
 */
export const PAYMENTS_OVERLAP_MS = 3 * 86_400_000;

/**
 * Deposits and withdrawals by windows, then every one still UNCONFIRMED / PENDING that this
 * run's listings did not return fetched by id, so a late state change lands (and enters the
 * state history).
 *
 * The roll-forward places a state change in the pair of balance snapshots where it was first
 * observed (rules/balance-placement.ts), so the order of a sync matters. The sync takes its
 * balance snapshot first (fetched_at: when /accounts answered), then reads the payments; every
 * state row it writes carries observed_at = the sync's start (env.startedAt), which lies BEFORE
 * that snapshot's fetched_at although the read came after it. This is on purpose: a change first
 * seen by this sync happened after the previous sync's read (itself after the previous snapshot)
 * and, but for the seconds between this sync's snapshot and this read (the payments come right
 * after the snapshots, stages/sync-exchange.ts), before that snapshot, which therefore already
 * shows it: the exchange credited (or debited) it in the pair that this snapshot closes, and
 * observed_at <= fetched_at puts it there. Stamping the read's own time (after fetched_at) would
 * push every such change one pair late: a false E_BALANCE_ROLL in two pairs. The one change it
 * misplaces is one made in those seconds, between the snapshot and the payments read: it lands
 * one pair early (docs/rules.md E_BALANCE_ROLL says so). The listings run up to the
 * snapshot's fetch time at least (endAtLeastMs), so a record stamped between the run's start and
 * the snapshot is a flow of this pair and is stored before the roll-forward is checked.
 */
export async function syncPayments(env: SyncEnv, range?: { from: number; to: number }): Promise<void> {
  // The largest answer each endpoint has given: a smaller one is complete without a check.
  await syncAnswers(env, depositStream(env, await loadPageCap(env, 'deposits.maxAnswer', Infinity, 0)), range);
  await syncAnswers(env, withdrawalStream(env, await loadPageCap(env, 'withdrawals.maxAnswer', Infinity, 0)), range);

  env.progress.setStage('payments by id');
  const deposits = await nonFinalIds(env.db, 'exchange_deposit', env.account, DEPOSIT_NON_FINAL, env.startedAt);
  await refreshById(env, deposits, (id) => env.client.depositById(id, env.signal), async (pages) => {
    const validated = validateRecords(depositSchema, pages.flatMap((p) => p.records), 'depositId');
    const rows = validated.valid.map(toDepositRow);
    const items = validated.valid.map((v, i) => ({ v, row: rows[i]! }));
    const split = await writeOrSplit(
      env.db,
      items,
      () =>
        inTransaction(env.db, async (trx) => {
          await upsertDeposits(trx, env.account, rows, env.startedAt);
          await handleQuarantine(env, trx, 'GET /deposits/{id}', 'deposit', validated.invalid, rows.map((r) => r.deposit_id));
        }),
      (trx, it) => upsertDeposits(trx, env.account, [it.row], env.startedAt),
      async (trx, kept, refused) => {
        const dbRefused = refused.map((r) => ({ index: r.item.v.index, raw: r.item.v.raw, reason: r.reason, key: r.item.row.deposit_id }));
        await handleQuarantine(env, trx, 'GET /deposits/{id}', 'deposit', [...validated.invalid, ...dbRefused], kept.map((k) => k.row.deposit_id));
      },
    );
    return split ? split.kept.length : rows.length;
  });
  const withdrawals = await nonFinalIds(env.db, 'exchange_withdrawal', env.account, WITHDRAWAL_NON_FINAL, env.startedAt);
  await refreshById(env, withdrawals, (id) => env.client.withdrawalById(id, env.signal), async (pages) => {
    const validated = validateRecords(withdrawalSchema, pages.flatMap((p) => p.records), 'withdrawalId');
    const rows = validated.valid.map(toWithdrawalRow);
    const items = validated.valid.map((v, i) => ({ v, row: rows[i]! }));
    const split = await writeOrSplit(
      env.db,
      items,
      () =>
        inTransaction(env.db, async (trx) => {
          await upsertWithdrawals(trx, env.account, rows, env.startedAt);
          await handleQuarantine(env, trx, 'GET /withdrawals/{id}', 'withdrawal', validated.invalid, rows.map((r) => r.withdrawal_id));
        }),
      (trx, it) => upsertWithdrawals(trx, env.account, [it.row], env.startedAt),
      async (trx, kept, refused) => {
        const dbRefused = refused.map((r) => ({ index: r.item.v.index, raw: r.item.v.raw, reason: r.reason, key: r.item.row.withdrawal_id }));
        await handleQuarantine(env, trx, 'GET /withdrawals/{id}', 'withdrawal', [...validated.invalid, ...dbRefused], kept.map((k) => k.row.withdrawal_id));
      },
    );
    return split ? split.kept.length : rows.length;
  });
}

async function refreshById(env: SyncEnv, ids: string[], get: (id: string) => Promise<Page | null>, store: (pages: Page[]) => Promise<number>): Promise<void> {
  for (let i = 0; i < ids.length; i += BY_ID_BATCH) {
    checkAbort(env.signal);
    const batch = ids.slice(i, i + BY_ID_BATCH);
    const pages: Page[] = [];
    const missing: string[] = [];
    for (const id of batch) {
      const page = await get(id);
      if (page) pages.push(page);
      else missing.push(id);
    }
    const n = await store(pages);
    env.counters.pages += batch.length;
    env.progress.tick(n, batch.length);
    if (missing.length) env.logger.warn({ ids: missing }, 'stored exchange payments answered 404 on refresh');
  }
}
