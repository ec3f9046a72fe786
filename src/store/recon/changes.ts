/** Change tracking (sql/0017): the records changed since an account was last judged, as SQL conditions the reads share,
 * and the watermark.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../db/database.js';
import type { Span } from '../db/keyset.js';

/**
 * The changes a reconcile judges: every write of a transaction the snapshot `since` (pg_snapshot
 * text, `xmin:xmax:xip,...`) did not see, that is committed after it was taken or still running
 * then; `since` null: the account was never judged, so every stored record is new. `until` is the
 * snapshot taken when this reconcile started: once its breaks are written, it is the next run's
 * `since` (closeJudgement). Judging against a whole snapshot, not only its oldest transaction,
 * keeps the set exact when another session holds a long transaction open.
 */
export interface Judgement {
  since: string | null;
  until: string;
  /** Why an earlier watermark was not used (it lies ahead of this server's transactions). */
  reset?: string;
  /**
   * Transaction hashes whose claimants the next run judges again, changed or not: orders paid to us that completed
   * after the exchange's deposits were read (rules/cross-rules.ts awaitsDeposit). Noted by closeJudgement.
   */
  again: Set<string>;
}

/**
 * The records of one account judged for a change since `since` (null: every one) that a span does not hold, in pages
 * of `pageSize`: what a reconcile judges beside the span's own.
 */
export type ChangedOutsideReader<T> = (
  db: Db,
  account: string,
  span: Span,
  since: string | null,
  pageSize: number,
) => AsyncGenerator<T[]>;

/**
 * Opens a reconcile's judgement: the account's watermark and the current snapshot, read before any
 * record is. A watermark ahead of every transaction this server has given out means the database
 * was restored into another server: every record is judged again.
 */
export async function openJudgement(db: Db, account: string): Promise<Judgement> {
  const [mark, now] = await Promise.all([
    db
      .selectFrom('reconcile_watermark')
      .select(sql<string>`judged_snapshot::text`.as('snapshot'))
      .where('account', '=', account)
      .executeTakeFirst(),
    currentSnapshot(db),
  ]);
  const opened = changesSince(mark?.snapshot ?? null, now);
  return {
    since: opened.since,
    until: now.snapshot,
    again: new Set(),
    ...(opened.reset
      ? {
          reset: `the stored watermark ${mark!.snapshot} is ahead of this server's transactions (${now.xmax}): the database was restored elsewhere, so every record is judged again`,
        }
      : {}),
  };
}

/** The current snapshot (pg_snapshot text) and its xmax, the next transaction this server will give out. */
export async function currentSnapshot(db: Db): Promise<{ snapshot: string; xmax: string }> {
  const snap = await sql<{
    snapshot: string;
    xmax: string;
  }>`select pg_current_snapshot()::text as snapshot, pg_snapshot_xmax(pg_current_snapshot())::text as xmax`.execute(db);
  return snap.rows[0]!;
}

/**
 * A stored snapshot as the start of "changed since": null when there is none, or when it lies ahead of every
 * transaction this server has given out (`now`: a current snapshot), as after a restore into another server: then
 * every record counts as changed (`reset`).
 */
export function changesSince(stored: string | null, now: { xmax: string }): { since: string | null; reset: boolean } {
  if (stored === null) return { since: null, reset: false };
  const storedXmax = stored.split(':')[1]!;
  if (BigInt(storedXmax) > BigInt(now.xmax)) return { since: null, reset: true };
  return { since: stored, reset: false };
}

/**
 * Marks the judged changes (inside the transaction that writes the reconcile's breaks), prunes the notes they
 * covered, and notes the hashes to judge again (`judgement.again`).
 */
export async function closeJudgement(
  trx: Db,
  account: string,
  runId: string,
  judgement: Judgement,
  now: Date,
): Promise<void> {
  await sql`
    insert into reconcile_watermark (account, judged_snapshot, run_id, judged_at)
    values (${account}, ${judgement.until}::pg_snapshot, ${runId}, ${now})
    on conflict (account) do update set judged_snapshot = excluded.judged_snapshot, run_id = excluded.run_id, judged_at = excluded.judged_at`.execute(
    trx,
  );
  await sql`delete from recon_change where account = ${account} and pg_visible_in_snapshot(change_xid, ${judgement.until}::pg_snapshot)`.execute(
    trx,
  );
  // Noted by this transaction, which `until` does not see: the next run's `since` does not either, so it judges them.
  if (judgement.again.size)
    await sql`select recon_note(${account}, 'tx_hash', h) from unnest(${[...judgement.again]}::text[]) as h`.execute(
      trx,
    );
}

