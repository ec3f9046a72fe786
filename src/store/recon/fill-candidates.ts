/** The reconcile's fills pre-selection: the fills a per-fill rule could fail, judged in SQL page by page, with their
 * orders; the ids a judgement after a change reads; the two halves of a first judgement's id range.
 */
import { sql, type RawBuilder } from 'kysely';
import { inTransaction, type Db } from '../db/database.js';
import type { Fill, FillField, FillPrefilter } from '../../domain/index.js';
import { idRanges, prefetched, scanPages, type IdRange, type Span } from '../db/keyset.js';
import { changedFillIds } from './changes.js';
import { keepsSql, refTable, type ConditionColumns } from './prefilter-sql.js';
import { SCAN_SIZE, toFill, type FillRow } from './exchange-reads.js';

/**
 * Fills in the span that could fail a per-fill rule, pre-selected in SQL numeric (exact), by
 * scan pages of `scanSize` fills in exec_id order. Each page says how many fills it scanned,
 * so the rules can count the others as checked (engine addPassedFills). A fill is loaded when
 * any rule's description in `filter` keeps it (store/recon/prefilter-sql.ts: the rules' own conditions, over the fill, its
 * order, its symbol's and its day's reference values); the pure rules then decide on the loaded fills.
 * `changedSince` (docs/rules.md "What a run judges"): also the fills judged for a change since that
 * transaction (null: every stored fill); absent: the period alone. `scan.bounds`: only the exec_ids in (after, through]
 * (fillIdHalves: the reconcile scans the two halves of a first judgement side by side). `scan.ahead`: the pages of a
 * judgement's id list asked for before the one the caller holds is judged (2 on a server: two sessions side by side).
 */
export async function* fillCandidatesIn(
  db: Db,
  account: string,
  span: Span,
  filter: FillPrefilter,
  scanSize = SCAN_SIZE,
  changedSince?: string | null,
  scan: { bounds?: FillIdBounds; ahead?: number } = {},
): AsyncGenerator<{ scanned: number; fills: Fill[] }> {
  const { bounds = { after: null, through: null }, ahead = 1 } = scan;
  const judge = fillPageJudge(db, account, filter);
  if (typeof changedSince !== 'string') {
    // The span, or every stored fill: pages on the key, each from where the last ended.
    const where = changedSince === null ? sql`true` : sql`f.timestamp >= ${span.from} and f.timestamp < ${span.to}`;
    const fetch = (previous: string | null) => {
      const after = previous ?? bounds.after;
      return judge(sql`
        select f.exec_id, f.ex_ord_id, f.side, f.symbol, f.price, f.qty, f.fee, f.timestamp
        from exchange_fill f
        where f.account = ${account} and ${where} ${idBounds(after, bounds.through)}
        order by f.exec_id
        limit ${scanSize}`);
    };
    for await (const page of scanPages(fetch, scanSize)) yield { scanned: page.scanned, fills: page.fills };
    return;
  }
  // The span's fills and those judged for a change: their ids listed once, then judged a range of the list at a time:
  // the span's fills of the range read on the time index (whose entries carry exec_id: only the range's rows are
  // fetched), the few judged fills outside the span probed one by one on the key (offset 0 keeps it a nested loop).
  // Each fill of the list probed on the key cost ten times as much (a night's page of 50,000 fills: 200 ms -> 20 ms).
  const list = await judgedFillIds(db, account, span, changedSince, bounds);
  const fetch = (range: IdRange) =>
    judge(sql`
      select f.exec_id, f.ex_ord_id, f.side, f.symbol, f.price, f.qty, f.fee, f.timestamp
      from exchange_fill f
      where f.account = ${account} and f.timestamp >= ${span.from} and f.timestamp < ${span.to}
        ${idBounds(range.after, range.through)}
      ${
        range.subset.length === 0
          ? sql``
          : sql`union all
      select f.exec_id, f.ex_ord_id, f.side, f.symbol, f.price, f.qty, f.fee, f.timestamp
      from unnest(string_to_array(${range.subset.join(',')}, ',')::bigint[]) as i(exec_id)
      cross join lateral (
        select f.* from exchange_fill f where f.account = ${account} and f.exec_id = i.exec_id offset 0
      ) f
      where not (f.timestamp >= ${span.from} and f.timestamp < ${span.to})`
      }`);
  for await (const page of prefetched(idRanges(list.ids, scanSize, list.outside, bounds.after), fetch, ahead))
    yield { scanned: page.scanned, fills: page.fills };
}

