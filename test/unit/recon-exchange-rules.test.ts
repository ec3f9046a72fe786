import { describe, expect, it } from 'vitest';
import { checkDepositAmount, checkDepositMissing, matchDeposit, ourAddresses } from '../../src/rules/cross-rules.js';
import { checkFeeRate, checkFillAvgPx, checkFillOrphan, checkFillQty, checkFillSymbolRules, checkOrderSize, ratesForDay } from '../../src/rules/fill-rules.js';
import { checkBeneficiary, checkDepositStale, checkWithdrawalStale } from '../../src/rules/payment-rules.js';
import { d, makeDeposit, makeFill, makeOrder, makeOrderAgg, makeSymbol, makeWithdrawal, NOW } from './recon-factories.js';

const failures = (v: unknown) => (Array.isArray(v) ? v : []);

describe('X_DEPOSIT_MISSING / X_DEPOSIT_AMOUNT', () => {
  const ours = ourAddresses(['0xWALLET:tag'], ['0xOURS:memo']);
  it('our addresses are compared without the :tag suffix', () => {
    expect(ours).toEqual(new Set(['0xWALLET', '0xOURS']));
  });
  it('matches by transaction hash and compares amount exactly (18 decimals)', () => {
    const o = makeOrder();
    const dep = matchDeposit(o, [makeDeposit()]);
    expect(checkDepositMissing(o, ours, dep)).toEqual([]);
    expect(checkDepositAmount(o, ours, dep)).toEqual([]);
    const off = makeDeposit({ amount: d('0.031234567890123457') });
    expect(failures(checkDepositAmount(o, ours, off))[0]).toMatchObject({ expected: '0.031234567890123456', actual: '0.031234567890123457', difference: '0.000000000000000001', currency: 'ETH' });
    expect(failures(checkDepositAmount(o, ours, makeDeposit({ currency: 'USDT' })))[0]).toMatchObject({ expected: 'ETH', actual: 'USDT' });
  });
  it('a COMPLETED BUY to our tagged address without a deposit is missing', () => {
    const o = makeOrder({ targetWalletAddress: '0xWALLET:999' });
    expect(failures(checkDepositMissing(o, ours, matchDeposit(o, [])))[0]).toMatchObject({ expected: '0.031234567890123456', actual: null, currency: 'ETH' });
  });
  it('does not apply to other wallets, SELL, unsettled or hashless orders', () => {
    expect(checkDepositMissing(makeOrder({ targetWalletAddress: '0xsomeoneelse' }), ours, undefined)).toBe('n/a');
    expect(checkDepositMissing(makeOrder({ targetWalletAddress: '0xours' }), ours, undefined)).toBe('n/a'); // case-sensitive
    expect(checkDepositMissing(makeOrder({ orderType: 'SELL' }), ours, undefined)).toBe('n/a');
    expect(checkDepositMissing(makeOrder({ orderState: 'WITHDRAWING' }), ours, undefined)).toBe('n/a');
    expect(checkDepositMissing(makeOrder({ transactionHash: null }), ours, undefined)).toBe('n/a');
  });
  it('prefers the deposit that agrees when a hash credits several', () => {
    const o = makeOrder();
    expect(matchDeposit(o, [makeDeposit({ depositId: 'a', amount: d('1') }), makeDeposit({ depositId: 'b' })])?.depositId).toBe('b');
  });
});

describe('E_FILL_QTY', () => {
  it('sum of fills equals cumQty exactly', () => {
    expect(checkFillQty(makeOrderAgg())).toEqual([]);
    expect(failures(checkFillQty(makeOrderAgg({ fillQty: d('1.500000000000000001') })))[0]).toMatchObject({ expected: '1.5', actual: '1.500000000000000001', difference: '0.000000000000000001' });
    expect(failures(checkFillQty(makeOrderAgg({ cumQty: null })))[0]).toMatchObject({ expected: '0' });
  });
  it('leaves orphans to E_FILL_ORPHAN', () => expect(checkFillQty(makeOrderAgg({ found: false }))).toBe('n/a'));
});

