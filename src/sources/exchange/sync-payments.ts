/** Exchange sync step: deposits and withdrawals by time windows, then the non-final ones by id. */
import type { Db } from '../../store/db/database.js';
import type { Page } from '../common/page.js';
import {
  DEPOSIT_NON_FINAL,
  depositSchema,
  WITHDRAWAL_NON_FINAL,
  withdrawalSchema,
  type Deposit,
  type Withdrawal,
} from './schemas.js';
import { toDepositRow, toWithdrawalRow } from './transform.js';
import type { NewExchangeDeposit, NewExchangeWithdrawal } from '../../store/db/schema.js';
import {
  nonFinalIds,
  upsertDeposits,
  upsertWithdrawals,
  type PageBookkeeping,
} from '../../store/sync/exchange-records.js';
import type { ExchangeSync } from './sync-common.js';
import { fetchByIdInBatches, storeFetchedById, type ByIdRecords } from './sync-by-id.js';
import { timeCursor } from './streams.js';
import { walkAnswers } from './sync-answers.js';
import { syncStream } from './sync-windows.js';
import { loadPageCap, padded, type WindowStream } from './sync-windows.js';

/** What differs between deposits and withdrawals, in their listing and in their refresh by id: the rest is shared. */
interface PaymentKind<T, Row> extends ByIdRecords<T, Row> {
  /** The coverage stream, its cursor and counter, and the client's listing. */
  stream: 'deposits' | 'withdrawals';
  table: 'exchange_deposit' | 'exchange_withdrawal';
  nonFinal: readonly string[];
  upsert: (db: Db, account: string, rows: Row[], observedAt: Date, c?: PageBookkeeping) => Promise<number>;
  entity: 'deposit' | 'withdrawal';
  get: (env: ExchangeSync, id: string) => Promise<Page | null>;
}

const DEPOSITS: PaymentKind<Deposit, NewExchangeDeposit> = {
  stream: 'deposits',
  table: 'exchange_deposit',
  nonFinal: DEPOSIT_NON_FINAL,
  schema: depositSchema,
  idField: 'depositId',
  int64Key: false,
  toRow: toDepositRow,
  keyOf: (r) => r.deposit_id,
  upsert: upsertDeposits,
  endpoint: 'GET /deposits/{id}',
  entity: 'deposit',
  get: (env, id) => env.client.depositById(id, env.signal),
};

const WITHDRAWALS: PaymentKind<Withdrawal, NewExchangeWithdrawal> = {
  stream: 'withdrawals',
  table: 'exchange_withdrawal',
  nonFinal: WITHDRAWAL_NON_FINAL,
  schema: withdrawalSchema,
  idField: 'withdrawalId',
  int64Key: false,
  toRow: toWithdrawalRow,
  keyOf: (r) => r.withdrawal_id,
  upsert: upsertWithdrawals,
  endpoint: 'GET /withdrawals/{id}',
  entity: 'withdrawal',
  get: (env, id) => env.client.withdrawalById(id, env.signal),
};

async function paymentStream<T extends { timestamp: number | null }, Row extends { raw: string }>(
  env: ExchangeSync,
  kind: PaymentKind<T, Row>,
): Promise<WindowStream<T, Row>> {
  // The largest answer each endpoint has given: a smaller one is complete without a check.
  const cap = await loadPageCap(env, `${kind.stream}.maxAnswer`, Infinity, 0);
  return {
    stream: kind.stream,
    cursor: timeCursor(kind.stream),
    entity: kind.entity,
    keyField: kind.idField,
    int64Key: kind.int64Key,
    schema: kind.schema,
    cap,
    overlapMs: PAYMENTS_OVERLAP_MS,
    endAtLeastMs: env.balancesFetchedAtMs,
    fetch: (w, _symbol, signal) => env.client[kind.stream](padded(w), signal),
    toRow: kind.toRow,
    key: kind.keyOf,
    timestampOf: (d) => d.timestamp,
    write: async (db, rows, bookkeeping) => {
      const n = await kind.upsert(db, env.account, rows, env.startedAt, bookkeeping);
      env.counters[kind.stream] += n;
      return n;
    },
  };
}

/**
 * Deposits and withdrawals are few and their lists have no page limit (walkAnswers checks that an
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
 * after the snapshots, source.ts), before that snapshot, which therefore already
 * shows it: the exchange credited (or debited) it in the pair that this snapshot closes, and
 * observed_at <= fetched_at puts it there. Stamping the read's own time (after fetched_at) would
 * push every such change one pair late: a false E_BALANCE_ROLL in two pairs. The one change it
 * misplaces is one made in those seconds, between the snapshot and the payments read: it lands
 * one pair early (docs/rules.md E_BALANCE_ROLL says so). The listings run up to the
 * snapshot's fetch time at least (endAtLeastMs), so a record stamped between the run's start and
 * the snapshot is a flow of this pair and is stored before the roll-forward is checked.
 */
export async function syncPayments(env: ExchangeSync, range?: { from: number; to: number }): Promise<void> {
  await syncStream(env, await paymentStream(env, DEPOSITS), range, walkAnswers);
  await syncStream(env, await paymentStream(env, WITHDRAWALS), range, walkAnswers);

  env.progress.setStage('payments by id');
  await refreshPaymentsById(env, DEPOSITS);
  await refreshPaymentsById(env, WITHDRAWALS);
}

/**
 * Fetches the non-final payments by id and stores them with their page's quarantine; a page the
 * database refuses is written record by record (writeOrSplit), each refused record quarantined.
 */
async function refreshPaymentsById<T, Row>(env: ExchangeSync, p: PaymentKind<T, Row>): Promise<void> {
  const ids = await nonFinalIds(env.db, p.table, env.account, p.nonFinal, env.startedAt);
  await fetchByIdInBatches(
    env,
    ids,
    (id) => p.get(env, id),
    async (pages) => (await storeFetchedById(env, p, pages)).stored,
    'stored exchange payments answered 404 on refresh',
  );
}