/**
 * How fillCandidatesIn judges one page of fills (`page`: their columns, in exec_id order) in SQL: the fills any rule's
 * description in `filter` keeps, with their orders, and how many the page scanned. `db` is the pool: each page is a
 * transaction of its own (ordersHashJoined).
 */
function fillPageJudge(db: Db, account: string, filter: FillPrefilter) {
  return async (page: RawBuilder<unknown>): Promise<{ scanned: number; last: string | null; fills: Fill[] }> => {
    const rows = await ordersHashJoined(
      db,
      async (trx) => (await fillPageQuery(account, filter, page).execute(trx)).rows,
    );
    const head = rows[0];
    const scanned = head ? Number(head.scanned) : 0;
    return { scanned, last: head?.last_exec_id ?? null, fills: rows.filter((r) => r.exec_id !== null).map(toFill) };
  };
}

/**
 * `fn` in a transaction whose statements are planned without nested loops where another join exists: a fills page
 * joins its orders by hash whatever the planner expects of it. A page of a night's new fills reads exec_ids above the
 * statistics' histogram (a night's ANALYZE leaves that column alone, statistics.ts), so the planner took a page of
 * 47,376 fills for one row and joined its 7,854 orders by a nested loop: 372 million comparisons, 11-13 s for one page
 * of a `reconcile` re-run by hand after the nightly run (0.05 s hash-joined). The page's probes on the keys (lateral
 * subqueries) have no other plan and stay nested loops.
 */
export function ordersHashJoined<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return inTransaction(db, async (trx) => {
    await sql`set local enable_nestloop = off`.execute(trx);
    return fn(trx);
  });
}

/** The statement of fillPageJudge: the page's candidates (or one row of null fills), each with the page's figures. */
export function fillPageQuery(account: string, filter: FillPrefilter, page: RawBuilder<unknown>) {
  const sym = refTable(filter.symbols, { name: 'symbol', type: 'text' }, 's');
  const days = refTable(filter.days, { name: 'day', type: 'date' }, 'r');
  const columns: ConditionColumns<FillField> = {
    fields: {
      price: sql.ref('p.price'),
      qty: sql.ref('p.qty'),
      fee: sql.ref('p.fee'),
      timestamp: sql.ref('p.timestamp'),
      side: sql.ref('p.side'),
      symbol: sql.ref('p.symbol'),
      order: sql.ref('po.ex_ord_id'),
      'order.ordType': sql.ref('po.ord_type'),
      'order.side': sql.ref('po.side'),
      'order.symbol': sql.ref('po.symbol'),
      'order.timestamp': sql.ref('po.timestamp'),
    },
    symbol: sym,
    unlisted: sql`(s.symbol is null)`,
    day: days,
  };
  return sql<FillRow & { scanned: string; last_exec_id: string | null }>`
      with page as materialized (${page}),
      stats as (select count(*)::bigint as scanned, max(exec_id) as last_exec_id from page),
      sym as (select * from ${sym.recordset}),
      rates as (select * from ${days.recordset}),
      -- The page's orders, each probed once (offset 0 keeps it a nested loop: a hash of every stored order costs more
      -- than the page), then hash-joined to their fills (ordersHashJoined).
      ords as materialized (
        select o.ex_ord_id, o.ord_type, o.side, o.symbol, o.timestamp
        from (select distinct ex_ord_id from page) d
        cross join lateral (
          select o.ex_ord_id, o.ord_type, o.side, o.symbol, o.timestamp
          from exchange_order o where o.account = ${account} and o.ex_ord_id = d.ex_ord_id offset 0
        ) o
      ),
      -- The fills a rule could fail: each rule's own description (store/recon/prefilter-sql.ts).
      cand as (
        select p.*, po.ex_ord_id as po_id, po.ord_type as po_type, po.side as po_side, po.symbol as po_symbol
        from page p
        left join sym s on s.symbol = p.symbol
        left join rates r on r.day = (p.timestamp at time zone 'UTC')::date
        left join ords po on po.ex_ord_id = p.ex_ord_id
        where ${keepsSql(filter.couldFail, columns)}
      )
      select st.scanned, st.last_exec_id, c.*, c.po_id as order_id, c.po_type as ord_type,
        c.po_side as order_side, c.po_symbol as order_symbol, n.ex_ord_id as not_found_id
      from stats st
      left join cand c on true
      left join exchange_order_not_found n on n.account = ${account} and n.ex_ord_id = c.ex_ord_id
      order by c.exec_id`;
}