describe('E_FILL_AVGPX', () => {
  const sym = makeSymbol(); // increment 0.01: tolerance 0.005
  it('passes exactly at half an increment and fails one unit over', () => {
    expect(checkFillAvgPx(makeOrderAgg({ avgPx: d('2000.015') }), sym)).toEqual([]);
    expect(checkFillAvgPx(makeOrderAgg({ avgPx: d('2000.005') }), sym)).toEqual([]);
    expect(failures(checkFillAvgPx(makeOrderAgg({ avgPx: d('2000.015000000000000001') }), sym))[0]).toMatchObject({ actual: '2000.01', difference: '-0.005000000000000001' });
  });
  it('decides on the exact quotient and reports the VWAP to 6 decimals beyond the increment', () => {
    // 6000.1 / 3 = 2000.0333...: a non-terminating quotient
    const agg = makeOrderAgg({ fillQty: d('3'), cumQty: d('3'), fillNotional: d('6000.1'), avgPx: d('2000.02') });
    expect(failures(checkFillAvgPx(agg, sym))[0]).toMatchObject({ expected: '2000.02', actual: '2000.03333333', difference: '0.01333333' });
    expect(checkFillAvgPx(makeOrderAgg({ fillQty: d('3'), cumQty: d('3'), fillNotional: d('6000.1'), avgPx: d('2000.03') }), sym)).toEqual([]);
  });
  it('skipped when the symbol is unknown; n/a without avgPx or fills', () => {
    expect(checkFillAvgPx(makeOrderAgg(), undefined)).toBe('skipped');
    expect(checkFillAvgPx(makeOrderAgg({ avgPx: null }), sym)).toBe('n/a');
    expect(checkFillAvgPx(makeOrderAgg({ fillQty: d(0) }), sym)).toBe('n/a');
  });
});

describe('E_FILL_ORPHAN', () => {
  it('a fill whose order is not stored', () => {
    expect(checkFillOrphan(makeFill())).toEqual([]);
    expect(failures(checkFillOrphan(makeFill({ orderFound: false, orderNotFound: true })))[0]).toMatchObject({ check: 'order 11223344556677 of the fill is not stored', expected: null, actual: null, note: 'GET /orders/{id} answered 404' });
  });
});

describe('E_FEE_RATE', () => {
  const schedule = [
    { fetchedAt: new Date('2026-11-01T00:00:00Z'), makerRate: d('0.0008'), takerRate: d('0.001') },
    { fetchedAt: new Date('2026-11-10T23:59:59Z'), makerRate: d('0.0004'), takerRate: d('0.0006') },
  ];
  const cfg = { feeCurrency: 'counter' as const, tolerance: null };
  it('uses the latest snapshot fetched by the end of the fill day, else the earliest', () => {
    expect(ratesForDay(schedule, new Date('2026-11-10T01:00:00Z'))?.takerRate.toString()).toBe('0.0006');
    expect(ratesForDay(schedule, new Date('2026-11-09T23:00:00Z'))?.takerRate.toString()).toBe('0.001');
    expect(ratesForDay(schedule, new Date('2026-10-01T00:00:00Z'))?.takerRate.toString()).toBe('0.001');
  });
  it('passes on maker or taker within half a unit of the counter scale', () => {
    const rates = schedule[0]!;
    // notional 1000.005: taker 1.000005, maker 0.800004; tolerance 0.005
    expect(checkFeeRate(makeFill(), rates, makeSymbol(), cfg)).toEqual([]);
    expect(checkFeeRate(makeFill({ fee: d('0.800004') }), rates, makeSymbol(), cfg)).toEqual([]);
    expect(checkFeeRate(makeFill({ fee: d('1.005005') }), rates, makeSymbol(), cfg)).toEqual([]);
    const over = failures(checkFeeRate(makeFill({ fee: d('1.005005000000000001') }), rates, makeSymbol(), cfg));
    expect(over[0]).toMatchObject({ expected: '1.000005', actual: '1.005005000000000001', currency: 'USD' });
  });
  it('base fee currency and a configured tolerance', () => {
    const rates = schedule[0]!;
    expect(checkFeeRate(makeFill({ fee: d('0.0005') }), rates, makeSymbol(), { feeCurrency: 'base', tolerance: d('0') })).toEqual([]);
    expect(failures(checkFeeRate(makeFill({ fee: d('0.000500000000000001') }), rates, makeSymbol(), { feeCurrency: 'base', tolerance: d('0') }))[0]).toMatchObject({ currency: 'ETH' });
  });
  it('unknown symbol: scale 8', () => {
    expect(checkFeeRate(makeFill({ fee: d('1.000005005') }), schedule[0]!, undefined, cfg)).toEqual([]);
    expect(failures(checkFeeRate(makeFill({ fee: d('1.000005006') }), schedule[0]!, undefined, cfg))[0]).toMatchObject({ currency: 'USD' });
  });
});

