/** SIGTERM/SIGINT handling: a graceful first signal, a forceful second. */
import type { Logger } from '../log/logger.js';
import { startedByNpm } from '../config/process.js';

/** The signals that ask the process to stop (a terminal's Ctrl-C, `docker stop`, systemd, Kubernetes). */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** The slice of `process` the handlers use, so tests can drive them without signalling themselves. */
export interface SignalTarget {
  on(event: StopSignal, listener: (signal: StopSignal) => void): unknown;
  removeListener(event: StopSignal, listener: (signal: StopSignal) => void): unknown;
}

export interface SignalHandlerOptions {
  logger: Logger;
  /** Called once, on the first signal: stop taking new work and let the current work finish. */
  onGraceful: (signal: StopSignal) => void;
  /**
   * Called on the second signal: leave at once. Default: exit 1 (the interrupted run stays 'running' and the next run
   * marks it failed).
   */
  onForceful?: (signal: StopSignal) => void;
  /** What the first signal does, for the log line (default: finishing the current work). */
  graceful?: string;
  target?: SignalTarget;
  /**
   * Stop as on a first signal when the parent process is gone. Default: when npm started this process (`npx
   * ramp-recon ...`, `npm run`) and the signals are the process's own: npm passes no SIGTERM on (its shell dies and
   * leaves node running, docs/operations.md), so its death is the stop request.
   */
  watchParent?: boolean;
}

/**
 * Graceful first signal, forceful second (graphile-worker's signals.ts): the first SIGTERM or
 * SIGINT starts a clean shutdown; an operator who sends another does not want to wait for it.
 * Returns a function that removes the handlers (after a clean shutdown, so the process exits
 * normally).
 */
export function installSignalHandlers(options: SignalHandlerOptions): () => void {
  const target: SignalTarget = options.target ?? process;
  let received = 0;
  const handler = (signal: StopSignal) => {
    received += 1;
    if (received === 1) {
      options.logger.warn(
        { signal },
        `received ${signal}: ${options.graceful ?? 'finishing the current work, then exiting'} (send it again to exit at once)`,
      );
      options.onGraceful(signal);
      return;
    }
    options.logger.error({ signal }, `received ${signal} again: exiting at once`);
    if (options.onForceful) options.onForceful(signal);
    else process.exit(1);
  };
  for (const signal of STOP_SIGNALS) target.on(signal, handler);
  const unwatch =
    (options.watchParent ?? (target === process && startedByNpm()))
      ? watchParent(() => {
          options.logger.warn(
            { parentGone: true },
            'the parent process (npm: npx or npm run) is gone, and npm passes no SIGTERM on: taken as SIGTERM',
          );
          handler('SIGTERM');
        })
      : () => {};
  return () => {
    unwatch();
    for (const signal of STOP_SIGNALS) target.removeListener(signal, handler);
  };
}

/**
 * The first stop signal as a promise, for a long-running command that stops by finishing what it has in hand (a
 * worker, the webhook receiver, the fleet's scheduler); a second signal still leaves at once. `uninstall` removes the
 * handlers once the command has stopped.
 */
export function firstStopSignal(options: Omit<SignalHandlerOptions, 'onGraceful'>): {
  stopped: Promise<void>;
  uninstall: () => void;
} {
  let resolve!: () => void;
  const stopped = new Promise<void>((r) => (resolve = r));
  const uninstall = installSignalHandlers({ ...options, onGraceful: () => resolve() });
  return { stopped, uninstall };
}

export { startedByNpm } from '../config/process.js';

/**
 * Calls `gone` once when the parent process is gone: this process is then re-parented (to init or a subreaper), so
 * its parent pid changes. Checked every `intervalMs` on a timer that keeps no process alive.
 */
export function watchParent(gone: () => void, options: { intervalMs?: number; ppid?: () => number } = {}): () => void {
  const ppid = options.ppid ?? (() => process.ppid);
  const first = ppid();
  const timer = setInterval(() => {
    if (ppid() === first) return;
    clearInterval(timer);
    gone();
  }, options.intervalMs ?? 1000);
  timer.unref();
  return () => clearInterval(timer);
}
