/**
 * The bench's multi-account round (BENCH_ACCOUNTS=N, 2 to 50; see bench/main.ts). One sandbox child
 * serves N accounts, acct1 .. acctN, each with the one-account round's volumes at BENCH_SCALE (its
 * own seed: startSandboxAccounts gives account i the seed + i); the config lists them as
 * `accounts`, each with the one-account round's partner and exchange sections. (a) the first run
 * and (b) the nightly run one day later are each one batch (runBatch in a child process: every
 * account's run, one after another, then the group workbook), on the calendar of bench/main.ts.
 * The sandbox tells the requests apart by account (each request carries its account's key).
 * Figures are printed only: docs/performance.md is never written in this mode.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { runBatchChild, startSandboxChild } from './children.js';
import { int, mb, median, mib, newDayPages, printRequests, secs, total } from './print.js';
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
import type { BatchChildResult } from './pipeline-child.js';
import type { SandboxCounts } from './sandbox-child.js';
import { addDays, MS_PER_DAY, toDay } from '../src/util/dates.js';

const MAX_ACCOUNTS = 50;

/** BENCH_ACCOUNTS: unset or empty is 1 (the one-account round); otherwise an integer from 1 to 50. */
export function accountsFromEnv(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return 1;
  const n = Number(value);
  if (!/^\s*\d+\s*$/.test(value) || n < 1 || n > MAX_ACCOUNTS)
    throw new Error(`BENCH_ACCOUNTS must be an integer from 1 to ${MAX_ACCOUNTS} (got ${JSON.stringify(value)})`);
  return n;
}

/** Requests by account, then by endpoint. */
type AccountRequests = Record<string, Record<string, number>>;

/** Records of every account together, and of each. */
interface Volumes {
  total: SandboxCounts;
  accounts: Record<string, SandboxCounts>;
}

interface BatchFigures {
  batch: BatchChildResult;
  /** Requests the sandbox served during the batch. */
  requests: AccountRequests;
}

export interface AccountsRoundResult {
  names: string[];
  /** What the sandbox held when it started, and how long it took to generate. */
  history: Volumes;
  generatedMs: number;
  /** When the first batch started (epoch ms on the simulated calendar). */
  firstAt: number;
  /** Records added between the first and the nightly batch. */
  newDay: Volumes;
  first: BatchFigures;
  nightly: BatchFigures;
}

/** Every account's requests added up, by endpoint. */
function allRequests(requests: AccountRequests): Record<string, number> {
  const out: Record<string, number> = {};
  for (const of of Object.values(requests)) for (const [key, n] of Object.entries(of)) out[key] = (out[key] ?? 0) + n;
  return out;
}

const accountTotal = (f: BatchFigures, account: string): number => total(f.requests[account] ?? {});

/** Requests of the nightly batch beyond the pages of the new day's records, every account's. */
const beyondPages = (r: AccountsRoundResult): number =>
  r.names.reduce((n, a) => n + accountTotal(r.nightly, a) - newDayPages(r.newDay.accounts[a]!), 0);

function failures(b: BatchChildResult): string {
  return b.runs
    .filter((r) => r.status !== 'succeeded')
    .map((r) => `${r.account} ${r.status}${r.failedStage ? ` in ${r.failedStage}` : ''}: ${r.error}`)
    .join('; ');
}

