/**
 * `npm run build && npm run bench` (issue 12, point 7): the whole run at scale, on Postgres, with
 * the sandbox serving from a child process. Each round, in a fresh schema of BENCH_DATABASE_URL
 * (default the local test server, dropped after):
 *  (a) a first `run` over 10 days of history (1,000,000 fills, 200,000 exchange orders, 100,000
 *      partner orders, 3,000 deposits, 1,000 withdrawals), its period covering the history's days;
 *  (b) the nightly run the scheduler fires one day later (yesterday, schedule.lookbackDays), after
 *      a new day of activity (about 100,000 fills, the largest accounts' day; BENCH_NIGHTLY_FILLS sets it);
 *  (c) COPY and COPY + merge of the fills (a) stored, against the fills stage of (a);
 *  (d) each stage beside its floor (bench/floors.ts): the exchange sync beside a bare client replaying its listing
 *      requests plus COPY of its fills, the reconcile beside one SQL aggregate, the report beside COPY out.
 * Each run is a child process of its own (its peak RSS is the run's), the sandbox counts the
 * requests per endpoint. BENCH_SCALE (default 1) scales every volume; develop at 0.02.
 * BENCH_ROUNDS (default 1: at scale 1 a round takes minutes, mostly the first run) repeats the
 * whole round; with more than one, the medians are printed last. BENCH_KEEP_SCHEMA=1 keeps each
 * round's schema (printed) instead of dropping it, to inspect what a run stored. At scale 1 (or with
 * BENCH_WRITE_DOCS=1) the figures are written into docs/performance.md (bench/figures-doc.ts).
 *
 * BENCH_ACCOUNTS=N (an integer from 1 to 50; default 1, the round above) runs the multi-account
 * round of bench/accounts.ts instead: one sandbox serving N accounts, each with the volumes above
 * at BENCH_SCALE (so BENCH_ACCOUNTS=4 BENCH_SCALE=0.25 is about one account at scale 1 in all), and
 * (a), (b) as one batch each (`run` of a config with N `accounts`: every account's run, then the
 * group workbook); no (c). That mode prints its figures only: it never writes docs/performance.md,
 * whatever BENCH_WRITE_DOCS says.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { runPipelineChild, startSandboxChild } from './children.js';
import { copyInto, copyMerge, copyOut } from './copy-fills.js';
import { serverCpu } from './server-cpu.js';
import { aggregateFloor, bareClient } from './floors.js';
import { printHeader, printRound, printSummary, type RoundResult } from './print.js';
import { figuresBlock, writeFigures } from './figures-doc.js';
import { accountsFromEnv, benchAccounts } from './accounts.js';
import {
  accountSections,
  DAYS,
  FIRE_AT_MS,
  minus,
  newDayRates,
  roundDayX,
  roundSchema,
  sandboxOptions,
} from './scenario.js';
import { addDays, MS_PER_DAY, toDay } from '../src/util/dates.js';

const baseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const scale = Number(process.env.BENCH_SCALE ?? 1);
const rounds = Math.max(1, Math.floor(Number(process.env.BENCH_ROUNDS ?? 1)));

async function timeIt(fn: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/**
 * One round. The simulated calendar: the first run starts at 02:00 UTC of day X (X two days
 * before today, so both runs lie in the past), over days X-10 .. X-1 and the first two hours of
 * X; the sandbox then lives one day (the clock of its process jumps 24 h; a live sandbox spreads
 * the day's activity over the whole day), and the nightly run starts at 02:00 of X+1 for day X.
 * Every child's clock is offset to that calendar, so the times the runs stamp (balance snapshots)
 * and the sandbox's agree.
 */
