/**
 * By-hand scale check of the report (not part of the test suite): seeds N fills (default
 * 1,000,000) in a fresh schema of a Postgres server, writes the workbook, and prints the time
 * and the peak resident memory of this process.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node <built>/scripts/report-scale.js [fills] [maxRowsPerSheet]
 *
 * Needs a real Postgres: the data is generated server-side with generate_series.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../src/config/load.js';
import { openStore } from '../src/store/db/database.js';
import { migrate } from '../src/store/db/migrate.js';
import { createLogger } from '../src/log/logger.js';
import { writeReport } from '../src/stages/report.js';

const fills = Number(process.argv[2] ?? 1_000_000);
const maxRowsPerSheet = process.argv[3] ? Number(process.argv[3]) : undefined;
const url = process.env.DATABASE_URL;
if (!url) throw new Error('set DATABASE_URL to a Postgres server');

const schema = `rr_scale_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query(`create schema ${schema}`);
const store = await openStore({ url, schema });
try {
  await migrate(store);
  const db = store.db;
  const runId = 'r-scale';
  await db
    .insertInto('run')
    .values({ id: runId, command: 'run', period_from: '2026-11-01', period_to: '2026-11-02', status: 'running' })
    .execute();
  const t0 = Date.now();
  // 1,000 orders; fills spread over the day; every 1,000th quantity has 18 significant digits (written as text).
  await sql`insert into exchange_order (ex_ord_id, ord_status, side, symbol, cum_qty, avg_px, raw)
    select 500000000000 + o, 'FILLED', 'BUY', 'BTC-EUR', 0, 43000, '{}' from generate_series(1, 1000) o`.execute(db);
  await sql`insert into exchange_fill (exec_id, ex_ord_id, trade_id, side, symbol, price, qty, fee, timestamp, raw)
    select 1000000000000 + i, 500000000000 + (i % 1000) + 1, i, case when i % 2 = 0 then 'BUY' else 'SELL' end, 'BTC-EUR',
      43000 + (i % 997) * 0.01,
      case when i % 1000 = 0 then 0.123456789012345678 else round((i % 9973) * 0.00001234, 8) end,
      round((i % 977) * 0.01, 2),
      timestamptz '2026-11-01' + (i * (86399.0 / ${fills})) * interval '1 second', '{}'
    from generate_series(1, ${fills}) i`.execute(db);
  await sql`analyze exchange_fill`.execute(db);
  console.log(`seeded ${fills} fills in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  const reportsDir = mkdtempSync(join(tmpdir(), 'rr-scale-'));
  const config = loadConfig({ env: { REPORTS_DIR: reportsDir } });
  let peak = process.memoryUsage().rss;
  let peakHeap = 0;
  let peakExternal = 0;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peak = Math.max(peak, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
    peakExternal = Math.max(peakExternal, m.external + m.arrayBuffers);
  }, 50);
  const rssBefore = process.memoryUsage().rss;
  const t1 = Date.now();
  const result = await writeReport(
    { store, config, logger: createLogger({ level: 'warn' }), runId, now: new Date('2026-11-02T02:00:00Z') },
    runId,
    { maxRowsPerSheet },
  );
  clearInterval(sampler);
  const ms = Date.now() - t1;
  const mb = (n: number) => `${(n / 1024 / 1024).toFixed(0)} MB`;
  console.log(
    JSON.stringify(
      {
        fills,
        seconds: +(ms / 1000).toFixed(1),
        rowsPerSecond: Math.round(fills / (ms / 1000)),
        rssBefore: mb(rssBefore),
        peakRssSampled: mb(peak),
        peakHeapUsed: mb(peakHeap),
        peakExternalAndBuffers: mb(peakExternal),
        maxRssProcess: mb(process.resourceUsage().maxRSS * 1024),
        fileSize: mb(statSync(result.path).size),
        sheets: result.sheets,
        path: result.path,
      },
      null,
      2,
    ),
  );
} finally {
  await store.close();
  await admin.query(`drop schema if exists ${schema} cascade`);
  await admin.end();
}