/** One round: as benchRound of bench/main.ts, with N accounts and a batch for each run (no COPY comparison). */
async function accountsRound(
  admin: pg.Client,
  o: { names: string[]; scale: number; baseUrl: string },
): Promise<AccountsRoundResult> {
  const dayX = roundDayX();
  const firstAt = dayX + FIRE_AT_MS;
  const schema = await roundSchema(admin, o.baseUrl);
  const dir = mkdtempSync(join(tmpdir(), 'rr-bench-'));
  const t = performance.now();
  const sandbox = await startSandboxChild({ ...sandboxOptions(o.scale, firstAt), accounts: o.names });
  const generatedMs = performance.now() - t;
  try {
    const configPath = join(dir, 'config.json');
    writeFileSync(
      configPath,
      JSON.stringify({ accounts: o.names.map((name) => ({ name, ...accountSections(dayX) })) }),
    );
    const env = {
      ...sandbox.env,
      DATABASE_URL: schema.url,
      REPORTS_DIR: join(dir, 'reports'),
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    };
    // The batch's clock is the sandbox's, read just before it starts.
    const offsetNow = async (): Promise<number> => (await sandbox.currentCounts()).clock - Date.now();

    await sandbox.accountRequests();
    const firstPeriod = { from: addDays(toDay(new Date(dayX)), -DAYS), to: toDay(new Date(dayX)) };
    const first = await runBatchChild({
      mode: 'first',
      period: firstPeriod,
      env,
      configPath,
      clockOffsetMs: await offsetNow(),
    });
    const firstRequests = await sandbox.accountRequests();
    const afterFirst = await sandbox.currentCounts();
    const afterFirstOf = await sandbox.accountCounts();
    if (first.status !== 'succeeded') throw new Error(`first batch failed: ${failures(first)}`);

    // Every account's new day at the rates of one account at the scale.
    const afterDay = await sandbox.elapse(MS_PER_DAY, newDayRates(o.scale, afterFirst));
    const afterDayOf = await sandbox.accountCounts();
    await sandbox.accountRequests();
    const nightly = await runBatchChild({ mode: 'nightly', env, configPath, clockOffsetMs: await offsetNow() });
    const nightlyRequests = await sandbox.accountRequests();
    if (nightly.status !== 'succeeded') throw new Error(`nightly batch failed: ${failures(nightly)}`);

    return {
      names: o.names,
      history: { total: sandbox.counts, accounts: sandbox.accounts! },
      generatedMs,
      firstAt,
      newDay: {
        total: minus(afterDay, afterFirst),
        accounts: Object.fromEntries(o.names.map((a) => [a, minus(afterDayOf[a]!, afterFirstOf[a]!)])),
      },
      first: { batch: first, requests: firstRequests },
      nightly: { batch: nightly, requests: nightlyRequests },
    };
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
    await schema.drop();
  }
}

/** The multi-account bench: `rounds` rounds of N accounts at `scale` each, printed; medians last when more than one. */
export async function benchAccounts(o: {
  accounts: number;
  scale: number;
  rounds: number;
  baseUrl: string;
}): Promise<void> {
  const names = Array.from({ length: o.accounts }, (_, i) => `acct${i + 1}`);
  const ignored = process.env.BENCH_WRITE_DOCS === '1' ? ' (BENCH_WRITE_DOCS=1 ignored)' : '';
  console.log(
    `accounts: ${o.accounts} (${names[0]} .. ${names.at(-1)}), each at scale ${o.scale}: about scale ` +
      `${+(o.accounts * o.scale).toFixed(4)} of one account in all, one batch per run; ` +
      `figures only, docs/performance.md is not written in multi-account mode${ignored}`,
  );
  const admin = new pg.Client({ connectionString: o.baseUrl });
  await admin.connect();
  const results: AccountsRoundResult[] = [];
  try {
    for (let round = 1; round <= o.rounds; round++) {
      const result = await accountsRound(admin, { names, scale: o.scale, baseUrl: o.baseUrl });
      results.push(result);
      printAccountsRound(result, { round, rounds: o.rounds });
    }
  } finally {
    await admin.end();
  }
  if (results.length > 1) printMedians(results);
}

function printAccountsRound(r: AccountsRoundResult, o: { round: number; rounds: number }): void {
  console.log(`\n=== round ${o.round} of ${o.rounds}: ${r.names.length} accounts`);
  console.log(
    `sandbox: ${DAYS} days + 2 h up to ${new Date(r.firstAt).toISOString()}, generated in ${secs(r.generatedMs)} ` +
      '(deposits: partner orders paid to our wallets included)',
  );
  printVolumes(r.history, r.names);
  printBatch('(a) first batch', r.first, r.names);
  console.log(
    "\nnew day, before the nightly batch (pages: what an account's new records fill at the largest page of each listing)",
  );
  printVolumes(r.newDay, r.names, true);
  printBatch('(b) nightly batch', r.nightly, r.names, r.newDay);
  console.log(`\nrequests beyond the new day's pages, every account's: ${int(beyondPages(r))}`);
  printRequests(allRequests(r.first.requests), allRequests(r.nightly.requests));
}

const VOLUMES: Array<[keyof SandboxCounts, string]> = [
  ['fills', 'fills'],
  ['exchangeOrders', 'exchange orders'],
  ['trades', 'with fills'],
  ['partnerOrders', 'partner orders'],
  ['deposits', 'deposits'],
  ['withdrawals', 'withdrawals'],
];

function printVolumes(v: Volumes, names: string[], pages = false): void {
  const width = Math.max(10, ...names.map((n) => n.length + 2));
  // Each account's listings are paged on their own: the total's pages are the accounts' added up.
  const pagesOf = (name: string): number => newDayPages(v.accounts[name]!);
  const row = (name: string, c: SandboxCounts, n: number): string =>
    `  ${name.padEnd(width)}${VOLUMES.map(([k, title]) => int(c[k]).padStart(title.length + 2)).join('')}` +
    (pages ? int(n).padStart(8) : '');
  console.log(
    `  ${'account'.padEnd(width)}${VOLUMES.map(([, t]) => t.padStart(t.length + 2)).join('')}${pages ? '   pages' : ''}`,
  );
  for (const name of names) console.log(row(name, v.accounts[name]!, pagesOf(name)));
  console.log(
    row(
      'total',
      v.total,
      names.reduce((n, name) => n + pagesOf(name), 0),
    ),
  );
}

