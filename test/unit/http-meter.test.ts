import { describe, expect, it } from 'vitest';
import { parseJsonLossless } from '../../src/decimal/json.js';
import {
  createRequestMeter,
  endpointName,
  endpointSeconds,
  parseRunRequests,
  requestTotals,
  roundSeconds,
  sortedRequests,
} from '../../src/http/meter.js';

describe('request meter', () => {
  it('counts attempts per API and endpoint, retries apart, keeping the rate of each class', () => {
    const meter = createRequestMeter();
    for (let i = 0; i < 3; i++) meter.count('partner', 'GET /currencies', 10, false);
    meter.count('partner', 'GET /orders', 100, false);
    meter.count('partner', 'GET /orders', 100, true);
    meter.count('exchange', 'GET /orders', 20, false);
    const snap = meter.snapshot();
    expect(snap).toEqual({
      partner: {
        'GET /currencies': { requests: 3, retries: 0, perSecond: 10 },
        'GET /orders': { requests: 2, retries: 1, perSecond: 100 },
      },
      exchange: { 'GET /orders': { requests: 1, retries: 0, perSecond: 20 } },
    });
    // A snapshot is a copy: later counts do not change what was saved.
    meter.count('exchange', 'GET /orders', 20, false);
    expect(snap.exchange?.['GET /orders']?.requests).toBe(1);
    expect(meter.snapshot().exchange?.['GET /orders']?.requests).toBe(2);
  });

  it('names an endpoint by method and path template, without the query', () => {
    expect(endpointName('GET', '/orders/{id}')).toBe('GET /orders/{id}');
    expect(endpointName('GET', '/fills?fromExecId=5&limit=1000')).toBe('GET /fills');
    expect(endpointName('POST', 'quote/buy')).toBe('POST /quote/buy');
  });

  it('sums the time at each class rate per API and over all APIs', () => {
    const requests = {
      partner: {
        'GET /currencies': { requests: 3, retries: 0, perSecond: 10 },
        'GET /quote/buy': { requests: 27, retries: 2, perSecond: 10 },
        'GET /orders': { requests: 380, retries: 1, perSecond: 100 },
        'GET /orders/{id}': { requests: 20, retries: 0, perSecond: 100 },
      },
      exchange: { 'GET /fills': { requests: 41, retries: 0, perSecond: 20 } },
    };
    expect(endpointSeconds(requests.partner['GET /orders'])).toBe(3.8);
    const t = requestTotals(requests);
    // Public class 30 / 10 = 3 s, private class 400 / 100 = 4 s: the sync makes them one after another.
    expect(t.apis.partner).toEqual({ requests: 430, retries: 3, seconds: 7 });
    expect(t.apis.exchange).toEqual({ requests: 41, retries: 0, seconds: 2.05 });
    expect({ ...t.all, seconds: roundSeconds(t.all.seconds) }).toEqual({ requests: 471, retries: 3, seconds: 9.05 });
    expect(roundSeconds(1 / 3)).toBe(0.333);
    expect(
      sortedRequests({ exchange: requests.exchange, partner: requests.partner }).map(([api, e]) => [
        api,
        e.map(([name]) => name),
      ]),
    ).toEqual([
      ['partner', ['GET /currencies', 'GET /orders', 'GET /orders/{id}', 'GET /quote/buy']],
      ['exchange', ['GET /fills']],
    ]);
  });

  it('reads run.requests back from jsonb (lossless numbers), leaving out entries without counts', () => {
    const stored = parseJsonLossless(
      '{"partner":{"GET /orders":{"requests":412,"retries":1,"perSecond":100},"GET /bad":{"requests":"x","retries":0,"perSecond":10}},"exchange":{"GET /fills":{"requests":9,"retries":0,"perSecond":0.5}},"other":{}}',
    );
    expect(parseRunRequests(stored)).toEqual({
      partner: { 'GET /orders': { requests: 412, retries: 1, perSecond: 100 } },
      exchange: { 'GET /fills': { requests: 9, retries: 0, perSecond: 0.5 } },
    });
    expect(parseRunRequests(null)).toEqual({});
    expect(requestTotals({})).toEqual({ apis: {}, all: { requests: 0, retries: 0, seconds: 0 } });
  });
});
