import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createProgress } from '../../src/util/progress.js';
import { createStatusLine } from '../../src/log/status-line.js';

describe('progress reporter', () => {
  it('writes periodic log lines with rows, pages, rate and ETA when not on a terminal', () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }));
    let t = 0;
    const p = createProgress({
      logger,
      label: 'exchange fills',
      total: 4000,
      mode: 'log',
      line: null,
      quietMs: 0,
      intervalMs: 1000,
      now: () => t,
    });
    t = 500;
    p.tick(1000);
    expect(lines).toHaveLength(0);
    t = 1000;
    p.tick(1000);
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as {
      progress: { rows: number; pages: number; rowsPerSecond: number; etaSeconds: number };
    };
    expect(line.progress).toMatchObject({ rows: 2000, pages: 2, rowsPerSecond: 2000, etaSeconds: 1 });
    const final = p.stop();
    expect(final.rows).toBe(2000);
    expect(lines).toHaveLength(2);
  });

  it('is silent in off mode', () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }));
    const p = createProgress({ logger, label: 'x', mode: 'off' });
    p.tick(5);
    p.stop();
    expect(lines).toHaveLength(0);
  });
});

describe('progress lines', () => {
  const capture = () => {
    const lines: Array<{ level: number; msg: string }> = [];
    const logger = pino(
      { level: 'info' },
      new Writable({
        write: (c, _e, cb) => (lines.push(JSON.parse(String(c)) as { level: number; msg: string }), cb()),
      }),
    );
    return { lines, logger };
  };

  it('show counts and rate without an ETA when the total is unknown', () => {
    const { lines, logger } = capture();
    let t = 0;
    const p = createProgress({
      logger,
      label: 'exchange sync',
      line: null,
      quietMs: 0,
      intervalMs: 1000,
      now: () => t,
    });
    t = 2000;
    p.tick(500, 3);
    expect(lines.map((l) => l.msg)).toEqual(['exchange sync: 500 rows, 3 pages, 250 rows/s']);
    p.setTotal(1000);
    t = 4000;
    p.tick(500);
    expect(lines[1]?.msg).toBe('exchange sync: 1,000 of 1,000 rows, 4 pages, 250 rows/s, under 10 s left');
  });

  it('never say "done" after a failure: stop(error) warns with what was done', () => {
    const { lines, logger } = capture();
    const p = createProgress({ logger, label: 'exchange sync', line: null, intervalMs: 60_000 });
    p.tick(7);
    p.stop(new Error('Exchange API unreachable'));
    expect(lines).toHaveLength(1);
    expect(lines[0]?.level).toBe(40);
    expect(lines[0]?.msg).toBe('exchange sync: stopped after 7 rows, 1 page (Exchange API unreachable)');
    expect(lines[0]?.msg).not.toMatch(/done/);
  });
});