function printBatch(title: string, f: BatchFigures, names: string[], newDay?: Volumes): void {
  const b = f.batch;
  const look = b.lookbackDays ? `, look-back ${b.lookbackDays} days` : '';
  console.log(`\n${title}: period ${b.period.from} .. ${b.period.to} (to exclusive)${look}; batch ${b.status}`);
  const requests = total(allRequests(f.requests));
  console.log(`  wall ${secs(b.wallMs)}, peak RSS ${mib(b.maxRssKb)}, ${int(requests)} requests`);
  console.log(
    b.report
      ? `  group workbook ${mb(b.report.workbookBytes)}; verdict: ${b.report.verdict}`
      : `  group workbook not written: ${b.reportError ?? 'no report'}`,
  );
  // One column per stage that ran, in the order they ran.
  const stages = [
    ...new Set(b.runs.flatMap((run) => run.stages.filter((s) => s.status !== 'skipped').map((s) => s.name))),
  ];
  const width = Math.max(10, ...names.map((n) => n.length + 2));
  const idWidth = Math.max(8, ...b.runs.map((run) => (run.runId ?? '-').length + 2));
  console.log(
    `  ${'account'.padEnd(width)}${'run'.padEnd(idWidth)}${'status'.padEnd(11)}${'wall'.padStart(9)}` +
      `${stages.map((s) => s.padStart(Math.max(9, s.length + 2))).join('')}${'requests'.padStart(10)}` +
      `${newDay ? 'beyond pages'.padStart(14) : ''}  open breaks`,
  );
  for (const run of b.runs) {
    const ms = new Map(run.stages.map((s) => [s.name, s.ms]));
    const n = accountTotal(f, run.account);
    const beyond = newDay ? int(n - newDayPages(newDay.accounts[run.account]!)).padStart(14) : '';
    const breaks = Object.entries(run.breaks ?? {}).sort();
    const open =
      run.openBreaks === undefined
        ? '-'
        : `${int(run.openBreaks)}${breaks.length ? ` (${breaks.map(([code, k]) => `${code} ${k}`).join(', ')})` : ''}`;
    console.log(
      `  ${run.account.padEnd(width)}${(run.runId ?? '-').padEnd(idWidth)}${run.status.padEnd(11)}` +
        `${(run.wallMs === undefined ? '-' : secs(run.wallMs)).padStart(9)}` +
        `${stages.map((s) => (ms.has(s) ? secs(ms.get(s)!) : '-').padStart(Math.max(9, s.length + 2))).join('')}` +
        `${int(n).padStart(10)}${beyond}  ${open}`,
    );
    if (run.error) console.log(`    ${run.failedStage ? `failed in ${run.failedStage}: ` : ''}${run.error}`);
  }
}

interface Figure {
  name: string;
  figure(r: AccountsRoundResult): number;
  show(v: number): string;
}

function printMedians(results: AccountsRoundResult[]): void {
  const batch = (title: string, of: (r: AccountsRoundResult) => BatchFigures): Figure[] => [
    { name: `${title} batch, wall`, figure: (r) => of(r).batch.wallMs, show: secs },
    { name: `${title} batch, peak RSS`, figure: (r) => of(r).batch.maxRssKb, show: mib },
    { name: `${title} batch, requests`, figure: (r) => total(allRequests(of(r).requests)), show: int },
    {
      name: `${title} batch, group workbook`,
      figure: (r) => of(r).batch.report?.workbookBytes ?? Infinity,
      show: mb,
    },
    ...results[0]!.names.map((a): Figure => ({
      name: `${title} batch, ${a} run wall`,
      figure: (r) => of(r).batch.runs.find((run) => run.account === a)?.wallMs ?? Infinity,
      show: secs,
    })),
  ];
  const figures: Figure[] = [
    ...batch('first', (r) => r.first),
    ...batch('nightly', (r) => r.nightly),
    { name: "nightly batch, requests beyond the new day's pages", figure: beyondPages, show: int },
  ];
  console.log('\nfigures, all rounds (median of the rounds)');
  for (const f of figures) {
    const each = results.map((r) => f.show(f.figure(r))).join(', ');
    console.log(`  ${f.name.padEnd(50)}${f.show(median(results.map(f.figure))).padStart(12)}  (rounds: ${each})`);
  }
}
