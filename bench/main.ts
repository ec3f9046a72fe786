/**
 * Ingest bench of the exchange sync (issue 4, point 8): raw COPY of fill rows, COPY into a
 * staging table plus a merge, and the full sync against a local sandbox, all on the same fills,
 * in rows per second. `npm run build && npm run bench`; BENCH_DATABASE_URL (default the local
 * test server), BENCH_FILLS (default 150000) and BENCH_ROUNDS (default 3; each round in a fresh
 * schema, the median ratio is printed last, as one run on a shared machine is noisy) change the
 * set-up.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { copyInto, copyMerge, fillCopyLine } from './copy-fills.js';
import { openStore } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { loadConfig } from '../src/config/load.js';
import { createLogger } from '../src/log/logger.js';
import { decimalText, toDecimal } from '../src/decimal/decimal.js';
import { startSandbox } from '../src/sandbox/index.js';
import { syncExchange } from '../src/sources/exchange/sync.js';
import { exchangeClientFromConfig, type ExchangeClient } from '../src/sources/exchange/client.js';

const baseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const target = Number(process.env.BENCH_FILLS ?? 150_000);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));

function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

async function timeIt(fn: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

const rate = (rows: number, ms: number) => Math.round((rows * 1000) / ms);

/**
 * Raw COPY and COPY + merge of the same fills the sandbox serves (same seed and day), as the sync
 * writes them: canonical decimals, ISO times, the record as raw JSON.
 */
async function measureCopy(client: pg.Client, sandboxOptions: Parameters<typeof startSandbox>[0]): Promise<{ count: number; copyMs: number; mergeMs: number }> {
  const t = performance.now();
  const local = await startSandbox(sandboxOptions);
  const fills = local.data.fills();
  await local.close();
  console.log(`sandbox: ${fills.length} fills generated in ${Math.round(performance.now() - t)} ms`);
  const lines = fills.map((f) =>
    fillCopyLine([
      'default',
      f.execId,
      f.exOrdId,
      f.tradeId,
      f.side,
      f.symbol,
      decimalText(toDecimal(f.price)),
      decimalText(toDecimal(f.qty)),
      decimalText(toDecimal(f.fee)),
      new Date(f.timestamp).toISOString(),
      JSON.stringify(f),
    ]),
  );

  await client.query('truncate exchange_fill');
  const copyMs = await timeIt(() => copyInto(client, 'exchange_fill', lines));
  await client.query('truncate exchange_fill');
  const mergeMs = await timeIt(() => copyMerge(client, lines));
  await client.query('truncate exchange_fill');

  return { count: fills.length, copyMs, mergeMs };
}

async function main(): Promise<void> {
  const days = 5;
  const fillsPerOrder = 3;
  const perDay = Math.ceil(target / days / fillsPerOrder);
  const sandboxOptions = { seed: 5, days, exchangeOrdersPerDay: perDay, fillsPerOrder, ordersPerDay: 10, depositsPerDay: 4, withdrawalsPerDay: 3, now: new Date() };
  const child = fork(fileURLToPath(new URL('./sandbox-child.js', import.meta.url)), [JSON.stringify(sandboxOptions)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const served = await new Promise<{ env: Record<string, string>; clock: number; fills: number }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { env: Record<string, string>; clock: number; fills: number }));
    child.once('exit', (code) => reject(new Error(`sandbox child exited with ${code}`)));
  });
  const sb = { close: async () => void child.disconnect() };

  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  const ratios: number[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      console.log(`\nround ${round} of ${rounds}`);
      ratios.push(await benchRound(admin, served, sandboxOptions));
    }
  } finally {
    await admin.end();
    await sb.close();
  }
  const sorted = ratios.slice().sort((x, y) => x - y);
  console.log('');
  console.log(`fills stage vs COPY + merge, per round: ${ratios.map((r) => `${r.toFixed(2)}x`).join(', ')}; median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)}x`);
}

