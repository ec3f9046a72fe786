/**
 * The bench's two kinds of child process: the sandbox (bench/sandbox-child.ts, one per round,
 * asked over IPC) and one pipeline run (bench/pipeline-child.ts, one process per run).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { PipelineChildInput, PipelineChildResult } from './pipeline-child.js';
import type { Command, SandboxCounts } from './sandbox-child.js';
import type { SandboxOptions } from '../sandbox/index.js';

export interface SandboxChild {
  env: Record<string, string>;
  /** Records when the sandbox was ready. */
  counts: SandboxCounts;
  requests(): Promise<Record<string, number>>;
  currentCounts(): Promise<SandboxCounts>;
  elapse(ms: number, rates: Extract<Command, { cmd: 'elapse' }>['rates']): Promise<SandboxCounts>;
  close(): Promise<void>;
}

const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));

/** Forks the sandbox with `options` on a clock `clockOffsetMs` from the real one; resolves when it serves. */
export async function startSandboxChild(
  options: Partial<SandboxOptions> & { clockOffsetMs: number },
): Promise<SandboxChild> {
  const child = fork(here('./sandbox-child.js'), [JSON.stringify(options)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  const ready = await new Promise<{ env: Record<string, string>; counts: SandboxCounts }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { env: Record<string, string>; counts: SandboxCounts }));
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
    requests: () => call({ cmd: 'requests' }),
    currentCounts: () => call({ cmd: 'counts' }),
    elapse: (ms, rates) => call({ cmd: 'elapse', ms, rates }),
    close: () => closeChild(child),
  };
}

/** One pipeline run in a child process; its log lines (stderr, not a terminal: no progress bar) pass through. */
export async function runPipelineChild(input: PipelineChildInput): Promise<PipelineChildResult> {
  const child = fork(here('./pipeline-child.js'), [JSON.stringify(input)], {
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  child.stderr!.pipe(process.stderr, { end: false });
  return new Promise<PipelineChildResult>((resolve, reject) => {
    let result: PipelineChildResult | undefined;
    child.once('message', (m) => (result = m as PipelineChildResult));
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
