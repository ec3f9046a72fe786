/** The bench's whole-run floor (bench/print.ts): the CPU of the run's three processes over the machine's cores. */
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { wholeRunFloor, type RunFigures } from '../../bench/print.js';

const figures = (over: Partial<RunFigures> = {}): RunFigures => ({
  run: {
    runId: 'r',
    status: 'succeeded',
    period: { from: '2026-11-26', to: '2026-11-27' },
    lookbackDays: 3,
    wallMs: 8200,
    maxRssKb: 1024,
    cpu: { ms: 5000, gcMs: 600 },
    stages: [],
    breaks: {},
  },
  requests: {},
  postgresCpuMs: 6900,
  sandboxCpuMs: 1100,
  ...over,
});

describe('bench: a whole run beside its CPU floor', () => {
  it('spreads the CPU of the run, Postgres and the sandbox over every core of the machine', () => {
    const cores = os.cpus().length;
    expect(wholeRunFloor('(b) whole run', figures())).toEqual([
      {
        stage: '(b) whole run',
        ms: 8200,
        floorMs: 13_000 / cores,
        floor: `the CPU of its three processes on ${cores} cores: run 5.0 s + Postgres 6.9 s + sandbox 1.1 s = 13.0 s, / ${cores}`,
      },
    ]);
  });

  it('says nothing when a process’s CPU cannot be read here', () => {
    expect(wholeRunFloor('(a) whole run', figures({ postgresCpuMs: null }))).toEqual([]);
    expect(wholeRunFloor('(a) whole run', figures({ sandboxCpuMs: undefined }))).toEqual([]);
  });
});
