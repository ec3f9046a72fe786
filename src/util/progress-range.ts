/** Pure figures of a sync's progress through its date range: the fraction read, the time left, the line in words. */

/** A stream's walk through its date range (epoch ms), and how much of that time it has read so far. */
export interface RangeSpan {
  /** The stream, e.g. "fills", "orders.FILLED", "days". */
  name: string;
  fromMs: number;
  toMs: number;
  /** Time of the range read completely (whatever the walk's direction). */
  coveredMs: number;
  /** The progress clock when the stream started its walk. */
  startedAt: number;
}

/** The figures a progress line and log line say. */
export interface ProgressFigures {
  label: string;
  rows: number;
  pages: number;
  total: number | null;
  rowsPerSecond: number;
  /** The stream the line speaks of (the one with the most time left), with the part of its range read (0..1). */
  span: { name: string; from: string; to: string; fraction: number } | null;
  etaSeconds: number | null;
}

/** The part of the span's range read, 0..1 (an empty range is read). */
export function rangeFraction(span: Pick<RangeSpan, 'fromMs' | 'toMs' | 'coveredMs'>): number {
  const length = span.toMs - span.fromMs;
  if (length <= 0) return 1;
  return Math.min(1, Math.max(0, span.coveredMs / length));
}

/** Seconds left at the pace so far: elapsed × (1 − f) / f; null before anything is read (no pace to go by). */
export function etaSeconds(elapsedMs: number, fraction: number): number | null {
  if (!(fraction > 0)) return null;
  return Math.max(0, Math.round((elapsedMs * (1 - fraction)) / fraction / 1000));
}

/** The open span with the most time left (one not started yet, without a pace, first); ties by name. */
export function slowestSpan(
  spans: Iterable<RangeSpan>,
  now: number,
): { span: RangeSpan; fraction: number; eta: number | null } | null {
  let best: { span: RangeSpan; fraction: number; eta: number | null } | null = null;
  for (const span of spans) {
    const fraction = rangeFraction(span);
    const eta = etaSeconds(now - span.startedAt, fraction);
    const c = { span, fraction, eta };
    if (!best || later(c, best)) best = c;
  }
  return best;
}

const later = (a: { span: RangeSpan; eta: number | null }, b: { span: RangeSpan; eta: number | null }): boolean => {
  const ea = a.eta ?? Infinity;
  const eb = b.eta ?? Infinity;
  return ea !== eb ? ea > eb : a.span.name < b.span.name;
};

/** "under 10 s", "about 90 s", "about 3 min", "about 2 h 5 min": a time left, no more precise than it can be. */
export function timeLeftWords(seconds: number): string {
  if (seconds < 10) return 'under 10 s';
  if (seconds < 115) return `about ${Math.round(seconds / 10) * 10} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `about ${minutes} min`;
  const m = minutes % 60;
  return `about ${Math.floor(minutes / 60)} h${m ? ` ${m} min` : ''}`;
}

const count = (n: number) => n.toLocaleString('en-US');

/**
 * "exchange sync: orders.FILLED 11% of 2026-10-01..2026-11-01, 41,200 rows, 12 pages, 5,100 rows/s, about 3 min left";
 * without a span (no stream walking a range) the counts and rate only, the time left only when known.
 */
export function progressText(f: ProgressFigures): string {
  const parts: string[] = [];
  if (f.span) parts.push(`${f.span.name} ${Math.floor(f.span.fraction * 100)}% of ${f.span.from}..${f.span.to}`);
  parts.push(
    f.total !== null
      ? `${count(f.rows)} of ${count(f.total)} rows`
      : `${count(f.rows)} ${f.rows === 1 ? 'row' : 'rows'}`,
  );
  parts.push(`${count(f.pages)} ${f.pages === 1 ? 'page' : 'pages'}`, `${count(f.rowsPerSecond)} rows/s`);
  if (f.etaSeconds !== null) parts.push(`${timeLeftWords(f.etaSeconds)} left`);
  return `${f.label}: ${parts.join(', ')}`;
}

/** The UTC day of an epoch ms, as the line names a range's ends. */
export function dayText(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
