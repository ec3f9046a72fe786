/**
 * The bench's two kinds of child process: the sandbox (bench/sandbox-child.ts, one per round,
 * asked over IPC) and one pipeline run (bench/pipeline-child.ts, one process per run).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { BatchChildResult, PipelineChildInput, PipelineChildResult } from './pipeline-child.js';
import type { Command, SandboxCounts } from './sandbox-child.js';
import type { ExpectedBreak, SandboxOptions } from '../sandbox/index.js';

export interface SandboxChild {
  env: Record<string, string>;
  /** Records when the sandbox was ready (every account's together). */
  counts: SandboxCounts;
  /** Each account's records when the sandbox was ready (a sandbox of several accounts). */
  accounts?: Record<string, SandboxCounts>;
  requests(): Promise<Record<string, number>>;
  /** Requests by account, then by endpoint; like requests(), the count starts again at zero. */
  accountRequests(): Promise<Record<string, Record<string, number>>>;
  currentCounts(): Promise<SandboxCounts>;
  accountCounts(): Promise<Record<string, SandboxCounts>>;
  /** The sandbox's clock (epoch ms). */
  clock(): Promise<number>;
  elapse(ms: number, rates: Extract<Command, { cmd: 'elapse' }>['rates']): Promise<SandboxCounts>;
  /** The Exchange API listings served since the last call, as path?query (the bare client's requests). */
  pageUrls(): Promise<string[]>;
  /** Each account's planted discrepancies, by account name. */
  expectedBreaks(): Promise<Record<string, ExpectedBreak[]>>;
  /** The CPU the sandbox's process has spent so far (ms). */
  cpuMs(): Promise<number>;
  close(): Promise<void>;
}

const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));

/**
 * Forks the sandbox with `options` on a clock `clockOffsetMs` from the real one; resolves when it
 * serves. With `accounts` (names), it serves those accounts, each with `options`.
 */
export async function startSandboxChild(
  options: Partial<SandboxOptions> & { clockOffsetMs: number; accounts?: string[] },
): Promise<SandboxChild> {
  const child = fork(here('./sandbox-child.js'), [JSON.stringify(options)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  type Ready = Pick<SandboxChild, 'env' | 'counts' | 'accounts'>;
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Ready));
    child.once('exit', (code) => reject(new Error(`sandbox child exited with ${code}`)));
  });
  child.on('message', (m: { id?: number; result?: unknown }) => {
    const p = m.id === undefined ? undefined : pending.get(m.id);
    if (!p) return;
    pending.delete(m.id!);
    p.resolve(m.result);
  });
  child.on('exit', (code) => {
    for (const p of pending.values()) p.reject(new Error(`sandbox child exited with ${code}`));
    pending.clear();
  });
  const call = <T>(command: Command): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ ...command, id });
    });
  return {
    env: ready.env,
    counts: ready.counts,
    ...(ready.accounts ? { accounts: ready.accounts } : {}),
    requests: () => call({ cmd: 'requests' }),
    accountRequests: () => call({ cmd: 'accountRequests' }),
    currentCounts: () => call({ cmd: 'counts' }),
    accountCounts: () => call({ cmd: 'accountCounts' }),
    clock: () => call({ cmd: 'clock' }),
    elapse: (ms, rates) => call({ cmd: 'elapse', ms, rates }),
    pageUrls: () => call({ cmd: 'pageUrls' }),
    expectedBreaks: () => call({ cmd: 'expectedBreaks' }),
    cpuMs: () => call({ cmd: 'cpu' }),
    close: () => closeChild(child),
  };
}

/** One pipeline run in a child process; its log lines (stderr, not a terminal: no progress bar) pass through. */
export function runPipelineChild(input: PipelineChildInput): Promise<PipelineChildResult> {
  return forkPipelineChild(input);
}

/** One batch (every account of the config, then the group workbook) in a child process, as runPipelineChild. */
export function runBatchChild(input: Omit<PipelineChildInput, 'batch'>): Promise<BatchChildResult> {
  return forkPipelineChild({ ...input, batch: true });
}

async function forkPipelineChild<T>(input: PipelineChildInput): Promise<T> {
  const child = fork(here('./pipeline-child.js'), [JSON.stringify(input)], {
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  child.stderr!.pipe(process.stderr, { end: false });
  return new Promise<T>((resolve, reject) => {
    let result: T | undefined;
    child.once('message', (m) => (result = m as T));
    child.once('exit', (code) =>
      result ? resolve(result) : reject(new Error(`pipeline child exited with ${code} before reporting`)),
    );
  });
}

function closeChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || !child.connected) return Promise.resolve();
  return new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.disconnect();
  });
}