/**
 * One round in a fresh schema: COPY and COPY + merge of the fills, then the sync from scratch.
 * Returns the fills stage's rate over COPY + merge's.
 */
async function benchRound(admin: pg.Client, served: { env: Record<string, string>; clock: number; fills: number }, sandboxOptions: Parameters<typeof startSandbox>[0]): Promise<number> {
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  await admin.query(`create schema ${schema}`);
  const url = withSearchPath(baseUrl, schema);
  const store = await openStore({ url, schema });
  await migrate(store);
  const client = new pg.Client({ connectionString: url });
  await client.connect();

  try {
    // The COPY rows live only inside measureCopy: the sync below runs with a heap of its own size.
    const { count, copyMs, mergeMs } = await measureCopy(client, sandboxOptions);
    if (served.fills !== count) throw new Error(`sandbox child serves ${served.fills} fills, expected ${count}`);
    const dir = mkdtempSync(join(tmpdir(), 'rr-bench-'));
    const configPath = join(dir, 'config.json');
    writeFileSync(configPath, JSON.stringify({ exchange: { rateLimitPerSecond: 1000 } }));
    const config = loadConfig({ env: { ...served.env }, configPath });
    const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'warn' });
    const t = performance.now();
    const cpu0 = process.cpuUsage();
    let cpuAfterFills: NodeJS.CpuUsage | undefined;
    // BENCH_FILLS_ONLY=1: the other list endpoints answer an empty page (profiling the fills stage).
    const fillsOnly = process.env.BENCH_FILLS_ONLY === '1';
    const real = fillsOnly ? exchangeClientFromConfig(config, logger) : undefined;
    const stubbed: ExchangeClient | undefined = real && {
      ...real,
      orders: async (q, s) => {
        cpuAfterFills ??= process.cpuUsage(cpu0);
        return { ...(await real.orders({ ...q, from: 0, to: 1 }, s)), records: [] };
      },
      trades: async (q, s) => ({ ...(await real.trades({ ...q, from: 0, to: 1 }, s)), records: [] }),
      orderById: async () => null,
    };
    const result = await syncExchange({ store, config, logger, runId: null, now: new Date(served.clock) }, { progress: 'off', client: stubbed });
    await real?.close();
    const syncMs = performance.now() - t;
    const cpu = process.cpuUsage(cpu0);
    const stored = await client.query<{ n: string }>('select count(*) as n from exchange_fill');

    const fillsMs = result.stageMs.fills ?? syncMs;
    console.log('');
    console.log(`fills rows:                  ${count} (stored by the sync: ${stored.rows[0]!.n})`);
    console.log(`raw COPY:                    ${rate(count, copyMs)} rows/s (${Math.round(copyMs)} ms)`);
    console.log(`COPY + merge:                ${rate(count, mergeMs)} rows/s (${Math.round(mergeMs)} ms)`);
    console.log(`sync, fills stage:           ${rate(result.counts.fills, fillsMs)} rows/s (${fillsMs} ms, ${result.counts.requests} requests in all)`);
    console.log(`sync, whole run:             ${Math.round(syncMs)} ms; stages ${JSON.stringify(result.stageMs)}`);
    console.log(`sync, CPU of this process:   ${JSON.stringify(result.stageCpuMs)} ms per stage`);
    console.log(`sync, main process CPU:      ${Math.round((cpu.user + cpu.system) / 1000)} ms (user ${Math.round(cpu.user / 1000)}, system ${Math.round(cpu.system / 1000)})`);
    if (cpuAfterFills) console.log(`main CPU up to fills' end:   ${Math.round((cpuAfterFills.user + cpuAfterFills.system) / 1000)} ms`);
    console.log(`fills stage vs COPY + merge: ${(rate(result.counts.fills, fillsMs) / rate(count, mergeMs)).toFixed(2)}x`);
    return rate(result.counts.fills, fillsMs) / rate(count, mergeMs);
  } finally {
    await client.end();
    await store.close();
    await admin.query(`drop schema ${schema} cascade`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
