/**
 * `npm run build && npm run bench` (issue 12, point 7): the whole run at scale, on Postgres, with
 * the sandbox serving from a child process. Each round, in a fresh schema of BENCH_DATABASE_URL
 * (default the local test server, dropped after):
 *  (a) a first `run` over 10 days of history (1,000,000 fills, 200,000 exchange orders, 100,000
 *      partner orders, 3,000 deposits, 1,000 withdrawals), its period covering the history's days;
 *  (b) the nightly run the scheduler fires one day later (yesterday, schedule.lookbackDays), after
 *      a new day of activity (about 10,000 fills);
 *  (c) COPY and COPY + merge of the fills (a) stored, against the fills stage of (a).
 * Each run is a child process of its own (its peak RSS is the run's), the sandbox counts the
 * requests per endpoint. BENCH_SCALE (default 1) scales every volume; develop at 0.02.
 * BENCH_ROUNDS (default 1: at scale 1 a round takes minutes, mostly the first run) repeats the
 * whole round; with more than one, the medians are printed last. BENCH_KEEP_SCHEMA=1 keeps each
 * round's schema (printed) instead of dropping it, to inspect what a run stored. At scale 1 (or with
 * BENCH_WRITE_DOCS=1) the figures are written into docs/performance.md (bench/figures-doc.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { runPipelineChild, startSandboxChild } from './children.js';
import { copyInto, copyMerge, copyOut } from './copy-fills.js';
import { printHeader, printRound, printSummary, type RoundResult } from './print.js';
import { figuresBlock, writeFigures } from './figures-doc.js';
import type { SandboxCounts } from './sandbox-child.js';
import { DEFAULT_OPTIONS } from '../sandbox/options.js';
import { addDays, MS_PER_DAY, toDay } from '../src/util/dates.js';

const baseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const scale = Number(process.env.BENCH_SCALE ?? 1);
const rounds = Math.max(1, Math.floor(Number(process.env.BENCH_ROUNDS ?? 1)));

const DAYS = 10;
/** The first run's history at scale 1, besides fills (FILLS_PER_ORDER makes them ~1,000,000). */
const HISTORY = { exchangeOrders: 200_000, partnerOrders: 100_000, deposits: 3_000, withdrawals: 1_000 };
/**
 * About 1,000 of the deposits come from partner orders paid to our wallets: 1.5% of the COMPLETED
 * BUY orders, which are ~0.65 of all (the sandbox's default, half of them, would bring 33,000).
 */
const PAID_TO_US_SHARE = 0.015;
const PARTNER_DEPOSITS = 1_000;
/** Mean fills per filled exchange order; about 0.85 of the orders fill. */
const FILLS_PER_ORDER = 6;
/** The new day before the nightly run: ~10,000 fills (issue 12); the rest at the history's daily rate (deposits: besides the partner orders'). */
const NEW_DAY = {
  fills: 10_000,
  partnerOrders: HISTORY.partnerOrders / DAYS,
  deposits: (HISTORY.deposits - PARTNER_DEPOSITS) / DAYS,
  withdrawals: HISTORY.withdrawals / DAYS,
};
/** The scheduler fires at 02:00 UTC (default schedule.cron "0 2 * * *"): both runs start then. */
const FIRE_AT_MS = 2 * 3_600_000;

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

const minus = (x: SandboxCounts, y: SandboxCounts): SandboxCounts =>
  Object.fromEntries(
    Object.entries(x).map(([k, v]) => [k, v - y[k as keyof SandboxCounts]]),
  ) as unknown as SandboxCounts;

/**
 * One round. The simulated calendar: the first run starts at 02:00 UTC of day X (X two days
 * before today, so both runs lie in the past), over days X-10 .. X-1 and the first two hours of
 * X; the sandbox then lives one day (the clock of its process jumps 24 h; a live sandbox spreads
 * the day's activity over the whole day), and the nightly run starts at 02:00 of X+1 for day X.
 * Every child's clock is offset to that calendar, so the times the runs stamp (balance snapshots)
 * and the sandbox's agree.
 */
