/** bench:fleet's knobs (bench/fleet-setup.ts): the defaults of issue 47, and a wrong value named with what it got. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_KNOBS, isDefault, knobsFromEnv } from '../../bench/fleet-setup.js';

describe('bench:fleet knobs', () => {
  it('defaults to 100 accounts of 10,000 fills a day, 4 days, 8 workers, 4 requests a second', () => {
    expect(knobsFromEnv({})).toEqual({ accounts: 100, workers: 8, fills: 10_000, days: 4, rate: 4 });
    expect(isDefault(knobsFromEnv({ BENCH_FLEET_ACCOUNTS: ' ' }))).toBe(true);
    expect(DEFAULT_KNOBS.accounts).toBe(100);
  });

  it('reads each knob', () => {
    const env = {
      BENCH_FLEET_ACCOUNTS: '4',
      BENCH_FLEET_WORKERS: '2',
      BENCH_FLEET_FILLS: '500',
      BENCH_FLEET_DAYS: '3',
      BENCH_RATE: '2.5',
    };
    expect(knobsFromEnv(env)).toEqual({ accounts: 4, workers: 2, fills: 500, days: 3, rate: 2.5 });
    expect(isDefault(knobsFromEnv(env))).toBe(false);
  });

  it('names every wrong knob and its value', () => {
    expect(() =>
      knobsFromEnv({ BENCH_FLEET_ACCOUNTS: 'ten', BENCH_FLEET_WORKERS: '1.5', BENCH_FLEET_DAYS: '2', BENCH_RATE: '0' }),
    ).toThrow(
      'bench:fleet: BENCH_FLEET_ACCOUNTS must be a whole number of accounts from 1 to 500 (got "ten"); ' +
        'BENCH_FLEET_WORKERS must be a whole number of worker processes from 1 to 32 (got "1.5"); ' +
        'BENCH_FLEET_DAYS must be a whole number of days of history from 3 to 30 (got "2"); ' +
        'BENCH_RATE must be a number of requests per second per account from 0.1 to 1000 (got "0")',
    );
  });
});
