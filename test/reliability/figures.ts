/** Figures of the reliability suite: each test appends JSON lines, the summary reporter prints one line from them. */
import { figuresFile } from '../helpers/figures-file.js';

/**
 * One figure a reliability test reports. `name` identifies what was exercised (a kill point, a
 * fault, a bad-input case); the summary counts DISTINCT names per kind, so put the database in the
 * name when the same point on both databases should count twice (e.g. `sync:fills@3 [postgres]`).
 * `lost` and `duplicated` may ride on any figure; they are summed over all figures.
 */
export type Figure =
  | { kind: 'kill'; name: string; db?: string; lost?: number; duplicated?: number; [k: string]: unknown }
  | { kind: 'fault'; name: string; db?: string; lost?: number; duplicated?: number; [k: string]: unknown }
  | { kind: 'badInput'; name: string; db?: string; lost?: number; duplicated?: number; [k: string]: unknown }
  | {
      kind: 'webhookLoad';
      name: string;
      /** Acknowledged events per second sustained over the whole load. */
      eventsPerSecond: number;
      /** 99th percentile of the acknowledgement time, milliseconds. */
      p99Ms: number;
      db?: string;
      lost?: number;
      duplicated?: number;
      [k: string]: unknown;
    }
  | { kind: 'lost' | 'duplicated'; name: string; count: number; db?: string; [k: string]: unknown };

const file = figuresFile<Figure>('RELIABILITY_FIGURES', 'ramp-recon-reliability-figures');

/** The directory the suite's config sets (RELIABILITY_FIGURES); a fixed tmp folder when a file runs alone. */
export const figuresDir = file.dir;
/** Appends one figure as a JSON line to this process's file in the figures directory. */
export const recordFigure = file.record;
export const readFigures = file.read;

export interface Totals {
  killPoints: number;
  faults: number;
  badInputs: number;
  /** Lowest events/s held over the webhook loads (0 when none ran). */
  eventsPerSecond: number;
  /** Highest p99 over the webhook loads, ms (0 when none ran). */
  p99Ms: number;
  lost: number;
  duplicated: number;
}

export function totals(figures: Figure[]): Totals {
  const distinct = (kind: Figure['kind']) => new Set(figures.filter((f) => f.kind === kind).map((f) => f.name)).size;
  const loads = figures.filter((f): f is Extract<Figure, { kind: 'webhookLoad' }> => f.kind === 'webhookLoad');
  let lost = 0;
  let duplicated = 0;
  for (const f of figures) {
    if (f.kind === 'lost') lost += Number(f.count) || 0;
    else if (f.kind === 'duplicated') duplicated += Number(f.count) || 0;
    else {
      lost += Number(f.lost) || 0;
      duplicated += Number(f.duplicated) || 0;
    }
  }
  return {
    killPoints: distinct('kill'),
    faults: distinct('fault'),
    badInputs: distinct('badInput'),
    eventsPerSecond: loads.length ? Math.min(...loads.map((l) => Math.round(l.eventsPerSecond))) : 0,
    p99Ms: loads.length ? Math.max(...loads.map((l) => Math.round(l.p99Ms))) : 0,
    lost,
    duplicated,
  };
}

/** The suite's last line. */
export function summaryLine(t: Totals): string {
  return `reliability: kill points ${t.killPoints}, faults ${t.faults}, bad inputs ${t.badInputs}, events/s held ${t.eventsPerSecond}, p99 ${t.p99Ms} ms, lost ${t.lost}, duplicated ${t.duplicated}`;
}