describe('E_SYMBOL_RULES', () => {
  it('price on the increment (0 exempt) and qty on the lot size', () => {
    expect(checkFillSymbolRules(makeFill({ price: d('0') }), makeSymbol())).toEqual([]);
    const v = failures(checkFillSymbolRules(makeFill({ price: d('2000.015'), qty: d('0.00005') }), makeSymbol()));
    expect(v.map((f) => f.expected)).toEqual(['2000.02', '0.0001']);
    expect(checkFillSymbolRules(makeFill(), undefined)).toBe('skipped');
  });
  it('order size within min/max (inclusive); max 0 means no limit', () => {
    expect(checkOrderSize(makeOrderAgg({ cumQty: d('0.0005'), leavesQty: d('0.0005') }), makeSymbol())).toEqual([]);
    expect(failures(checkOrderSize(makeOrderAgg({ cumQty: d('0.0005'), leavesQty: d('0.000499999999999999') }), makeSymbol()))).toHaveLength(1);
    expect(checkOrderSize(makeOrderAgg({ cumQty: d('1000') }), makeSymbol())).toEqual([]);
    expect(failures(checkOrderSize(makeOrderAgg({ cumQty: d('1000.0001') }), makeSymbol()))).toHaveLength(1);
    expect(checkOrderSize(makeOrderAgg({ cumQty: d('1000000') }), makeSymbol({ maxOrderSize: d(0) }))).toEqual([]);
  });
});

describe('E_STALE and E_WITHDRAWAL_BENEFICIARY', () => {
  const ago = (h: number) => new Date(NOW.getTime() - h * 3_600_000);
  it('UNCONFIRMED deposit / PENDING withdrawal past the configured age', () => {
    expect(checkDepositStale(makeDeposit({ state: 'UNCONFIRMED', timestamp: ago(24) }), NOW, 24)).toEqual([]);
    expect(failures(checkDepositStale(makeDeposit({ state: 'UNCONFIRMED', timestamp: new Date(ago(24).getTime() - 1) }), NOW, 24))).toHaveLength(1);
    expect(checkDepositStale(makeDeposit({ timestamp: ago(100) }), NOW, 24)).toBe('n/a');
    expect(failures(checkWithdrawalStale(makeWithdrawal({ state: 'PENDING', timestamp: ago(49) }), NOW, 48))).toHaveLength(1);
    expect(checkWithdrawalStale(makeWithdrawal({ state: 'PENDING', timestamp: ago(47) }), NOW, 48)).toEqual([]);
  });
  it('beneficiary must be on the whitelist', () => {
    expect(checkBeneficiary(makeWithdrawal(), new Set(['wl-1']))).toEqual([]);
    expect(failures(checkBeneficiary(makeWithdrawal({ beneficiary: 'wl-9' }), new Set(['wl-1'])))[0]).toMatchObject({ actual: 'wl-9' });
  });
});
