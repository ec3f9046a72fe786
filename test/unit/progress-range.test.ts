import { describe, expect, it } from 'vitest';
import {
  etaSeconds,
  progressText,
  rangeFraction,
  slowestSpan,
  timeLeftWords,
  type RangeSpan,
} from '../../src/util/progress-range.js';
import { fillsReach, readFillsPage } from '../../src/sources/exchange/fills-reach.js';
import { WindowPlan } from '../../src/sources/exchange/plan.js';
import { createStatusLine } from '../../src/log/status-line.js';
import { createLogger, linesAbove } from '../../src/log/logger.js';

const DAY = 86_400_000;
const OCT1 = Date.UTC(2026, 9, 1);
const span = (name: string, coveredDays: number, startedAt = 0): RangeSpan => ({
  name,
  fromMs: OCT1,
  toMs: OCT1 + 30 * DAY,
  coveredMs: coveredDays * DAY,
  startedAt,
});

describe('fraction of the range and time left', () => {
  it('is the time read over the range, kept within 0..1; an empty range is read', () => {
    expect(rangeFraction(span('fills', 3))).toBe(0.1);
    expect(rangeFraction(span('fills', 45))).toBe(1);
    expect(rangeFraction({ ...span('fills', 0), coveredMs: -5 })).toBe(0);
    expect(rangeFraction({ fromMs: OCT1, toMs: OCT1, coveredMs: 0 })).toBe(1);
  });

  it('goes by the pace so far: elapsed × (1 − f) / f, none before anything is read', () => {
    expect(etaSeconds(60_000, 0.25)).toBe(180);
    expect(etaSeconds(60_000, 1)).toBe(0);
    expect(etaSeconds(60_000, 0)).toBeNull();
  });

  it('picks the open stream with the most time left: one without a pace first, ties by name', () => {
    // fills: a third read in 10 s (20 s left); trades: a tenth read in 5 s (45 s left).
    const fills = span('fills', 10);
    const trades = span('trades', 3, 5_000);
    expect(slowestSpan([fills, trades], 10_000)).toEqual({ span: trades, fraction: 0.1, eta: 45 });
    const fresh = span('orders.NEW', 0, 9_000);
    expect(slowestSpan([fills, trades, fresh], 10_000)).toEqual({ span: fresh, fraction: 0, eta: null });
    expect(slowestSpan([span('b', 15), span('a', 15)], 10_000)?.span.name).toBe('a');
    expect(slowestSpan([], 10_000)).toBeNull();
  });

  it('says the time left no more precisely than it can be known', () => {
    expect([9, 10, 44, 114, 115, 179, 3_540, 3_600, 7_500].map(timeLeftWords)).toEqual([
      'under 10 s',
      'about 10 s',
      'about 40 s',
      'about 110 s',
      'about 2 min',
      'about 3 min',
      'about 59 min',
      'about 1 h',
      'about 2 h 5 min',
    ]);
  });

  it('writes the line with the stream, its range, the counts, the rate and the time left', () => {
    const figures = {
      label: 'exchange sync',
      rows: 41_200,
      pages: 1,
      total: null,
      rowsPerSecond: 5_100,
      span: { name: 'fills', from: '2026-10-01', to: '2026-11-01', fraction: 0.119 },
      etaSeconds: 170,
    };
    expect(progressText(figures)).toBe(
      'exchange sync: fills 11% of 2026-10-01..2026-11-01, 41,200 rows, 1 page, 5,100 rows/s, about 3 min left',
    );
    expect(progressText({ ...figures, rows: 1, span: null, etaSeconds: null })).toBe(
      'exchange sync: 1 row, 1 page, 5,100 rows/s',
    );
  });
});

describe('the range a walk has read', () => {
  it('fills: oldest-first pages read up from the start, newest-first ones down from the end', () => {
    const up = fillsReach(0, 100);
    expect(readFillsPage(up, [5, 10, 20])).toBe(20);
    expect(readFillsPage(up, [20, 60])).toBe(60);
    expect(readFillsPage(up, [70])).toBe(60); // one timestamp tells no order
    const down = fillsReach(0, 100);
    expect(readFillsPage(down, [99, 90])).toBe(10);
    expect(readFillsPage(down, [90, 30])).toBe(70);
    expect(readFillsPage(down, [])).toBe(70);
  });

  it('windows: what is left to fetch, also after a full page continued the window or split it', () => {
    const plan = new WindowPlan(0, 1_000);
    expect(plan.remainingMs()).toBe(1_000);
    const w = plan.next()!;
    expect(plan.remainingMs()).toBe(0); // the window in flight is the caller's to count
    plan.full(w, [100, 200, 400]); // oldest-first: [0, 400] is read, [400, 1000] to fetch
    expect(plan.remainingMs()).toBe(600);
    plan.full(plan.next()!, [700]); // one timestamp: split in two halves
    expect(plan.remainingMs()).toBe(600);
  });
});

describe('the status line', () => {
  const terminal = (columns = 40) => {
    const out: string[] = [];
    return { out, line: createStatusLine({ write: (t) => out.push(t), columns: () => columns }) };
  };

  it('clears itself before a log line and is drawn again below it', () => {
    const { out, line } = terminal();
    line.above('first log line\n');
    line.show('fills 10%');
    line.above('second log line\n');
    line.clear();
    line.clear();
    expect(out).toEqual(['first log line\n', '\r\x1b[2Kfills 10%', '\r\x1b[2Ksecond log line\nfills 10%', '\r\x1b[2K']);
  });

  it("takes the logger's readable lines above it (the destination of pretty logs on a terminal)", async () => {
    const { out, line } = terminal(80);
    const logger = createLogger({ format: 'pretty', destination: linesAbove(line) });
    line.show('exchange sync: fills 10%');
    logger.info('exchange sync started');
    await new Promise((resolve) => setImmediate(resolve));
    expect(out).toHaveLength(2);
    // "\r ESC[2K": the status erased; the log line; the status again. The time of day is the log's own.
    expect(out[1]!.startsWith('\r\x1b[2K[')).toBe(true);
    expect(out[1]!.slice(5).replace(/^\[\d\d:\d\d:\d\d\]/, '[hh:mm:ss]')).toBe(
      '[hh:mm:ss] INFO: exchange sync started\nexchange sync: fills 10%',
    );
  });

  it('is cut to the width of the terminal, a wrapped line could not be redrawn in place', () => {
    const { out, line } = terminal(12);
    line.show('exchange sync: fills 10%');
    expect(out).toEqual(['\r\x1b[2Kexchange s…']);
  });
});
