/**
 * The database half of the fills sync alone: the same 1000-row pages written one after another
 * by commitFillsPage (the sync's statement) and by COPY into a staging table plus a merge, on one
 * session, with pages parsed, validated and mapped (raw JSON included) beforehand. `npm run build && node dist/bench/fills-write.js`;
 * BENCH_DATABASE_URL (default the local test server) and PAGES (default 60) change the set-up.
 * The rates tell what Postgres costs per page, without the API or the client's CPU.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { copyMerge, fillCopyLine } from './copy-fills.js';
import { openStore } from '../src/store/db/database.js';
import { migrate } from '../src/store/db/migrate.js';
import { parseJsonLossless } from '../src/decimal/json.js';
import { startSandbox } from '../sandbox/index.js';
import { fastFill, fillSchema, validateRecords } from '../src/sources/exchange/schemas.js';
import { commitFillsPage } from '../src/store/sync/exchange-records.js';
import { toFillRow } from '../src/sources/exchange/transform.js';
import type { NewExchangeFill } from '../src/store/db/schema.js';

const baseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const wanted = Number(process.env.PAGES ?? 60);

const sb = await startSandbox({
  seed: 5,
  days: 5,
  exchangeOrdersPerDay: Math.ceil((wanted * 1000) / 15) + 100,
  fillsPerOrder: 3,
  ordersPerDay: 10,
  depositsPerDay: 4,
  withdrawalsPerDay: 3,
  now: new Date(),
  faults: 'none',
});
const pages: Array<{ text: string; rows: NewExchangeFill[] }> = [];
let toExec: string | null = null;
while (pages.length < wanted) {
  const u = new URL(`${sb.env.EXCHANGE_API_URL}/fills`);
  u.searchParams.set('limit', '1000');
  if (toExec) u.searchParams.set('toExecId', toExec);
  const text = await (await fetch(u, { headers: { 'X-API-Token': sb.env.EXCHANGE_API_TOKEN! } })).text();
  const records = parseJsonLossless(text) as unknown[];
  const rows = validateRecords(fillSchema, records, 'execId', true, fastFill).valid.map((v) => toFillRow(v));
  // toExecId is inclusive or exclusive: the boundary fill comes again at most once; drop it.
  pages.push({ text, rows: toExec ? rows.filter((r) => r.exec_id !== toExec) : rows });
  if (records.length < 1000) break;
  toExec = rows[rows.length - 1]!.exec_id;
}
await sb.close();
const total = pages.reduce((n, p) => n + p.rows.length, 0);
console.log(`${pages.length} pages, ${total} fills`);

const admin = new pg.Client({ connectionString: baseUrl });
await admin.connect();
const schema = `bench_${randomBytes(4).toString('hex')}`;
await admin.query(`create schema ${schema}`);
const store = await openStore({ url: baseUrl, schema });
await migrate(store);
const rate = (ms: number) =>
  `${Math.round((total * 1000) / ms)} rows/s (${Math.round(ms)} ms, ${(ms / pages.length).toFixed(1)} ms/page)`;
try {
  // The sync's page statement as an upsert and as the plain insert of an incremental walk's new fills (fresh), in
  // turns, so that neither always runs on the table the other just emptied.
  const commitPages = async (fresh: boolean) => {
    await store.db.deleteFrom('exchange_fill').execute();
    const t = performance.now();
    for (const p of pages) {
      await commitFillsPage(
        store.db,
        {
          account: 'default',
          runId: null,
          rows: p.rows,
          pageText: p.text,
          coverageStream: 'fills',
          coverage: new Map(),
          cursors: [],
        },
        fresh,
      );
    }
    return performance.now() - t;
  };
  for (let pass = 1; pass <= 2; pass++) {
    for (const fresh of pass % 2 ? [false, true] : [true, false])
      console.log(`pass ${pass} commitFillsPage${fresh ? ' (fresh)' : '        '}: ${rate(await commitPages(fresh))}`);

    await store.db.deleteFrom('exchange_fill').execute();
    const client = new pg.Client({ connectionString: baseUrl, options: `-c search_path=${schema}` });
    await client.connect();
    const t = performance.now();
    for (const p of pages) {
      await copyMerge(
        client,
        p.rows.map((r) =>
          fillCopyLine([
            'default',
            r.exec_id,
            r.ex_ord_id,
            r.trade_id,
            r.side,
            r.symbol,
            r.price,
            r.qty,
            r.fee,
            r.timestamp,
            r.raw,
          ]),
        ),
      );
    }
    console.log(`pass ${pass} COPY + merge:             ${rate(performance.now() - t)}`);
    await client.end();
  }
} finally {
  await store.close();
  await admin.query(`drop schema ${schema} cascade`);
  await admin.end();
}
