import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { fillJson } from '../../sandbox/exchange-routes.js';
import { plainOf } from '../../sandbox/fills.js';
import { toPlain } from '../../sandbox/fixed.js';
import type { FillRecord } from '../../sandbox/model.js';
import { writeJson } from '../../sandbox/wire.js';

// /fills pages are written by a direct formatter (fillText): every page must be byte for byte
// the straightforward writeJson(fillJson(record)) of the fills it lists.
describe('fills pages = the straightforward formatter', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({
      seed: 11,
      days: 3,
      exchangeOrdersPerDay: 300,
      fillsPerOrder: 3,
      ordersPerDay: 5,
      depositsPerDay: 2,
      withdrawalsPerDay: 2,
      discrepancies: true,
      faults: 'none',
      now: new Date('2026-03-04T10:00:00Z'),
    });
  });
  afterAll(() => sb?.close());

  async function checkAllPages(query: (from: string) => string): Promise<number> {
    const byId = new Map<string, FillRecord>(sb.data.fills().map((f) => [f.execId, f]));
    let from = '0';
    let n = 0;
    for (;;) {
      const res = await fetch(`${sb.env.EXCHANGE_API_URL}/fills?${query(from)}`, {
        headers: { 'X-API-Token': sb.env.EXCHANGE_API_TOKEN! },
      });
      const body = await res.text();
      const ids = (JSON.parse(body) as Array<{ execId: string | number }>).map((x) => String(x.execId));
      expect(body).toBe(writeJson(ids.map((id) => fillJson(byId.get(id)!))));
      n += ids.length;
      if (ids.length < 200) return n;
      from = String(Math.max(...ids.map(Number)) + 1);
    }
  }

  it('every page, planted cases included, then after their fixes', async () => {
    const total = sb.data.fillCount();
    expect(total).toBeGreaterThan(1000);
    expect(await checkAllPages((from) => `limit=200&fromExecId=${from}`)).toBe(total);
    sb.setOption('fillsOrder', 'oldest-first');
    expect(await checkAllPages((from) => `limit=200&fromExecId=${from}`)).toBe(total);
    sb.fixDiscrepancy('E_FEE_RATE');
    sb.fixDiscrepancy('E_SYMBOL_RULES');
    expect(await checkAllPages((from) => `limit=200&fromExecId=${from}`)).toBe(total);
    const res = await fetch(`${sb.env.EXCHANGE_API_URL}/fills?limit=1000&symbol=BTC-USD`, {
      headers: { 'X-API-Token': sb.env.EXCHANGE_API_TOKEN! },
    });
    const body = await res.text();
    const byId = new Map<string, FillRecord>(sb.data.fills().map((f) => [f.execId, f]));
    const ids = (JSON.parse(body) as Array<{ execId: string | number }>).map((x) => String(x.execId));
    expect(ids.length).toBeGreaterThan(0);
    expect(body).toBe(writeJson(ids.map((id) => fillJson(byId.get(id)!))));
  });

  it('plainOf = toPlain of the BigInt product', () => {
    const cases: Array<[number, number, number]> = [
      [0, 1, 2],
      [5, 1, 0],
      [-5, 1, 0],
      [-50, 1, 2],
      [1, 1, 8],
      [123456789, 5, 1],
      [100, 1, 2],
      [2 ** 52, 3, 4],
      [9007199254740991, 1, 18],
      [-1, 1, 3],
      [10, 10, 0],
    ];
    for (let k = 0; k < 2000; k++) cases.push([Math.floor(Math.sin(k) * 1e9), 1 + (k % 7), k % 12]);
    for (const [a, b, s] of cases)
      expect(plainOf(a, b, s), `${a} ${b} ${s}`).toBe(toPlain({ v: BigInt(a) * BigInt(b), s }));
  });
});
