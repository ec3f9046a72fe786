/** Progress of long syncs: a bar on a terminal, periodic log lines otherwise. */
import cliProgress from 'cli-progress';
import type { Logger } from '../log/logger.js';

export interface ProgressOptions {
  logger: Logger;
  /** What is being synced, e.g. "exchange fills". */
  label: string;
  /** Total rows when knowable (enables the ETA); otherwise the bar shows counts only. */
  total?: number;
  /** Defaults to process.stderr; a bar is drawn only when it is a TTY. */
  stream?: NodeJS.WriteStream;
  /** Force the log-line mode (or the bar) regardless of the stream. */
  mode?: 'bar' | 'log' | 'off';
  /** Interval of the log lines in log mode. */
  intervalMs?: number;
  now?: () => number;
}

export interface ProgressSnapshot {
  label: string;
  pages: number;
  rows: number;
  total: number | null;
  elapsedMs: number;
  rowsPerSecond: number;
  etaSeconds: number | null;
}

export interface Progress {
  /** A page was fetched and stored with `rows` rows. */
  tick(rows: number, pages?: number): void;
  setTotal(total: number | null): void;
  /** Free text after the counts (e.g. the current window). */
  setStage(text: string): void;
  snapshot(): ProgressSnapshot;
  /** Stops the bar, writes a final log line and returns the final figures. */
  stop(): ProgressSnapshot;
}

/**
 * One reporter for every long sync: a bar on a terminal, periodic pino lines otherwise
 * (a log file or a CI console gets a line every few seconds instead of control characters).
 */
export function createProgress(options: ProgressOptions): Progress {
  const now = options.now ?? (() => performance.now());
  const stream = options.stream ?? process.stderr;
  const mode = options.mode ?? (stream.isTTY ? 'bar' : 'log');
  const intervalMs = options.intervalMs ?? 10_000;
  const started = now();
  let pages = 0;
  let rows = 0;
  let total: number | null = options.total ?? null;
  let stage = '';
  let lastLog = started;

  const bar =
    mode === 'bar'
      ? new cliProgress.SingleBar(
          {
            stream,
            format: `${options.label} [{bar}] {value}{totalText} rows | {pages} pages | {rate} rows/s | ETA {etaText} {stage}`,
            hideCursor: true,
            clearOnComplete: false,
            etaBuffer: 50,
            fps: 5,
          },
          cliProgress.Presets.shades_classic,
        )
      : null;

  const snap = (): ProgressSnapshot => {
    const elapsedMs = Math.max(1, now() - started);
    const rowsPerSecond = (rows * 1000) / elapsedMs;
    const etaSeconds = total !== null && rowsPerSecond > 0 ? Math.max(0, (total - rows) / rowsPerSecond) : null;
    return { label: options.label, pages, rows, total, elapsedMs: Math.round(elapsedMs), rowsPerSecond: Math.round(rowsPerSecond), etaSeconds: etaSeconds === null ? null : Math.round(etaSeconds) };
  };
  const payload = () => {
    const s = snap();
    return { pages, rate: s.rowsPerSecond, stage, totalText: total === null ? '' : `/${total}`, etaText: s.etaSeconds === null ? '?' : `${s.etaSeconds}s` };
  };
  bar?.start(total ?? 0, 0, payload());

  return {
    tick(n, p = 1) {
      rows += n;
      pages += p;
      if (bar) {
        if (total === null || rows > total) bar.setTotal(Math.max(rows, total ?? 0));
        bar.update(rows, payload());
      } else if (mode === 'log' && now() - lastLog >= intervalMs) {
        lastLog = now();
        options.logger.info({ progress: snap(), stage }, `${options.label}: ${rows} rows, ${pages} pages`);
      }
    },
    setTotal(t) {
      total = t;
      bar?.setTotal(t ?? rows);
    },
    setStage(text) {
      stage = text;
      bar?.update(rows, payload());
    },
    snapshot: snap,
    stop() {
      const s = snap();
      bar?.stop();
      if (mode !== 'off') options.logger.info({ progress: s }, `${options.label}: done, ${rows} rows, ${pages} pages, ${s.rowsPerSecond} rows/s`);
      return s;
    },
  };
}
