import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createProgress } from '../../src/util/progress.js';

describe('progress reporter', () => {
  it('writes periodic log lines with rows, pages, rate and ETA when not on a terminal', () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }));
    let t = 0;
    const p = createProgress({ logger, label: 'exchange fills', total: 4000, mode: 'log', intervalMs: 1000, now: () => t });
    t = 500;
    p.tick(1000);
    expect(lines).toHaveLength(0);
    t = 1000;
    p.tick(1000);
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as { progress: { rows: number; pages: number; rowsPerSecond: number; etaSeconds: number } };
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