describe('progress through the date range', () => {
  const DAY = 86_400_000;
  const OCT1 = Date.UTC(2026, 9, 1);
  const NOV1 = Date.UTC(2026, 10, 1);
  const json = () => {
    const lines: Array<{ level: number; msg: string; progress: Record<string, unknown> }> = [];
    const logger = pino(
      { level: 'info' },
      new Writable({ write: (c, _e, cb) => (lines.push(JSON.parse(String(c)) as (typeof lines)[number]), cb()) }),
    );
    return { lines, logger };
  };

  it('off a terminal: a log line every interval with the range read, its fraction and the time left', () => {
    const { lines, logger } = json();
    let t = 0;
    const p = createProgress({ logger, label: 'exchange sync', line: null, now: () => t });
    p.setStage('fills');
    const fills = p.span('fills', OCT1, NOV1);
    t = 4_000;
    p.tick(1_000);
    fills.cover(DAY);
    expect(lines).toHaveLength(0); // quiet for the first 5 s, then one line per 10 s
    t = 9_000;
    fills.cover(3.1 * DAY); // 10% of the 31 days, 90 s left when read in 10 s
    t = 10_000;
    p.tick(40_200, 11);
    expect(lines).toHaveLength(1);
    expect(lines[0]!.msg).toBe(
      'exchange sync: fills 10% of 2026-10-01..2026-11-01, 41,200 rows, 12 pages, 4,120 rows/s, about 90 s left',
    );
    expect(lines[0]!.progress).toMatchObject({
      rows: 41_200,
      span: { name: 'fills', from: '2026-10-01', to: '2026-11-01', fraction: 0.1 },
      etaSeconds: 90,
    });
    t = 15_000;
    fills.cover(15.5 * DAY);
    expect(lines).toHaveLength(1);
    t = 20_000;
    fills.cover(15.5 * DAY); // said with the next page's tick
    expect(lines).toHaveLength(1);
    p.tick(100);
    expect(lines[1]!.progress).toMatchObject({ span: { fraction: 0.5 }, etaSeconds: 20 });
  });

  it('speaks of the stream with the most time left, and of none once every stream ended', () => {
    const { lines, logger } = json();
    let t = 0;
    const p = createProgress({ logger, label: 'exchange sync', line: null, quietMs: 0, intervalMs: 0, now: () => t });
    const a = p.span('orders.FILLED', OCT1, NOV1);
    const b = p.span('trades', OCT1, NOV1);
    t = 10_000;
    a.cover(31 * DAY * 0.8);
    b.cover(31 * DAY * 0.25);
    p.tick(1);
    expect(lines.at(-1)!.progress).toMatchObject({ span: { name: 'trades', fraction: 0.25 }, etaSeconds: 30 });
    a.end();
    b.end();
    p.tick(1);
    expect(lines.at(-1)!.progress).toMatchObject({ span: null, etaSeconds: null });
  });

  it('says nothing of a sync shorter than the quiet time', () => {
    const { lines, logger } = json();
    let t = 0;
    const p = createProgress({ logger, label: 'partner orders', line: null, intervalMs: 0, now: () => t });
    const days = p.span('days', OCT1, NOV1);
    t = 4_999;
    p.tick(500);
    days.cover(31 * DAY);
    p.stop();
    expect(lines.map((l) => l.msg)).toEqual(['partner orders: done, 500 rows, 1 page, 100 rows/s']);
  });

  it('draws no status line under --quiet (warnings only), as it writes no info line', () => {
    const written: string[] = [];
    const line = createStatusLine({ write: (text) => written.push(text) });
    let t = 0;
    const logger = pino({ level: 'warn' }, new Writable({ write: (_c, _e, cb) => cb() }));
    const p = createProgress({ logger, label: 'exchange sync', line, quietMs: 0, intervalMs: 0, now: () => t });
    t = 60_000;
    p.span('fills', OCT1, NOV1).cover(DAY);
    p.tick(10);
    p.stop();
    expect(written).toEqual([]);
  });

  it('on a terminal: one status line redrawn in place, cleared before the final log line', () => {
    const { lines, logger } = json();
    const written: string[] = [];
    const line = createStatusLine({ write: (text) => written.push(text), columns: () => 200 });
    let t = 0;
    const p = createProgress({ logger, label: 'exchange sync', line, now: () => t });
    const days = p.span('orders.NEW', OCT1, NOV1);
    t = 6_000;
    days.cover(31 * DAY * 0.5);
    p.tick(5);
    t = 6_200;
    days.cover(31 * DAY * 0.6);
    p.tick(5); // within 0.5 s of the last redraw: not drawn
    t = 7_000;
    p.tick(5);
    expect(written).toEqual([
      '\r\x1b[2Kexchange sync: orders.NEW 50% of 2026-10-01..2026-11-01, 5 rows, 1 page, 1 rows/s, under 10 s left',
      '\r\x1b[2Kexchange sync: orders.NEW 60% of 2026-10-01..2026-11-01, 15 rows, 3 pages, 2 rows/s, under 10 s left',
    ]);
    expect(lines).toHaveLength(0); // the status line only, no log lines meanwhile
    p.stop();
    expect(written.at(-1)).toBe('\r\x1b[2K');
    expect(lines.map((l) => l.msg)).toEqual(['exchange sync: done, 15 rows, 3 pages, 2 rows/s']);
  });
});
