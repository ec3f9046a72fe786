/**
 * One batch of bench:fleet: W workers on the sandbox's clock, `enqueue --wait --json`, and what the batch cost: its
 * wall time, the accounts' own run times (the run rows), the requests the sandbox served, the Postgres server's CPU, a
 * worker's peak memory, and each account's open breaks beside the discrepancies its sandbox planted.
 */
import type pg from 'pg';
import type { SandboxChild } from './children.js';
import { cpuMs, peakMemoryKb, startCli, startWorkers, stopAll, tail } from './fleet-processes.js';
import type { ServerCpu } from './server-cpu.js';
import { total } from './print.js';

export interface FleetContext {
  sandbox: SandboxChild;
  admin: pg.Client;
  cpu: ServerCpu | null;
  /** Our tables' schema (the queue's is `<schema>_queue`). */
  schema: string;
  env: NodeJS.ProcessEnv;
  workers: number;
  names: readonly string[];
  /** Throws when the bench was interrupted: checked before each step. */
  check(): void;
}

export interface AccountRun {
  account: string;
  status: string;
  ms: number;
}

export interface TruthDiff {
  account: string;
  missing: string[];
  extra: string[];
}

export interface FleetBatch {
  title: string;
  batchId: string;
  status: string;
  period: { from: string; to: string };
  wallMs: number;
  /** Each run of the batch (an account retried has more than one). */
  runs: AccountRun[];
  /** Accounts whose batch row did not succeed, with why. */
  failures: string[];
  requests: Record<string, number>;
  /** Every account's requests by endpoint. */
  endpoints: Record<string, number>;
  postgresCpuMs: number | null;
  /** The largest peak resident memory of a worker (KiB), null where /proc cannot tell. */
  workerPeakKb: number | null;
  /** The CPU the workers spent, start-up included (ms), null where /proc cannot tell. */
  workersCpuMs: number | null;
  workersUsed: number;
  /** Accounts whose open breaks are exactly their planted ones, and those that differ. */
  truth: { matched: number; differ: TruthDiff[] };
}

interface EnqueueJson {
  batchId: string;
  status: string;
  period: { from: string; to: string };
  accounts: Array<{ account: string; status: string; worker: string | null; error: string | null }>;
}

/**
 * Runs one batch: `enqueueArgs` plan it (none: yesterday, as the nightly `enqueue`); `rollChecked` says whether the
 * balance roll-forward can be judged yet (it needs a second balance snapshot, so not on an account's first run).
 */
export async function runFleetBatch(
  ctx: FleetContext,
  o: { title: string; enqueueArgs: string[]; rollChecked: boolean },
): Promise<FleetBatch> {
  ctx.check();
  // Workers, `enqueue` and the sandbox read one calendar: the sandbox's clock now (read half an IPC round trip ago).
  const asked = Date.now();
  const clock = await ctx.sandbox.clock();
  const offset = clock - (asked + Date.now()) / 2;
  const measure = await ctx.cpu?.begin();
  const workers = await startWorkers(ctx.workers, ctx.env, offset);
  let batch: { json: EnqueueJson; wallMs: number; peaks: Array<number | null>; cpu: Array<number | null> };
  let requests: Record<string, Record<string, number>>;
  try {
    ctx.check();
    await ctx.sandbox.accountRequests(); // the count starts at zero
    const t = performance.now();
    const enqueue = await startCli(['enqueue', ...o.enqueueArgs, '--wait', '--json'], ctx.env, offset).done;
    const wallMs = performance.now() - t;
    // Read before they stop: a process's high-water mark is gone with it.
    const peaks = workers.map((w) => peakMemoryKb(w.child.pid));
    const cpu = workers.map((w) => cpuMs(w.child.pid));
    requests = await ctx.sandbox.accountRequests();
    batch = { json: parseEnqueue(enqueue, o.title), wallMs, peaks, cpu };
  } finally {
    await stopAll(workers);
  }
  const postgresCpuMs = measure ? await measure.end() : null;
  const j = batch.json;
  const known = batch.peaks.filter((p): p is number => p !== null);
  return {
    title: o.title,
    batchId: j.batchId,
    status: j.status,
    period: j.period,
    wallMs: batch.wallMs,
    runs: await batchRuns(ctx, j.batchId),
    failures: j.accounts
      .filter((a) => a.status !== 'succeeded')
      .map((a) => `${a.account} ${a.status}${a.error ? `: ${a.error}` : ''}`),
    requests: Object.fromEntries(ctx.names.map((n) => [n, total(requests[n] ?? {})])),
    endpoints: byEndpoint(requests),
    postgresCpuMs,
    workerPeakKb: known.length ? Math.max(...known) : null,
    workersCpuMs: batch.cpu.every((c) => c !== null) ? batch.cpu.reduce<number>((n, c) => n + c!, 0) : null,
    workersUsed: new Set(j.accounts.map((a) => a.worker).filter(Boolean)).size,
    truth: await plantedTruth(ctx, o.rollChecked),
  };
}

/** The batch as `enqueue --json` printed it; it exits 1 when an account failed, and prints the batch all the same. */
function parseEnqueue(r: { code: number | null; signal: string | null; out: string; err: string }, title: string) {
  try {
    if (r.code === 0 || r.code === 1) return JSON.parse(r.out) as EnqueueJson;
  } catch {
    // not JSON: said below
  }
  throw new Error(`${title} batch: enqueue --wait exited ${r.code ?? r.signal}:\n${tail(r.err || r.out)}`);
}

async function batchRuns(ctx: FleetContext, batchId: string): Promise<AccountRun[]> {
  const { rows } = await ctx.admin.query<{ account: string; status: string; ms: number }>(
    `select account, status, extract(epoch from finished_at - started_at) * 1000 as ms
     from ${ctx.schema}.run where batch_id = $1 and finished_at is not null order by account, started_at`,
    [batchId],
  );
  return rows.map((r) => ({ account: r.account, status: r.status, ms: Number(r.ms) }));
}

/**
 * Each account's open breaks beside its planted discrepancies: those a run can judge here (P_WEBHOOK_GAP needs the
 * webhook receiver, which the bench does not run) and, before a second balance snapshot, not the roll-forward.
 */
async function plantedTruth(ctx: FleetContext, rollChecked: boolean): Promise<FleetBatch['truth']> {
  const planted = await ctx.sandbox.expectedBreaks();
  const { rows } = await ctx.admin.query<{ account: string; code: string; key: string }>(
    `select account, code, key from ${ctx.schema}.break where status = 'open'`,
  );
  const open = new Map<string, Set<string>>();
  for (const r of rows)
    (open.get(r.account) ?? open.set(r.account, new Set()).get(r.account)!).add(`${r.code} ${r.key}`);
  const differ: TruthDiff[] = [];
  for (const account of ctx.names) {
    const want = new Set(
      (planted[account] ?? [])
        .filter((b) => !b.requires && (rollChecked || b.code !== 'E_BALANCE_ROLL'))
        .map((b) => `${b.code} ${b.key}`),
    );
    const got = open.get(account) ?? new Set<string>();
    const missing = [...want].filter((b) => !got.has(b)).sort();
    const extra = [...got].filter((b) => !want.has(b)).sort();
    if (missing.length || extra.length) differ.push({ account, missing, extra });
  }
  return { matched: ctx.names.length - differ.length, differ };
}

function byEndpoint(requests: Record<string, Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const of of Object.values(requests)) for (const [key, n] of Object.entries(of)) out[key] = (out[key] ?? 0) + n;
  return out;
}
