import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createProgress } from '../../src/util/progress.js';

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
    const p = createProgress({ logger, label: 'exchange sync', intervalMs: 1000, now: () => t });
    t = 2000;
    p.tick(500, 3);
    expect(lines.map((l) => l.msg)).toEqual(['exchange sync: 500 rows, 3 pages, 250 rows/s']);
    p.setTotal(1000);
    t = 4000;
    p.tick(500);
    expect(lines[1]?.msg).toBe('exchange sync: 1000 of 1000 rows, 4 pages, 250 rows/s, about 0 s left');
  });

  it('never say "done" after a failure: stop(error) warns with what was done', () => {
    const { lines, logger } = capture();
    const p = createProgress({ logger, label: 'exchange sync', intervalMs: 60_000 });
    p.tick(7);
    p.stop(new Error('Exchange API unreachable'));
    expect(lines).toHaveLength(1);
    expect(lines[0]?.level).toBe(40);
    expect(lines[0]?.msg).toBe('exchange sync: stopped after 7 rows, 1 page (Exchange API unreachable)');
    expect(lines[0]?.msg).not.toMatch(/done/);
  });
});
