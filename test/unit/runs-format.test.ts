import { describe, expect, it } from 'vitest';
import { deliveryOf, duration, formatRequests } from '../../src/cli/commands/runs.js';

describe('runs: the requests line', () => {
  it('gives each API its requests, retries and time at its rates, then the total', () => {
    const requests = {
      partner: {
        'GET /currencies': { requests: 3, retries: 0, perSecond: 10, seconds: 0.3 },
        'GET /orders': { requests: 412, retries: 1, perSecond: 100, seconds: 4.12 },
      },
      exchange: { 'GET /fills': { requests: 9724, retries: 3, perSecond: 2, seconds: 4862 } },
    };
    const requestTotals = {
      apis: {
        partner: { requests: 415, retries: 1, seconds: 4.42 },
        exchange: { requests: 9724, retries: 3, seconds: 4862 },
      },
      all: { requests: 10139, retries: 4, seconds: 4866.42 },
    };
    expect(formatRequests({ requests, requestTotals })).toBe(
      'partner 415 (1 retry) 4.4s at 10/s+100/s; exchange 9724 (3 retries) 1h21m at 2/s; total 10139 (4 retries) 1h21m',
    );
    expect(
      formatRequests({ requests: {}, requestTotals: { apis: {}, all: { requests: 0, retries: 0, seconds: 0 } } }),
    ).toBe('');
  });

  it('writes times at a rate from seconds to hours', () => {
    expect(duration(0.04)).toBe('0.0s');
    expect(duration(59.9)).toBe('59.9s');
    expect(duration(59.96)).toBe('1m00s');
    expect(duration(1385)).toBe('23m05s');
    expect(duration(4862)).toBe('1h21m');
  });
});

describe('deliveryOf', () => {
  const base = { delivered: false, deliveryError: null, status: 'succeeded', command: 'run', stages: {} } as Parameters<
    typeof deliveryOf
  >[0];
  it('tells a run never meant to be e-mailed from one whose e-mail failed', () => {
    expect(deliveryOf({ ...base, delivered: true })).toBe('delivered');
    expect(
      deliveryOf({
        ...base,
        status: 'failed',
        deliveryError: 'SMTP: connection refused',
        stages: { deliver: { ms: 1, status: 'failed' } },
      }),
    ).toBe('failed');
    expect(deliveryOf({ ...base, stages: { deliver: { ms: 0, status: 'skipped', reason: '--no-email' } } })).toBe(
      'not requested',
    );
    expect(deliveryOf({ ...base, command: 'reconcile' })).toBe('not requested');
    expect(deliveryOf({ ...base, command: 'sync', status: 'running' })).toBe('not requested');
    expect(deliveryOf({ ...base, status: 'running' })).toBe('pending');
  });
});
