/**
 * `npm run build && npm run bench:fleet` (issue 47): the sandbox serving BENCH_FLEET_ACCOUNTS accounts (default 100),
 * each with about BENCH_FLEET_FILLS fills a day (10,000) and BENCH_FLEET_DAYS days of history (4) and one of every
 * discrepancy planted, worked by BENCH_FLEET_WORKERS `ramp-recon worker` processes (8) on one Postgres, every account
 * paced at BENCH_RATE requests per second on each API (4). A history batch (`enqueue --from --to`), then a day later
 * on the sandbox's calendar the nightly batch (`enqueue`: yesterday). For each: wall time, the sum of the accounts'
 * own run times, the speed-up, requests, Postgres CPU, a worker's peak memory, and whether every account's open
 * breaks are its planted ones. At the defaults (or with BENCH_WRITE_DOCS=1; =0 never) the figures are written into
 * docs/performance.md between the `<!-- fleet figures -->` markers. A fresh schema per run, dropped after with the
 * queue's, whatever ends the run; the workers never outlive it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startSandboxChild, type SandboxChild } from './children.js';
import { writeFigures } from './figures-doc.js';
import { runFleetBatch, type FleetBatch, type FleetContext } from './fleet-batch.js';
import { FLEET_MARKERS, fleetBlock, nightlyVerdict, printBatch, printHeader } from './fleet-print.js';
import { killAll, startCli, tail } from './fleet-processes.js';
import {
  dailyRates,
  fleetConfig,
  fleetSandboxOptions,
  isDefault,
  knobsFromEnv,
  type FleetKnobs,
} from './fleet-setup.js';
import { FIRE_AT_MS, roundDayX, withSearchPath } from './scenario.js';
import { serverCpu } from './server-cpu.js';
import { addDays, MS_PER_DAY, toDay } from '../src/util/dates.js';

const baseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The first SIGINT or SIGTERM kills the CLI processes and lets the run unwind (schemas dropped); a second exits. */
let interrupted: string | null = null;
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = signal;
    console.error(`\n${signal}: stopping the workers, then dropping the schemas (again to exit at once)`);
    killAll();
  });
function check(): void {
  if (interrupted) throw new Error(`interrupted by ${interrupted}`);
}

/** A fresh schema for our tables; drop() drops it and the job queue's beside it (BENCH_KEEP_SCHEMA=1 keeps both). */
async function freshSchema(admin: pg.Client): Promise<{ name: string; drop(): Promise<void> }> {
  const name = `bench_fleet_${randomBytes(4).toString('hex')}`;
  await admin.query(`create schema ${name}`);
  return {
    name,
    drop: async () => {
      if (process.env.BENCH_KEEP_SCHEMA === '1') return void console.log(`kept schemas ${name} and ${name}_queue`);
      await admin.query(`drop schema if exists ${name} cascade`);
      await admin.query(`drop schema if exists ${name}_queue cascade`);
    },
  };
}

async function migrate(env: NodeJS.ProcessEnv): Promise<void> {
  const r = await startCli(['migrate'], env, 0).done;
  if (r.code !== 0) throw new Error(`migrate exited ${r.code ?? r.signal}:\n${tail(r.err || r.out)}`);
}

/** The two batches on a migrated schema: the history up to day X, then day X as the nightly `enqueue` plans it. */
async function batches(ctx: FleetContext, k: FleetKnobs, dayX: number): Promise<FleetBatch[]> {
  const day = toDay(new Date(dayX));
  const history = await runFleetBatch(ctx, {
    title: 'history',
    enqueueArgs: ['--from', addDays(day, -k.days), '--to', day],
    rollChecked: false,
  });
  printBatch(history, k.accounts);
  ctx.check();
  // A day passes on the sandbox's calendar, every account trading at its rates: the new day the nightly batch reads.
  await ctx.sandbox.elapse(MS_PER_DAY, dailyRates(k.fills));
  const nightly = await runFleetBatch(ctx, { title: 'nightly', enqueueArgs: [], rollChecked: true });
  printBatch(nightly, k.accounts);
  return [history, nightly];
}

async function withFleet(k: FleetKnobs, sandbox: SandboxChild, dayX: number): Promise<FleetBatch[]> {
  const names = Array.from({ length: k.accounts }, (_, i) => `acct${i + 1}`);
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  const dir = mkdtempSync(join(tmpdir(), 'rr-bench-fleet-'));
  let schema: Awaited<ReturnType<typeof freshSchema>> | undefined;
  try {
    schema = await freshSchema(admin);
    console.log(`database schemas ${schema.name} and ${schema.name}_queue: dropped at the end (by hand if killed -9)`);
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify(fleetConfig(names, k, dayX)));
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...sandbox.env,
      DATABASE_URL: withSearchPath(baseUrl, schema.name),
      RAMP_RECON_CONFIG: config,
      REPORTS_DIR: join(dir, 'reports'),
      LOG_LEVEL: 'warn',
    };
    await migrate(env);
    const cpu = await serverCpu(admin);
    return await batches({ sandbox, admin, cpu, schema: schema.name, env, workers: k.workers, names, check }, k, dayX);
  } finally {
    await schema?.drop();
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const k = knobsFromEnv(process.env);
  const write = process.env.BENCH_WRITE_DOCS ?? (isDefault(k) ? '1' : '0');
  if (write !== '0' && write !== '1') throw new Error(`BENCH_WRITE_DOCS must be 0 or 1 (got ${JSON.stringify(write)})`);
  const dayX = roundDayX();
  const t = performance.now();
  const names = Array.from({ length: k.accounts }, (_, i) => `acct${i + 1}`);
  const sandbox = await startSandboxChild({ ...fleetSandboxOptions(k, dayX + FIRE_AT_MS), accounts: names });
  let results: FleetBatch[];
  try {
    printHeader(k, performance.now() - t, sandbox.counts.fills);
    check();
    results = await withFleet(k, sandbox, dayX);
  } finally {
    await sandbox.close();
  }
  console.log(`\n${nightlyVerdict(k, results[1]!)}`);
  if (write === '1') {
    const path = new URL('../../docs/performance.md', import.meta.url).pathname;
    const done = writeFigures(path, fleetBlock(k, results), FLEET_MARKERS);
    console.log(done ? `figures written to ${path}` : `${path} has no fleet figures markers`);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