/**
 * Whether a change_xid column holds a change not judged by `since`: not visible in that snapshot.
 * The range condition on its oldest transaction lets an index on the column serve it.
 */
export function unjudged(column: RawBuilder<unknown>, since: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`(${column} >= pg_snapshot_xmin(${since}::pg_snapshot) and not pg_visible_in_snapshot(${column}, ${since}::pg_snapshot))`;
}

/** `alias.change_xid` holds a change since `since` (every row when since is null). */
export function changedRow(alias: string, since: string | null): RawBuilder<SqlBool> {
  return since === null ? sql<SqlBool>`true` : unjudged(sql.ref(`${alias}.change_xid`), since);
}

/** Keys noted for a kind since `since` (recon_change: what a change left behind on other records). */
function noted(account: string, kind: 'tx_hash' | 'exchange_order', since: string): RawBuilder<{ key: string }> {
  return sql`select key from recon_change n where account = ${account} and kind = ${kind} and ${changedRow('n', since)}`;
}

/**
 * The transaction hashes whose claimants must be judged again: carried (now or before) by a
 * deposit or a partner order that changed. One deposit settles at most one order, so a change on
 * either side of a hash match can change the verdict of every order carrying the hash.
 */
export function changedHashes(account: string, since: string): RawBuilder<{ h: string }> {
  return sql`
    select tx_hash as h from exchange_deposit d where account = ${account} and ${changedRow('d', since)} and tx_hash is not null
    union select transaction_hash from partner_order o where account = ${account} and ${changedRow('o', since)} and transaction_hash is not null
    union ${noted(account, 'tx_hash', since)}`;
}

/** An exchange id the break key holds: the pattern a bigint column can be compared with. */
export const EXCHANGE_ID = '^[0-9]{1,18}$';

/** Exchange orders noted since `since` (a fill moved away, a 404 recorded or cleared), as bigint ids. */
function notedOrders(account: string, since: string): RawBuilder<{ id: string }> {
  return sql`select key::bigint as id from recon_change n where account = ${account} and kind = 'exchange_order' and ${changedRow('n', since)} and key ~ ${EXCHANGE_ID}`;
}

/**
 * Exchange orders whose own row changed, or one of whose fills did, or that were noted: the
 * orders the order rules judge for a change (the caller keeps those in the rules' scope).
 */
export function changedOrderIds(
  account: string,
  since: string,
  after: string | null,
  limit: number,
): RawBuilder<{ ex_ord_id: string }> {
  const above = (col: string) => (after === null ? sql`` : sql`and ${sql.ref(col)} > ${after}::bigint`);
  return sql`
    (select distinct ex_ord_id from exchange_fill f where account = ${account} and ${changedRow('f', since)} ${above('ex_ord_id')} order by 1 limit ${limit})
    union (select ex_ord_id from exchange_order o where account = ${account} and ${changedRow('o', since)} ${above('ex_ord_id')} order by 1 limit ${limit})
    union (select n.id from (${notedOrders(account, since)}) n where true ${above('n.id')} order by 1 limit ${limit})`;
}

/**
 * Fills the fill rules judge for a change: changed themselves, or of an order that changed or was
 * noted (E_FILL_ORPHAN and E_FEE_RATE read the order); exec_ids in (after, through] (null: unbounded on that side),
 * and outside `except` when given (each branch drops them on the row it reads anyway: no list of a night's 100,000
 * changed fills for the caller to subtract from the span's). Unordered, possibly repeated (a changed fill of a changed
 * order): the reconcile reads the list once per judgement (fill-candidates.ts judgedFillIds).
 */
export function changedFillIds(
  account: string,
  since: string,
  after: string | null = null,
  through: string | null = null,
  except: Span | null = null,
): RawBuilder<{ exec_id: string }> {
  const above = sql`${after === null ? sql`` : sql`and f.exec_id > ${after}::bigint`} ${through === null ? sql`` : sql`and f.exec_id <= ${through}::bigint`}`;
  const kept = sql`${above} ${except === null ? sql`` : sql`and not (f.timestamp >= ${except.from} and f.timestamp < ${except.to})`}`;
  return sql`
    select f.exec_id from exchange_fill f where f.account = ${account} and ${changedRow('f', since)} ${kept}
    union all
    select f.exec_id
      from (select ex_ord_id from exchange_order o where account = ${account} and ${changedRow('o', since)} union ${notedOrders(account, since)}) c
      -- each changed order's fills on the order index (offset 0 keeps it a nested loop: the planner hashed the changed
      -- orders against a scan of every stored fill, 0.5 s on a night of 20,000 orders in a million fills)
      cross join lateral (
        select f.exec_id from exchange_fill f where f.account = ${account} and f.ex_ord_id = c.ex_ord_id ${kept} offset 0
      ) f`;
}

