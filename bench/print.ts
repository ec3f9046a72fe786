/**
 * The bench's output: the set-up, each run's figures beside its targets (issue 12), requests per
 * endpoint, stage times and their ratios, the fills ingest against COPY + merge, each stage beside its floor.
 */
import os from 'node:os';
import type { PipelineChildResult } from './pipeline-child.js';
import type { SandboxCounts } from './sandbox-child.js';
import type { FetchFloor } from './floors.js';

export interface RunFigures {
  run: PipelineChildResult;
  /** Requests the sandbox served during the run, by endpoint. */
  requests: Record<string, number>;
  /** CPU the Postgres server spent on the run (bench/server-cpu.ts); null when it cannot be read from here. */
  postgresCpuMs: number | null;
  /** CPU the sandbox's process spent serving the run (the APIs' side, on the same machine). */
  sandboxCpuMs?: number;
}

export interface RoundResult {
  /** What the sandbox held when it started, and how long it took to generate. */
  history: SandboxCounts;
  historyDays: number;
  generatedMs: number;
  /** When the first run started (epoch ms on the simulated calendar). */
  firstAt: number;
  afterFirst: SandboxCounts;
  /** Records added between the first and the nightly run. */
  newDay: SandboxCounts;
  first: RunFigures;
  nightly: RunFigures;
  copy: { rows: number; copyMs: number; mergeMs: number };
  /** What the machine allows with the same rows (bench/floors.ts). */
  floors: {
    firstFetch: FetchFloor;
    nightlyFetch: FetchFloor;
    copyOutMs: number;
    aggregate: { rows: number; ms: number };
  };
}

interface Target {
  name: string;
  /** Judged only at scale 1: absolute sizes, or (the ingest ratio) fixed costs that small sets cannot amortize. */
  scaleOne: boolean;
  figure(r: RoundResult): number;
  show(v: number): string;
  limit: string;
  met(v: number): boolean;
}

export const int = (n: number): string => Math.round(n).toLocaleString('en-US');
export const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
export const mib = (kb: number): string => `${int(kb / 1024)} MiB`;
export const total = (requests: Record<string, number>): number => Object.values(requests).reduce((a, b) => a + b, 0);
const rate = (rows: number, ms: number): number => (rows * 1000) / ms;

/** Pages the new day's records fill at the largest page each listing allows. */
export function newDayPages(d: SandboxCounts): number {
  return (
    Math.ceil(d.fills / 1000) +
    Math.ceil(d.partnerOrders / 50) +
    Math.ceil(d.exchangeOrders / 1000) +
    Math.ceil(d.trades / 1000)
  );
}
const PAGES_FORMULA =
  'ceil(fills/1000) + ceil(partner orders/50) + ceil(exchange orders/1000) + ceil(orders with fills, /trades, /1000)';

function fillsRatio(r: RoundResult): number {
  const ex = r.first.run.exchange!;
  return rate(ex.fills, ex.stageMs.fills!) / rate(r.copy.rows, r.copy.mergeMs);
}

