/**
 * What the machine allows, measured beside each stage (issue 47): the floor of a stage is the least any client of the
 * same sandbox and server could spend on the same rows.
 *  - fetch: the listing requests the exchange sync made (fills, trades, orders), replayed one after another with
 *    fetch and JSON.parse only: no validation, no storage, no planning;
 *  - COPY: the rows stored, copied in and out in Postgres's text format (bench/copy-fills.ts);
 *  - aggregate: one plain SQL aggregate over the same fills and orders, the arithmetic the reconcile's order checks
 *    do (sum and VWAP of each order's fills beside its cumQty and avgPx).
 */
import type pg from 'pg';

export interface FetchFloor {
  requests: number;
  rows: number;
  ms: number;
}

/** Replays `urls` (path?query under `baseUrl`) one after another: fetch, read the body, JSON.parse it. */
export async function bareClient(baseUrl: string, token: string, urls: readonly string[]): Promise<FetchFloor> {
  let rows = 0;
  const t = performance.now();
  for (const url of urls) {
    const res = await fetch(`${baseUrl}${url}`, { headers: { 'X-API-Token': token } });
    const body: unknown = JSON.parse(await res.text());
    if (!res.ok) throw new Error(`bare client: ${url} answered ${res.status}`);
    rows += Array.isArray(body) ? body.length : 0;
  }
  return { requests: urls.length, rows, ms: performance.now() - t };
}

/** Each order beside the sum and VWAP of its fills: the reconcile's order checks as one statement (orders compared). */
export async function aggregateFloor(client: pg.Client): Promise<{ rows: number; ms: number }> {
  const t = performance.now();
  const r = await client.query<{ orders: string; differing: string }>(`
    select count(*)::text as orders,
      count(*) filter (where t.qty is distinct from t.cum_qty or t.vwap is distinct from t.avg_px)::text as differing
    from (
      select o.cum_qty, o.avg_px, sum(f.qty) as qty, sum(f.qty * f.price) / nullif(sum(f.qty), 0) as vwap
      from exchange_order o left join exchange_fill f on f.account = o.account and f.ex_ord_id = o.ex_ord_id
      group by o.account, o.ex_ord_id, o.cum_qty, o.avg_px
    ) t`);
  return { rows: Number(r.rows[0]!.orders), ms: performance.now() - t };
}