/**
 * Whether the record a break's key names was judged for a change, per kind of record (the
 * conditions of the reads above, asked for one row): used for the lifecycle's scope and to tell
 * which breaks of earlier days late data opened or resolved. `since` null: every record.
 */
export const judgedForChange = {
  partnerOrder(alias: string, account: string, since: string | null): RawBuilder<SqlBool> {
    if (since === null) return sql<SqlBool>`true`;
    return sql<SqlBool>`(${changedRow(alias, since)} or ${sql.ref(`${alias}.transaction_hash`)} in (${changedHashes(account, since)}))`;
  },
  exchangeOrder(id: RawBuilder<unknown>, account: string, since: string | null): RawBuilder<SqlBool> {
    if (since === null) return sql<SqlBool>`true`;
    return sql<SqlBool>`(exists (select 1 from exchange_order o where o.account = ${account} and o.ex_ord_id = ${id} and ${changedRow('o', since)})
      or exists (select 1 from exchange_fill f where f.account = ${account} and f.ex_ord_id = ${id} and ${changedRow('f', since)})
      or ${id} in (${notedOrders(account, since)}))`;
  },
  fill(alias: string, account: string, since: string | null): RawBuilder<SqlBool> {
    if (since === null) return sql<SqlBool>`true`;
    const order = sql.ref(`${alias}.ex_ord_id`);
    return sql<SqlBool>`(${changedRow(alias, since)}
      or exists (select 1 from exchange_order o where o.account = ${account} and o.ex_ord_id = ${order} and ${changedRow('o', since)})
      or ${order} in (${notedOrders(account, since)}))`;
  },
  payment(alias: string, since: string | null): RawBuilder<SqlBool> {
    return changedRow(alias, since);
  },
};

/**
 * The balance snapshots that close a pair a changed fill, deposit or withdrawal falls into, by its
 * timestamp (a change of state is placed where it is observed: in the latest pair, always
 * checked). null: every pair (since null). A flow after the latest snapshot belongs to no pair yet.
 */
export async function closingsOfChangedFlows(
  db: Db,
  account: string,
  exchangeAccount: string,
  since: string | null,
): Promise<Set<string> | null> {
  if (since === null) return null;
  const rows = await sql<{ id: string }>`
    select distinct s.id::text as id from (
      select timestamp as at from exchange_fill f where account = ${account} and ${changedRow('f', since)}
      union select timestamp from exchange_deposit d where account = ${account} and ${changedRow('d', since)} and timestamp is not null
      union select timestamp from exchange_withdrawal w where account = ${account} and ${changedRow('w', since)} and timestamp is not null
    ) t
    cross join lateral (
      (select id from balance_snapshot where account = ${account} and exchange_account = ${exchangeAccount} and fetched_at >= t.at
       order by fetched_at, id limit 1)
      -- A flow inside a snapshot's window (after its request) may fall into the pair after it too.
      union
      (select id from balance_snapshot where account = ${account} and exchange_account = ${exchangeAccount}
         and coalesce(requested_at, fetched_at) >= t.at
       order by fetched_at, id limit 1)
    ) s`.execute(db);
  return new Set(rows.rows.map((r) => r.id));
}

/** Whether a time lies in the span: the same bounds as every period read. */
export function inSpan(time: RawBuilder<unknown>, span: Span): RawBuilder<SqlBool> {
  return sql<SqlBool>`(${time} >= ${span.from} and ${time} < ${span.to})`;
}

/**
 * The times of the fills changed since `since` (null: every stored fill): the days whose fee rates
 * the fills prefilter needs besides the period's. null when there are none.
 */
export async function judgedFillTimeRange(
  db: Db,
  account: string,
  since: string | null,
): Promise<{ from: string; to: string } | null> {
  // Every fill: the two ends of the time index. The changed ones: read through the change index first (offset 0),
  // since min() and max() over the time index, filtered on change_xid, walked a night's million older fills (0.3 s).
  const fills =
    since === null
      ? sql`exchange_fill f where account = ${account}`
      : sql`(select timestamp from exchange_fill f where account = ${account} and ${changedRow('f', since)} offset 0) f`;
  const r = await sql<{ from: string | null; to: string | null }>`
    select to_char(min(timestamp) at time zone 'UTC', 'YYYY-MM-DD') as from, to_char(max(timestamp) at time zone 'UTC', 'YYYY-MM-DD') as to
    from ${fills}`.execute(db);
  const row = r.rows[0];
  return row?.from && row.to ? { from: row.from, to: row.to } : null;
}