/** `and` the exec_id bounds (after, through] of a scan, null sides unbounded. */
function idBounds(after: string | null, through: string | null): RawBuilder<unknown> {
  return sql`${after === null ? sql`` : sql`and f.exec_id > ${after}::bigint`}
    ${through === null ? sql`` : sql`and f.exec_id <= ${through}::bigint`}`;
}

/**
 * The exec_ids fillCandidatesIn judges after a change: those of the span and those judged for a change since
 * `changedSince` (changedFillIds), within `bounds`, ascending, comma-separated (about 15 bytes an id: 1.5 MB for a night
 * of 100,000 fills), and apart the ones outside the span (null: none). The changed fills are taken outside the span
 * only, so the two parts are disjoint: at night nearly every changed fill is one of the span's, and grouping the
 * night's 200,000 span and changed ids to drop the repeats cost half the statement (a hash spilled to disk).
 */
export async function judgedFillIds(
  db: Db,
  account: string,
  span: Span,
  changedSince: string,
  bounds: FillIdBounds,
): Promise<{ ids: string | null; outside: string | null }> {
  const row = (
    await sql<{ ids: string | null; outside: string | null }>`
      with outside as materialized (
        select distinct c.exec_id from (${changedFillIds(account, changedSince, bounds.after, bounds.through, span)}) c
      )
      select (
          select string_agg(exec_id::text, ',' order by exec_id) from (
            select f.exec_id from exchange_fill f
            where f.account = ${account} and f.timestamp >= ${span.from} and f.timestamp < ${span.to}
              ${idBounds(bounds.after, bounds.through)}
            union all
            select exec_id from outside
          ) u
        ) as ids,
        (select string_agg(exec_id::text, ',' order by exec_id) from outside) as outside`.execute(db)
  ).rows[0];
  return { ids: row?.ids ?? null, outside: row?.outside ?? null };
}

/** A range of exec_ids, (after, through]; null: unbounded on that side. */
export interface FillIdBounds {
  after: string | null;
  through: string | null;
}

/**
 * The account's stored exec_ids cut in two halves of the id range, (-inf, mid] and (mid, +inf), for two scans of
 * fillCandidatesIn side by side; null when there is no range to cut (no fill, or one id).
 */
export async function fillIdHalves(db: Db, account: string): Promise<[FillIdBounds, FillIdBounds] | null> {
  const row = (
    await sql<{ lo: string | null; hi: string | null; mid: string | null }>`
      select min(exec_id)::text as lo, max(exec_id)::text as hi,
        ((min(exec_id)::numeric + max(exec_id)) / 2)::bigint::text as mid
      from exchange_fill where account = ${account}`.execute(db)
  ).rows[0];
  if (!row?.mid || row.lo === row.hi) return null;
  return [
    { after: null, through: row.mid },
    { after: row.mid, through: null },
  ];
}
