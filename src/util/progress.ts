/** Progress of long syncs: periodic log lines with counts, rate and (when the total is known) an ETA. */
import type { Logger } from '../log/logger.js';
import { plural } from './words.js';

export interface ProgressOptions {
  logger: Logger;
  /** What is being synced, e.g. "exchange fills". */
  label: string;
  /** Total rows when knowable (enables the ETA); otherwise the lines show counts and rate only. */
  total?: number;
  /** Where the lines go; 'off' is silent. On a terminal the lines come more often. */
  stream?: NodeJS.WriteStream;
  mode?: 'log' | 'off';
  /** Interval of the lines (default 3 s on a terminal, 10 s otherwise). */
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
  /**
   * Writes the final line and returns the final figures: "done" only when no error is given;
   * with one, "stopped after N rows" at warn (a stage never logs "done" after it failed).
   */
  stop(error?: unknown): ProgressSnapshot;
}

/**
 * One reporter for every long sync. It writes log lines, never a redrawn bar: a bar drawn on the
 * terminal was overwritten by (and overwrote) the log lines around it, and showed a full bar with
 * "ETA ?" when the total was unknown. Lines say rows, pages and rate, and an ETA only when the total is known.
 */
export function createProgress(options: ProgressOptions): Progress {
  const now = options.now ?? (() => performance.now());
  const stream = options.stream ?? process.stderr;
  const mode = options.mode ?? 'log';
  const intervalMs = options.intervalMs ?? (stream.isTTY ? 3_000 : 10_000);
  const started = now();
  let pages = 0;
  let rows = 0;
  let total: number | null = options.total ?? null;
  let stage = '';
  let lastLog = started;

  const snap = (): ProgressSnapshot => {
    const elapsedMs = Math.max(1, now() - started);
    const rowsPerSecond = (rows * 1000) / elapsedMs;
    const etaSeconds = total !== null && rowsPerSecond > 0 ? Math.max(0, (total - rows) / rowsPerSecond) : null;
    return {
      label: options.label,
      pages,
      rows,
      total,
      elapsedMs: Math.round(elapsedMs),
      rowsPerSecond: Math.round(rowsPerSecond),
      etaSeconds: etaSeconds === null ? null : Math.round(etaSeconds),
    };
  };
  const counts = (s: ProgressSnapshot) =>
    `${s.total !== null ? `${s.rows} of ${plural(s.total, 'row')}` : plural(s.rows, 'row')}, ${plural(s.pages, 'page')}, ${s.rowsPerSecond} rows/s${s.etaSeconds !== null ? `, about ${s.etaSeconds} s left` : ''}`;

  return {
    tick(n, p = 1) {
      rows += n;
      pages += p;
      if (mode === 'log' && now() - lastLog >= intervalMs) {
        lastLog = now();
        const s = snap();
        options.logger.info({ progress: s, stage }, `${options.label}: ${counts(s)}${stage ? ` (${stage})` : ''}`);
      }
    },
    setTotal(t) {
      total = t;
    },
    setStage(text) {
      stage = text;
    },
    snapshot: snap,
    stop(error) {
      const s = snap();
      if (mode === 'off') return s;
      if (error === undefined)
        options.logger.info(
          { progress: s },
          `${options.label}: done, ${plural(rows, 'row')}, ${plural(pages, 'page')}, ${s.rowsPerSecond} rows/s`,
        );
      else
        options.logger.warn(
          { progress: s },
          `${options.label}: stopped after ${plural(rows, 'row')}, ${plural(pages, 'page')} (${error instanceof Error ? error.message : String(error)})`,
        );
      return s;
    },
  };
}