export const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(2)} MB`;

const stageMs = (f: RunFigures, name: string): number => f.run.stages.find((s) => s.name === name)?.ms ?? NaN;

/** Each stage of a run beside its floor: what a bare client and the server do with the same rows. */
export function stageFloors(r: RoundResult): Array<{ stage: string; ms: number; floorMs: number; floor: string }> {
  const f = r.floors;
  const fetch = (x: FetchFloor) =>
    `fetch ${secs(x.ms)} (${int(x.requests)} listing requests, ${int(x.rows)} rows, JSON.parse only)`;
  return [
    {
      stage: '(a) exchange sync',
      ms: stageMs(r.first, 'sync.exchange'),
      floorMs: f.firstFetch.ms + r.copy.copyMs,
      floor: `${fetch(f.firstFetch)} + COPY in of the fills ${secs(r.copy.copyMs)}`,
    },
    {
      stage: '(a) reconcile',
      ms: stageMs(r.first, 'reconcile'),
      floorMs: f.aggregate.ms,
      floor: `one SQL aggregate: ${int(f.aggregate.rows)} orders beside the sum and VWAP of their fills`,
    },
    {
      stage: '(a) report',
      ms: stageMs(r.first, 'report'),
      floorMs: f.copyOutMs,
      floor: `COPY out of the ${int(r.copy.rows)} fills`,
    },
    {
      stage: '(b) exchange sync',
      ms: stageMs(r.nightly, 'sync.exchange'),
      floorMs: f.nightlyFetch.ms,
      floor: fetch(f.nightlyFetch),
    },
    ...wholeRunFloor('(a) whole run', r.first),
    ...wholeRunFloor('(b) whole run', r.nightly),
  ];
}

/**
 * A whole run beside what the machine's cores allow: the CPU its three processes spent (the run's, Postgres's and the
 * sandbox's, all on this machine) spread over every core without a moment idle. Below that no overlap of stages can
 * go; only less work can. None when a figure cannot be read here.
 */
export function wholeRunFloor(
  stage: string,
  f: RunFigures,
): Array<{ stage: string; ms: number; floorMs: number; floor: string }> {
  if (!f.run.cpu || f.postgresCpuMs === null || f.sandboxCpuMs === undefined) return [];
  const cores = os.cpus().length;
  const cpuMs = f.run.cpu.ms + f.postgresCpuMs + f.sandboxCpuMs;
  return [
    {
      stage,
      ms: f.run.wallMs,
      floorMs: cpuMs / cores,
      floor:
        `the CPU of its three processes on ${cores} cores: run ${secs(f.run.cpu.ms)} + Postgres ${secs(f.postgresCpuMs)}` +
        ` + sandbox ${secs(f.sandboxCpuMs)} = ${secs(cpuMs)}, / ${cores}`,
    },
  ];
}

const exchangeOverFloor = (r: RoundResult): number => {
  const x = stageFloors(r)[0]!;
  return x.ms / x.floorMs;
};

const TARGETS: Target[] = [
  {
    name: 'first run, wall',
    scaleOne: true,
    figure: (r) => r.first.run.wallMs,
    show: secs,
    limit: '<= 60 s',
    met: (v) => v <= 60_000,
  },
  {
    name: 'first run, mailed workbook',
    scaleOne: true,
    figure: (r) => r.first.run.report?.workbookBytes ?? Infinity,
    show: mb,
    limit: '<= 2 MB',
    met: (v) => v <= 2e6,
  },
  {
    name: 'first run, peak RSS',
    scaleOne: true,
    figure: (r) => r.first.run.maxRssKb,
    show: mib,
    limit: '<= 512 MiB',
    met: (v) => v <= 512 * 1024,
  },
  {
    name: 'first run, requests',
    scaleOne: true,
    figure: (r) => total(r.first.requests),
    show: int,
    limit: '<= 4,000',
    met: (v) => v <= 4000,
  },
  {
    name: 'nightly run, wall',
    scaleOne: true,
    figure: (r) => r.nightly.run.wallMs,
    show: secs,
    limit: '<= 5 s',
    met: (v) => v <= 5_000,
  },
  {
    name: 'nightly run, mailed workbook',
    scaleOne: true,
    figure: (r) => r.nightly.run.report?.workbookBytes ?? Infinity,
    show: mb,
    limit: '<= 2 MB',
    met: (v) => v <= 2e6,
  },
  {
    name: "nightly run, requests beyond the new day's pages",
    scaleOne: false,
    figure: (r) => total(r.nightly.requests) - newDayPages(r.newDay),
    show: int,
    limit: '<= 100',
    met: (v) => v <= 100,
  },
  {
    name: 'nightly run, process start to first stage',
    scaleOne: false,
    figure: (r) => r.nightly.run.startupMs ?? Infinity,
    show: secs,
    limit: '<= 0.5 s',
    met: (v) => v <= 500,
  },
  {
    name: 'first run, exchange sync / its floor',
    scaleOne: true,
    figure: exchangeOverFloor,
    show: (v) => `${v.toFixed(2)}x`,
    limit: '<= 2x',
    met: (v) => v <= 2,
  },
  {
    name: 'fills ingest / COPY + merge',
    scaleOne: true,
    figure: fillsRatio,
    show: (v) => `${v.toFixed(2)}x`,
    limit: '>= 0.50x',
    met: (v) => v >= 0.5,
  },
];

export function printHeader(o: { scale: number; rounds: number; database: string }): void {
  const db = new URL(o.database);
  const cpus = os.cpus();
  console.log(
    `ramp-recon bench, ${new Date().toISOString().slice(0, 10)}: scale ${o.scale}, ${o.rounds} round(s), Postgres at ${db.host}${db.pathname}`,
  );
  console.log(
    `machine: ${cpus.length} x ${cpus[0]?.model ?? 'unknown CPU'}, ${int(os.totalmem() / 2 ** 30)} GiB, node ${process.version}`,
  );
}

export function printRound(r: RoundResult, o: { round: number; rounds: number; scale: number }): void {
  const h = r.history;
  console.log(`\n=== round ${o.round} of ${o.rounds}`);
  console.log(
    `sandbox: ${r.historyDays} days + 2 h up to ${new Date(r.firstAt).toISOString()}: ${int(h.fills)} fills, ${int(h.exchangeOrders)} exchange orders ` +
      `(${int(h.trades)} with fills), ${int(h.partnerOrders)} partner orders, ${int(h.deposits)} deposits (partner orders paid to our wallets included), ` +
      `${int(h.withdrawals)} withdrawals; generated in ${secs(r.generatedMs)}`,
  );
  printRun('(a) first run', r.first, undefined);
  const d = r.newDay;
  console.log(
    `\nnew day: ${int(d.fills)} fills, ${int(d.exchangeOrders)} exchange orders (${int(d.trades)} with fills), ${int(d.partnerOrders)} partner orders, ` +
      `${int(d.deposits)} deposits, ${int(d.withdrawals)} withdrawals; they fill ${int(newDayPages(d))} pages = ${PAGES_FORMULA}`,
  );
  printRun('(b) nightly run', r.nightly, r.first, newDayPages(d));
  printRequests(r.first.requests, r.nightly.requests);
  const ex = r.first.run.exchange!;
  console.log('\n(c) fills ingest of (a) against the same rows copied back in, on the same server');
  console.log(
    `  raw COPY:              ${int(rate(r.copy.rows, r.copy.copyMs))} rows/s (${int(r.copy.rows)} rows, ${secs(r.copy.copyMs)})`,
  );
  console.log(`  COPY + merge:          ${int(rate(r.copy.rows, r.copy.mergeMs))} rows/s (${secs(r.copy.mergeMs)})`);
  console.log(
    `  fills stage of (a):    ${int(rate(ex.fills, ex.stageMs.fills!))} rows/s (${int(ex.fills)} rows, ${secs(ex.stageMs.fills!)})`,
  );
  console.log(`  fills stage / COPY + merge: ${fillsRatio(r).toFixed(2)}x`);
  console.log('\n(d) each stage beside its floor, what a bare client and the server do with the same rows');
  for (const x of stageFloors(r))
    console.log(
      `  ${x.stage.padEnd(20)}${secs(x.ms).padStart(8)}  floor ${secs(x.floorMs).padStart(7)}` +
        `  ${`${(x.ms / x.floorMs).toFixed(2)}x`.padStart(7)}  floor = ${x.floor}`,
    );
  printTargets([r], o.scale, `targets, round ${o.round}`);
}

function printRun(title: string, f: RunFigures, base: RunFigures | undefined, newDayPagesOf?: number): void {
  const run = f.run;
  const look = run.lookbackDays ? `, look-back ${run.lookbackDays} days` : '';
  console.log(`\n${title}: period ${run.period.from} .. ${run.period.to} (to exclusive)${look}`);
  const pages = newDayPagesOf
    ? `; the new day's records fill ${int(newDayPagesOf)} pages, ${int(total(f.requests) - newDayPagesOf)} requests beyond them`
    : '';
  const startup = run.startupMs === undefined ? '' : `, first stage ${secs(run.startupMs)} after the process started`;
  console.log(
    `  wall ${secs(run.wallMs)}, peak RSS ${mib(run.maxRssKb)}, ${int(total(f.requests))} requests${pages}${startup}`,
  );
  console.log(`  CPU ${cpuText(f)}`);
  if (run.report)
    console.log(
      `  mailed workbook ${mb(run.report.workbookBytes)}; detail ${mb(run.report.detailBytes)} of gzip CSV ` +
        `(${int(run.report.detailRows)} records)`,
    );
  const breaks = Object.entries(run.breaks).sort();
  console.log(
    `  open breaks after the run: ${breaks.length ? breaks.map(([code, n]) => `${code} ${n}`).join(', ') : 'none'}`,
  );
  const baseStages = new Map<string, number>(base?.run.stages.map((s) => [s.name, s.ms]) ?? []);
  const rows: Array<{ name: string; ms: number; was?: number; rss?: number }> = [];
  for (const s of run.stages) {
    if (s.status === 'skipped') continue;
    rows.push({ name: s.name, ms: s.ms, was: baseStages.get(s.name), rss: s.maxRssKb });
    if (s.name === 'sync.exchange' && run.exchange)
      for (const [sub, ms] of Object.entries(run.exchange.stageMs))
        rows.push({ name: `  ${sub}`, ms, was: base?.run.exchange?.stageMs[sub] });
  }
  console.log(
    `  ${'stage'.padEnd(22)}${'wall'.padStart(10)}${'share'.padStart(8)}${base ? '  vs (a)' : ''}${'peak RSS at its end'.padStart(22)}`,
  );
  for (const r of rows) {
    const vs = base ? (r.was ? `${(r.ms / r.was).toFixed(3)}x` : '-').padStart(8) : '';
    console.log(
      `  ${r.name.padEnd(22)}${secs(r.ms).padStart(10)}${`${((100 * r.ms) / run.wallMs).toFixed(1)}%`.padStart(8)}${vs}${(r.rss ? mib(r.rss) : '').padStart(22)}`.trimEnd(),
    );
  }
}

