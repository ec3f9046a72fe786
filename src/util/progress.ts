/** Progress of long syncs: how far each stream has read its date range, rows, pages, rate and the time left.
 * On a terminal one status line redrawn in place; otherwise log lines every few seconds. Quiet while a sync is short.
 */
import type { Logger } from '../log/logger.js';
import { terminalStatusLine, type StatusLine } from '../log/status-line.js';
import { dayText, progressText, slowestSpan, type ProgressFigures, type RangeSpan } from './progress-range.js';
import { plural } from './words.js';

export interface ProgressOptions {
  logger: Logger;
  /** What is being synced, e.g. "exchange sync". */
  label: string;
  /** Total rows when knowable (the time left then goes by rows); otherwise it goes by the date ranges read. */
  total?: number;
  /** 'off' is silent (tests). */
  mode?: 'log' | 'off';
  /**
   * The terminal's status line (default: stderr's, when the logger writes readable lines to a terminal); with one the
   * progress is drawn on it, without one it goes in log lines.
   */
  line?: StatusLine | null;
  /** Interval of the log lines (default 10 s) or of the redraws of the status line (default 0.5 s). */
  intervalMs?: number;
  /** Nothing is said before this much time (default 5 s): a short sync shows no progress. */
  quietMs?: number;
  now?: () => number;
}

export interface ProgressSnapshot extends ProgressFigures {
  elapsedMs: number;
}

/** One stream's walk through its range, reported as it goes. */
export interface RangeProgress {
  /** `coveredMs` of the range are read (said with the next tick: call it before the page's tick). */
  cover(coveredMs: number): void;
  /** The walk is over (also when it failed): the line no longer speaks of it. */
  end(): void;
}

export interface Progress {
  /** A page was fetched and stored with `rows` rows. */
  tick(rows: number, pages?: number): void;
  setTotal(total: number | null): void;
  /** Free text after the counts in the log lines (e.g. the current stream). */
  setStage(text: string): void;
  /** A stream starts reading [fromMs, toMs] (epoch ms). */
  span(name: string, fromMs: number, toMs: number): RangeProgress;
  snapshot(): ProgressSnapshot;
  /**
   * Clears the status line, writes the final line and returns the final figures: "done" only when no error is given;
   * with one, "stopped after N rows" at warn (a stage never logs "done" after it failed).
   */
  stop(error?: unknown): ProgressSnapshot;
}

/**
 * One reporter for every long sync. The earlier bar was overwritten by (and overwrote) the log lines around it, and
 * showed a full bar with "ETA ?" when no total was known: the status line is now shared with the logger (every log
 * line clears it first and draws it again after: log/status-line.ts), and the time left comes from the part of each
 * stream's date range read so far, which API paging always knows.
 */
export function createProgress(options: ProgressOptions): Progress {
  const now = options.now ?? (() => performance.now());
  const mode = options.mode ?? 'log';
  const line = options.line === undefined ? terminalStatusLine() : options.line;
  // --quiet (warn) silences the status line as it does the info lines.
  const drawOn = mode === 'off' || !options.logger.isLevelEnabled('info') ? null : line;
  const intervalMs = options.intervalMs ?? (drawOn ? 500 : 10_000);
  const started = now();
  const quietUntil = started + (options.quietMs ?? 5_000);
  const spans = new Set<RangeSpan>();
  let pages = 0;
  let rows = 0;
  let total: number | null = options.total ?? null;
  let stage = '';
  let lastSaid = started;
  let drawn = false;

  const snap = (): ProgressSnapshot => {
    const t = now();
    const elapsedMs = Math.max(1, t - started);
    const rowsPerSecond = (rows * 1000) / elapsedMs;
    const slowest = slowestSpan(spans, t);
    const byRows = total !== null && rowsPerSecond > 0 ? Math.round(Math.max(0, total - rows) / rowsPerSecond) : null;
    return {
      label: options.label,
      pages,
      rows,
      total,
      elapsedMs: Math.round(elapsedMs),
      rowsPerSecond: Math.round(rowsPerSecond),
      span: slowest && {
        name: slowest.span.name,
        from: dayText(slowest.span.fromMs),
        to: dayText(slowest.span.toMs),
        fraction: Math.round(slowest.fraction * 1000) / 1000,
      },
      etaSeconds: total !== null ? byRows : (slowest?.eta ?? null),
    };
  };
  const say = () => {
    const t = now();
    if (mode === 'off' || t < quietUntil || t - lastSaid < intervalMs) return;
    lastSaid = t;
    const s = snap();
    if (drawOn) {
      drawOn.show(progressText(s));
      drawn = true;
    } else {
      // The step when the line names no stream of its own (payments by id, a wallet, open orders refreshed).
      const step = stage && stage !== s.span?.name ? ` (${stage})` : '';
      options.logger.info({ progress: s, stage }, `${progressText(s)}${step}`);
    }
  };

  return {
    tick(n, p = 1) {
      rows += n;
      pages += p;
      say();
    },
    setTotal(t) {
      total = t;
    },
    setStage(text) {
      stage = text;
    },
    span(name, fromMs, toMs) {
      const s: RangeSpan = { name, fromMs, toMs, coveredMs: 0, startedAt: now() };
      spans.add(s);
      return {
        cover(coveredMs) {
          s.coveredMs = Math.max(s.coveredMs, coveredMs);
        },
        end() {
          spans.delete(s);
        },
      };
    },
    snapshot: snap,
    stop(error) {
      const s = snap();
      if (mode === 'off') return s;
      if (drawn) drawOn?.clear();
      const counts = `${plural(rows, 'row')}, ${plural(pages, 'page')}`;
      if (error === undefined)
        options.logger.info({ progress: s }, `${options.label}: done, ${counts}, ${s.rowsPerSecond} rows/s`);
      else
        options.logger.warn(
          { progress: s },
          `${options.label}: stopped after ${counts} (${error instanceof Error ? error.message : String(error)})`,
        );
      return s;
    },
  };
}