async function benchRound(admin: pg.Client): Promise<RoundResult> {
  const dayX = Math.floor(Date.now() / MS_PER_DAY) * MS_PER_DAY - 2 * MS_PER_DAY;
  const firstAt = dayX + FIRE_AT_MS;
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  await admin.query(`create schema ${schema}`);
  const url = withSearchPath(baseUrl, schema);
  const dir = mkdtempSync(join(tmpdir(), 'rr-bench-'));
  const perDay = (n: number): number => Math.max(1, Math.round((n * scale) / DAYS));
  const t = performance.now();
  const sandbox = await startSandboxChild({
    seed: 5,
    days: DAYS,
    exchangeOrdersPerDay: perDay(HISTORY.exchangeOrders),
    fillsPerOrder: FILLS_PER_ORDER,
    ordersPerDay: perDay(HISTORY.partnerOrders),
    depositsPerDay: perDay(HISTORY.deposits - PARTNER_DEPOSITS),
    paidToUsShare: PAID_TO_US_SHARE,
    withdrawalsPerDay: perDay(HISTORY.withdrawals),
    faults: 'none',
    // The operator's published spec: /orders and /trades return up to 1000 records a page.
    exchangeOrdersCap: 1000,
    live: true,
    now: new Date(firstAt),
    clockOffsetMs: firstAt - Date.now(),
  });
  const generatedMs = performance.now() - t;
  try {
    const configPath = join(dir, 'config.json');
    const unlimited = 1000; // the schema's maximum: rate limits lifted for the local sandbox
    const config = {
      partner: {
        feeRate: DEFAULT_OPTIONS.partnerFeeRate,
        publicRateLimitPerSecond: unlimited,
        privateRateLimitPerSecond: unlimited,
      },
      exchange: { rateLimitPerSecond: unlimited, historyStart: toDay(new Date(dayX - DAYS * MS_PER_DAY)) },
    };
    writeFileSync(configPath, JSON.stringify(config));
    const env = {
      ...sandbox.env,
      DATABASE_URL: url,
      REPORTS_DIR: join(dir, 'reports'),
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    };
    // The run's clock is the sandbox's, read just before it starts.
    const offsetNow = async (): Promise<number> => (await sandbox.currentCounts()).clock - Date.now();

    await sandbox.requests();
    const firstPeriod = { from: addDays(toDay(new Date(dayX)), -DAYS), to: toDay(new Date(dayX)) };
    const first = await runPipelineChild({
      mode: 'first',
      period: firstPeriod,
      env,
      configPath,
      clockOffsetMs: await offsetNow(),
    });
    const firstRequests = await sandbox.requests();
    const afterFirst = await sandbox.currentCounts();
    if (first.status !== 'succeeded') throw new Error(`first run failed in ${first.failedStage}: ${first.error}`);

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const lines = await copyOut(client);

      const fillsPerExchangeOrder = afterFirst.fills / afterFirst.exchangeOrders;
      const rates = {
        exchangeOrdersPerDay: Math.max(1, Math.round((NEW_DAY.fills * scale) / fillsPerExchangeOrder)),
        ordersPerDay: Math.max(1, Math.round(NEW_DAY.partnerOrders * scale)),
        depositsPerDay: Math.max(1, Math.round(NEW_DAY.deposits * scale)),
        withdrawalsPerDay: Math.max(1, Math.round(NEW_DAY.withdrawals * scale)),
      };
      const newDay = minus(await sandbox.elapse(MS_PER_DAY, rates), afterFirst);
      await sandbox.requests();
      const nightly = await runPipelineChild({ mode: 'nightly', env, configPath, clockOffsetMs: await offsetNow() });
      const nightlyRequests = await sandbox.requests();
      if (nightly.status !== 'succeeded')
        throw new Error(`nightly run failed in ${nightly.failedStage}: ${nightly.error}`);
      await sandbox.close();

      await client.query('truncate exchange_fill');
      const copyMs = await timeIt(() => copyInto(client, 'exchange_fill', lines));
      await client.query('truncate exchange_fill');
      const mergeMs = await timeIt(() => copyMerge(client, lines));

      return {
        history: sandbox.counts,
        historyDays: DAYS,
        generatedMs,
        firstAt,
        afterFirst,
        newDay,
        first: { run: first, requests: firstRequests },
        nightly: { run: nightly, requests: nightlyRequests },
        copy: { rows: lines.length, copyMs, mergeMs },
      };
    } finally {
      await client.end();
    }
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
    // BENCH_KEEP_SCHEMA=1 keeps the round's database for inspection (its name is printed).
    if (process.env.BENCH_KEEP_SCHEMA === '1') process.stdout.write(`kept schema ${schema}\n`);
    else await admin.query(`drop schema ${schema} cascade`);
  }
}

async function main(): Promise<void> {
  if (!(scale > 0)) throw new Error(`BENCH_SCALE must be a positive number (got ${process.env.BENCH_SCALE})`);
  printHeader({ scale, rounds, database: baseUrl });
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  const results: RoundResult[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      const result = await benchRound(admin);
      results.push(result);
      printRound(result, { round, rounds, scale });
    }
  } finally {
    await admin.end();
  }
  printSummary(results, scale);
  // The documented figures are the bench's own: at scale 1 (what the page describes), or when asked.
  const write = process.env.BENCH_WRITE_DOCS ?? (scale === 1 ? '1' : '0');
  if (write === '1') {
    const path = new URL('../../docs/performance.md', import.meta.url);
    const done = writeFigures(path.pathname, figuresBlock(results, scale));
    console.log(done ? `\nfigures written to ${path.pathname}` : `\n${path.pathname} has no figures markers`);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
