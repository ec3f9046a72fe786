/**
 * `npm run build && npm run bench:workers` (issue 27): one batch of BENCH_WORKER_ACCOUNTS accounts (default 6) on the
 * sandbox with its requests paced as the real services are met in production, "a few requests per second"
 * (BENCH_RATE, default 5/s for private partner calls and the exchange; public partner calls at the published 10/s),
 * worked by 1 worker process and then by 3 (BENCH_WORKERS, default "1,3"),
 * each time on a fresh Postgres schema: the batch's wall time from `enqueue --wait` to its group report, the requests,
 * and the speed-up. Paced accounts wait on requests, not on the CPU, so workers on one machine already add up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startSandboxAccounts } from '../sandbox/index.js';
import { addDays, toDay } from '../src/util/dates.js';

const baseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const accounts = Number(process.env.BENCH_WORKER_ACCOUNTS ?? 6);
const fleets = (process.env.BENCH_WORKERS ?? '1,3').split(',').map(Number);
const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const DAYS = 5;
const rate = Number(process.env.BENCH_RATE ?? 5);

function check(): void {
  if (!Number.isInteger(accounts) || accounts < 1 || accounts > 50)
    throw new Error(
      `BENCH_WORKER_ACCOUNTS must be a whole number from 1 to 50 (got ${process.env.BENCH_WORKER_ACCOUNTS})`,
    );
  if (!(rate > 0 && rate <= 1000))
    throw new Error(
      `BENCH_RATE must be a number of requests per second from 0 to 1000 (got ${process.env.BENCH_RATE})`,
    );
  if (fleets.some((n) => !Number.isInteger(n) || n < 1 || n > 16))
    throw new Error(
      `BENCH_WORKERS must list whole numbers from 1 to 16, e.g. "1,3" (got ${process.env.BENCH_WORKERS})`,
    );
}

function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

function cli(
  args: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; done: Promise<{ code: number | null; out: string; err: string }> } {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return { child, done: new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err }))) };
}

async function main(): Promise<void> {
  check();
  const names = Array.from({ length: accounts }, (_, i) => `acct${i + 1}`);
  console.log(
    `ramp-recon workers bench, ${new Date().toISOString().slice(0, 10)}: ${accounts} accounts, ${DAYS} days each, requests paced at ${rate}/s (partner private, exchange; partner public 10/s); workers: ${fleets.join(' vs ')}`,
  );
  const sandbox = await startSandboxAccounts({
    seed: 11,
    days: DAYS,
    ordersPerDay: 250,
    exchangeOrdersPerDay: 200,
    fillsPerOrder: 3,
    live: false,
    faults: 'none',
    accounts: names.map((name) => ({ name })),
  });
  let requests = 0;
  for (const name of names) sandbox.accounts[name]!.onRequest(() => (requests += 1));
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  const dir = mkdtempSync(join(tmpdir(), 'rr-bench-workers-'));
  const results: Array<{ workers: number; ms: number; requests: number; status: string }> = [];
  try {
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        accounts: names.map((name) => ({
          name,
          partner: { feeRate: sandbox.accounts[name]!.partnerFeeRate, privateRateLimitPerSecond: rate },
          exchange: { rateLimitPerSecond: rate },
        })),
      }),
    );
    const today = toDay(new Date());
    for (const n of fleets) {
      const schema = `bench_w_${randomBytes(4).toString('hex')}`;
      await admin.query(`create schema ${schema}`);
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ...sandbox.env,
        DATABASE_URL: withSearchPath(baseUrl, schema),
        RAMP_RECON_CONFIG: config,
        REPORTS_DIR: join(dir, `reports-${n}`),
        LOG_LEVEL: 'warn',
      };
      const workers: ReturnType<typeof cli>[] = [];
      try {
        const migrated = await cli(['migrate'], env).done;
        if (migrated.code !== 0) throw new Error(`migrate failed: ${migrated.err}`);
        for (let i = 0; i < n; i++) workers.push(cli(['worker'], env));
        requests = 0;
        const t = performance.now();
        const batch = await cli(['enqueue', '--from', addDays(today, -DAYS), '--to', today, '--wait', '--json'], env)
          .done;
        const ms = performance.now() - t;
        if (batch.code !== 0) throw new Error(`enqueue --wait exited ${batch.code}: ${batch.err.slice(-2000)}`);
        const parsed = JSON.parse(batch.out) as { status: string; accounts: Array<{ worker: string }> };
        const used = new Set(parsed.accounts.map((a) => a.worker)).size;
        results.push({ workers: n, ms, requests, status: parsed.status });
        console.log(
          `${String(n).padStart(2)} worker(s): batch ${parsed.status} in ${(ms / 1000).toFixed(1)} s, ${requests} requests, accounts spread over ${used} worker(s)`,
        );
      } finally {
        for (const w of workers) w.child.kill('SIGTERM');
        await Promise.all(workers.map((w) => w.done));
        await admin.query(`drop schema ${schema} cascade`);
        await admin.query(`drop schema if exists ${schema}_queue cascade`);
      }
    }
  } finally {
    await admin.end();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const one = results.find((r) => r.workers === fleets[0]);
  for (const r of results.slice(1))
    if (one)
      console.log(
        `speed-up ${fleets[0]} -> ${r.workers} workers: ${(one.ms / r.ms).toFixed(2)}x (target >= 2.5x for 1 -> 3)`,
      );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
