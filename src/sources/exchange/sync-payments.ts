/** Exchange sync step: deposits and withdrawals by time windows, then the non-final ones by id. */
import { inTransaction, type Db } from '../../store/database.js';
import { writeOrSplit } from '../common/record-fallback.js';
import type { Page } from '../common/page.js';
import {
  DEPOSIT_NON_FINAL,
  depositSchema,
  validateRecords,
  WITHDRAWAL_NON_FINAL,
  withdrawalSchema,
  type Deposit,
  type Validated,
  type Withdrawal,
} from './schemas.js';
import { toDepositRow, toWithdrawalRow } from './transform.js';
import type { NewExchangeDeposit, NewExchangeWithdrawal } from '../../store/schema.js';
import { nonFinalIds, upsertDeposits, upsertWithdrawals } from '../../store/exchange-records.js';
import { handleQuarantine, type SyncEnv } from './sync-common.js';
import { timeCursor } from './streams.js';
import { checkAbort } from '../common/abort.js';
import { syncAnswers } from './sync-answers.js';
import { loadPageCap, padded, type StreamCap, type WindowStream } from './sync-windows.js';

function depositStream(env: SyncEnv, cap: StreamCap): WindowStream<Deposit, NewExchangeDeposit> {
  return {
    stream: 'deposits',
    cursor: timeCursor('deposits'),
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
    cursor: timeCursor('withdrawals'),
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
  await refreshPaymentsById(env, {
    table: 'exchange_deposit',
    nonFinal: DEPOSIT_NON_FINAL,
    get: (id) => env.client.depositById(id, env.signal),
    schema: depositSchema,
    idField: 'depositId',
    toRow: toDepositRow,
    keyOf: (r) => r.deposit_id,
    upsert: upsertDeposits,
    endpoint: 'GET /deposits/{id}',
    entity: 'deposit',
  });
  await refreshPaymentsById(env, {
    table: 'exchange_withdrawal',
    nonFinal: WITHDRAWAL_NON_FINAL,
    get: (id) => env.client.withdrawalById(id, env.signal),
    schema: withdrawalSchema,
    idField: 'withdrawalId',
    toRow: toWithdrawalRow,
    keyOf: (r) => r.withdrawal_id,
    upsert: upsertWithdrawals,
    endpoint: 'GET /withdrawals/{id}',
    entity: 'withdrawal',
  });
}

/** What differs between refreshing deposits and withdrawals by id: the rest is one procedure. */
interface PaymentsById<R, Row> {
  table: 'exchange_deposit' | 'exchange_withdrawal';
  nonFinal: readonly string[];
  get: (id: string) => Promise<Page | null>;
  schema: Parameters<typeof validateRecords<R>>[0];
  idField: string;
  toRow: (record: Validated<R>) => Row;
  keyOf: (row: Row) => string;
  upsert: (db: Db, account: string, rows: Row[], observedAt: Date) => Promise<unknown>;
  endpoint: string;
  entity: 'deposit' | 'withdrawal';
}

/**
 * Fetches the non-final payments by id and stores them with their page's quarantine; a page the
 * database refuses is written record by record (writeOrSplit), each refused record quarantined.
 */
async function refreshPaymentsById<R, Row>(env: SyncEnv, p: PaymentsById<R, Row>): Promise<void> {
  const ids = await nonFinalIds(env.db, p.table, env.account, p.nonFinal, env.startedAt);
  await refreshById(env, ids, p.get, async (pages) => {
    const validated = validateRecords(
      p.schema,
      pages.flatMap((page) => page.records),
      p.idField,
    );
    const rows = validated.valid.map((v) => p.toRow(v));
    const items = validated.valid.map((v, i) => ({ v, row: rows[i]! }));
    const split = await writeOrSplit(
      env.db,
      items,
      () =>
        inTransaction(env.db, async (trx) => {
          await p.upsert(trx, env.account, rows, env.startedAt);
          await handleQuarantine(env, trx, p.endpoint, p.entity, validated.invalid, rows.map(p.keyOf));
        }),
      (trx, it) => p.upsert(trx, env.account, [it.row], env.startedAt),
      async (trx, kept, refused) => {
        const dbRefused = refused.map((r) => ({
          index: r.item.v.index,
          raw: r.item.v.raw,
          reason: r.reason,
          key: p.keyOf(r.item.row),
        }));
        await handleQuarantine(
          env,
          trx,
          p.endpoint,
          p.entity,
          [...validated.invalid, ...dbRefused],
          kept.map((k) => p.keyOf(k.row)),
        );
      },
    );
    return split ? split.kept.length : rows.length;
  });
}

async function refreshById(
  env: SyncEnv,
  ids: string[],
  get: (id: string) => Promise<Page | null>,
  store: (pages: Page[]) => Promise<number>,
): Promise<void> {
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
