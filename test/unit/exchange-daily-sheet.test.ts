import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import type { ExchangeDailyAgg } from '../../src/domain/index.js';
import { isAmount, isDay, type Cell } from '../../src/report/cells.js';
import { exchangeDailyRows, exchangeDailySpec } from '../../src/report/exchange-daily-sheet.js';
import { Precision } from '../../src/report/precision.js';
import { SHEET } from '../../src/report/sheets.js';
import { UsdRates } from '../../src/report/usd-rates.js';

const D = (text: string) => new Decimal(text);

/** A cell as text a test can compare: an amount as its exact value @ its decimals, a day as its text. */
const plain = (c: Cell) => (isAmount(c) ? `${c.value.toFixed()}@${c.dp}` : isDay(c) ? `day ${c.value}` : c);

// ETH-EUR from the symbols snapshot; BTC-USDT only by its name (8 decimals for both crypto currencies).
const precision = new Precision({
  partner: new Map([['EUR', { precision: 2, type: 'FIAT' }]]),
  symbols: new Map([['ETH-EUR', { base: 'ETH', counter: 'EUR', baseScale: 6, counterScale: 2, priceScale: 2 }]]),
});
// USDT and SOL have no rate.
const rates = new UsdRates({
  balances: [
    { currency: 'EUR', rate: D('1.1') },
    { currency: 'ETH', rate: D('2000') },
    { currency: 'BTC', rate: D('50000') },
  ],
});

/** Lists out of the sheet's order, so the rows' order is the builder's. */
const agg: ExchangeDailyAgg = {
  fills: [
    { day: '2026-11-02', symbol: 'ETH-EUR', fills: 1, qty: D('0.5'), notional: D('1000.25'), fees: D('1') },
    { day: '2026-11-01', symbol: 'ETH-EUR', fills: 3, qty: D('1.5'), notional: D('3000.5'), fees: D('3.005') },
    { day: '2026-11-01', symbol: 'BTC-USDT', fills: 2, qty: D('0.01'), notional: D('600'), fees: D('0.6') },
  ],
  deposits: [
    { day: '2026-11-01', currency: 'EUR', count: 2, completed: 1, amount: D('500') },
    { day: '2026-11-01', currency: 'BTC', count: 1, completed: 0, amount: D('0') },
  ],
  withdrawals: [
    { day: '2026-11-02', currency: 'SOL', count: 1, debited: 1, amount: D('10'), fee: D('0.01') },
    { day: '2026-11-01', currency: 'EUR', count: 2, debited: 1, amount: D('1000'), fee: D('1.5') },
  ],
};

describe('Exchange daily sheet', () => {
  it('is one table of its own name, without an "Open breaks" column', () => {
    expect(exchangeDailySpec.name).toBe(SHEET.exchangeDaily);
    expect(exchangeDailySpec.name).toBe('Exchange daily');
    expect(exchangeDailySpec.columns.map((c) => [c.header, c.kind])).toEqual([
      ['Day (UTC)', 'day'],
      ['Movement', 'text'],
      ['Symbol or currency', 'text'],
      ['Count', 'int'],
      ['Settled', 'int'],
      ['Quantity', 'amount'],
      ['Quantity currency', 'text'],
      ['Volume', 'amount'],
      ['Volume currency', 'text'],
      ['Fees', 'amount'],
      ['Fee currency', 'text'],
      ['Fees (USD)', 'amount'],
    ]);
  });

  it('lists each day by movement (fills, deposits, withdrawals), then symbol or currency', () => {
    const rows = exchangeDailyRows(agg, precision, rates, 'counter');
    expect(rows.map((r) => r.cells.slice(0, 3).map(plain))).toEqual([
      ['day 2026-11-01', 'Fills', 'BTC-USDT'],
      ['day 2026-11-01', 'Fills', 'ETH-EUR'],
      ['day 2026-11-01', 'Deposits', 'BTC'],
      ['day 2026-11-01', 'Deposits', 'EUR'],
      ['day 2026-11-01', 'Withdrawals', 'EUR'],
      ['day 2026-11-02', 'Fills', 'ETH-EUR'],
      ['day 2026-11-02', 'Withdrawals', 'SOL'],
    ]);
    for (const r of rows) expect(r.cells).toHaveLength(exchangeDailySpec.columns.length);
  });

  it('shows each amount at its currency decimals, fees in the counter currency and in USD to the cent', () => {
    const rows = exchangeDailyRows(agg, precision, rates, 'counter').map((r) => r.cells.map(plain));
    // notional at the quantity's plus the price's decimals (6 + 2); 3.005 EUR x 1.1 = 3.3055 -> 3.31 half-up
    expect(rows[1]).toEqual([
      'day 2026-11-01',
      'Fills',
      'ETH-EUR',
      3,
      3,
      '1.5@6',
      'ETH',
      '3000.5@8',
      'EUR',
      '3.005@2',
      'EUR',
      '3.31@2',
    ]);
    // a deposit not COMPLETED is counted, not summed; a deposit has no volume nor fee
    expect(rows[2]).toEqual(['day 2026-11-01', 'Deposits', 'BTC', 1, 0, '0@8', 'BTC', null, null, null, null, null]);
    expect(rows[3]).toEqual(['day 2026-11-01', 'Deposits', 'EUR', 2, 1, '500@2', 'EUR', null, null, null, null, null]);
    // a withdrawal's fee is in its own currency
    expect(rows[4]).toEqual([
      'day 2026-11-01',
      'Withdrawals',
      'EUR',
      2,
      1,
      '1000@2',
      'EUR',
      null,
      null,
      '1.5@2',
      'EUR',
      '1.65@2',
    ]);
  });

  it('leaves the USD fee empty where the fee currency has no rate, never a guess', () => {
    const rows = exchangeDailyRows(agg, precision, rates, 'counter').map((r) => r.cells.map(plain));
    // BTC-USDT by its name alone: 8 decimals for BTC and USDT, notional 8 + 8; USDT has no rate
    expect(rows[0]).toEqual([
      'day 2026-11-01',
      'Fills',
      'BTC-USDT',
      2,
      2,
      '0.01@8',
      'BTC',
      '600@16',
      'USDT',
      '0.6@8',
      'USDT',
      null,
    ]);
    expect(rows[6]!.slice(9)).toEqual(['0.01@8', 'SOL', null]);
  });

  it('with exchange.feeCurrency = base, fill fees are in the base currency at its decimals', () => {
    const rows = exchangeDailyRows(agg, precision, rates, 'base').map((r) => r.cells.map(plain));
    expect(rows[1]!.slice(9)).toEqual(['3.005@6', 'ETH', '6010@2']);
    expect(rows[0]!.slice(9)).toEqual(['0.6@8', 'BTC', '30000@2']);
    // deposits and withdrawals do not depend on it
    expect(rows[4]!.slice(9)).toEqual(['1.5@2', 'EUR', '1.65@2']);
  });

  it('has no rows for a period without movements', () => {
    expect(exchangeDailyRows({ fills: [], deposits: [], withdrawals: [] }, precision, rates, 'counter')).toEqual([]);
  });
});