async function benchRound(admin: pg.Client): Promise<RoundResult> {
  const dayX = roundDayX();
  const firstAt = dayX + FIRE_AT_MS;
  const schema = await roundSchema(admin, baseUrl);
  const url = schema.url;
  const dir = mkdtempSync(join(tmpdir(), 'rr-bench-'));
  const t = performance.now();
  const sandbox = await startSandboxChild(sandboxOptions(scale, firstAt));
  const generatedMs = performance.now() - t;
  try {
    const configPath = join(dir, 'config.json');
    const config = accountSections(dayX);
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
    await sandbox.pageUrls();
    const server = await serverCpu(admin);
    const firstPostgres = await server?.begin();
    const firstSandbox = await sandbox.cpuMs();
    const firstPeriod = { from: addDays(toDay(new Date(dayX)), -DAYS), to: toDay(new Date(dayX)) };
    const first = await runPipelineChild({
      mode: 'first',
      period: firstPeriod,
      env,
      configPath,
      clockOffsetMs: await offsetNow(),
    });
    const firstSandboxMs = (await sandbox.cpuMs()) - firstSandbox;
    const firstPostgresMs = (await firstPostgres?.end()) ?? null;
    const firstRequests = await sandbox.requests();
    const afterFirst = await sandbox.currentCounts();
    if (first.status !== 'succeeded') throw new Error(`first run failed in ${first.failedStage}: ${first.error}`);
    const replay = (urls: string[]) => bareClient(sandbox.env.EXCHANGE_API_URL!, sandbox.env.EXCHANGE_API_TOKEN!, urls);
    const firstFetch = await replay(await sandbox.pageUrls());

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      let lines: string[] = [];
      const copyOutMs = await timeIt(async () => {
        lines = await copyOut(client);
      });
      const aggregate = await aggregateFloor(client);

      const rates = newDayRates(scale, afterFirst);
      const newDay = minus(await sandbox.elapse(MS_PER_DAY, rates), afterFirst);
      await sandbox.requests();
      await sandbox.pageUrls();
      const nightlyPostgres = await server?.begin();
      const nightlySandbox = await sandbox.cpuMs();
      const nightly = await runPipelineChild({ mode: 'nightly', env, configPath, clockOffsetMs: await offsetNow() });
      const nightlySandboxMs = (await sandbox.cpuMs()) - nightlySandbox;
      const nightlyPostgresMs = (await nightlyPostgres?.end()) ?? null;
      const nightlyRequests = await sandbox.requests();
      if (nightly.status !== 'succeeded')
        throw new Error(`nightly run failed in ${nightly.failedStage}: ${nightly.error}`);
      const nightlyFetch = await replay(await sandbox.pageUrls());
      await sandbox.close();

      // Into an empty table like exchange_fill (its indexes; its triggers fire on updates only), which is dropped
      // after: the fills both runs stored stay as they are for BENCH_KEEP_SCHEMA.
      await client.query('create table bench_fill_copy (like exchange_fill including all)');
      const copyMs = await timeIt(() => copyInto(client, 'bench_fill_copy', lines));
      await client.query('truncate bench_fill_copy');
      const mergeMs = await timeIt(() => copyMerge(client, lines, 'bench_fill_copy'));
      await client.query('drop table bench_fill_copy');

      return {
        history: sandbox.counts,
        historyDays: DAYS,
        generatedMs,
        firstAt,
        afterFirst,
        newDay,
        first: { run: first, requests: firstRequests, postgresCpuMs: firstPostgresMs, sandboxCpuMs: firstSandboxMs },
        nightly: {
          run: nightly,
          requests: nightlyRequests,
          postgresCpuMs: nightlyPostgresMs,
          sandboxCpuMs: nightlySandboxMs,
        },
        copy: { rows: lines.length, copyMs, mergeMs },
        floors: { firstFetch, nightlyFetch, copyOutMs, aggregate },
      };
    } finally {
      await client.end();
    }
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
    // BENCH_KEEP_SCHEMA=1 keeps the round's database for inspection (its name is printed).
    await schema.drop();
  }
}

async function main(): Promise<void> {
  if (!(scale > 0)) throw new Error(`BENCH_SCALE must be a positive number (got ${process.env.BENCH_SCALE})`);
  const accounts = accountsFromEnv(process.env.BENCH_ACCOUNTS);
  printHeader({ scale, rounds, database: baseUrl });
  if (accounts > 1) return benchAccounts({ accounts, scale, rounds, baseUrl });
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