/**
 * The CPU the run cost: its own process (of which the garbage collector) and the Postgres server's. Steadier than wall
 * time on a shared 2-core machine, where the same build's wall time swings by tens of seconds between rounds.
 */
export function cpuText(f: RunFigures): string {
  const own = f.run.cpu
    ? `run process ${secs(f.run.cpu.ms)} (garbage collector ${secs(f.run.cpu.gcMs)})`
    : 'run process -';
  const server = f.postgresCpuMs === null ? 'Postgres not readable from here' : `Postgres ${secs(f.postgresCpuMs)}`;
  const sandbox = f.sandboxCpuMs === undefined ? '' : `, sandbox ${secs(f.sandboxCpuMs)}`;
  return `${own}, ${server}${sandbox}`;
}

/** Requests per endpoint of the first and the nightly run (or batch), as the sandbox saw them. */
export function printRequests(first: Record<string, number>, nightly: Record<string, number>): void {
  const names = [...new Set([...Object.keys(first), ...Object.keys(nightly)])];
  names.sort((x, y) => (first[y] ?? 0) - (first[x] ?? 0) || x.localeCompare(y));
  const width = Math.max(30, ...names.map((n) => n.length + 2));
  console.log(`\nrequests per endpoint, as the sandbox saw them`);
  console.log(`  ${'endpoint'.padEnd(width)}${'(a) first'.padStart(10)}${'(b) nightly'.padStart(12)}`);
  for (const n of names)
    console.log(`  ${n.padEnd(width)}${int(first[n] ?? 0).padStart(10)}${int(nightly[n] ?? 0).padStart(12)}`);
  console.log(`  ${'total'.padEnd(width)}${int(total(first)).padStart(10)}${int(total(nightly)).padStart(12)}`);
}

export function median(values: number[]): number {
  const s = values.slice().sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function printTargets(results: RoundResult[], scale: number, title: string): void {
  console.log(`\n${title}${results.length > 1 ? ' (median of the rounds)' : ''}`);
  for (const t of TARGETS) {
    const v = median(results.map(t.figure));
    const verdict = t.scaleOne && scale !== 1 ? `not judged at scale ${scale}` : t.met(v) ? 'met' : 'NOT MET';
    const each = results.length > 1 ? ` (rounds: ${results.map((r) => t.show(t.figure(r))).join(', ')})` : '';
    console.log(`  ${t.name.padEnd(50)}${t.show(v).padStart(12)}  target ${t.limit.padEnd(12)}${verdict}${each}`);
  }
}

export function printSummary(results: RoundResult[], scale: number): void {
  if (results.length > 1) printTargets(results, scale, 'targets, all rounds');
}
