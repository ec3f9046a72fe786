import { describe, expect, it } from 'vitest';
import {
  awaitsDeposit,
  checkDepositAmount,
  checkDepositMissing,
  matchDeposit,
  ourAddresses,
  settleDeposits,
} from '../../src/rules/cross-rules.js';
import {
  checkFeeRate,
  checkFillAvgPx,
  checkFillOrphan,
  checkFillQty,
  checkFillSymbolRules,
  checkOrderSize,
  ratesForDay,
  takesLiquidity,
} from '../../src/rules/fill-rules.js';
import {
  checkExchangeOrders,
  checkPartnerBatch,
  orderPrefilter,
  type EngineConfig,
  type ReferenceData,
} from '../../src/rules/engine.js';
import { checkOrderStatus, ORDER_STATUS_COULD_FAIL } from '../../src/rules/order-status-rules.js';
import { RuleTally } from '../../src/rules/tally.js';
import { checkBeneficiary, checkDepositStale, checkWithdrawalStale } from '../../src/rules/payment-rules.js';
import {
  d,
  failures,
  makeDeposit,
  makeEngineConfig,
  makeFill,
  makeOrder,
  makeOrderAgg,
  makeSymbol,
  makeWithdrawal,
  NOW,
} from './recon-factories.js';

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
    expect(failures(checkDepositAmount(o, ours, off))[0]).toMatchObject({
      expected: '0.031234567890123456',
      actual: '0.031234567890123457',
      difference: '0.000000000000000001',
      currency: 'ETH',
    });
    expect(failures(checkDepositAmount(o, ours, makeDeposit({ currency: 'USDT' })))[0]).toMatchObject({
      expected: 'ETH',
      actual: 'USDT',
    });
  });
  it('a COMPLETED BUY to our tagged address without a deposit is missing', () => {
    const o = makeOrder({ targetWalletAddress: '0xWALLET:999' });
    expect(failures(checkDepositMissing(o, ours, matchDeposit(o, [])))[0]).toMatchObject({
      expected: '0.031234567890123456',
      actual: null,
      currency: 'ETH',
    });
  });
  it('does not apply to other wallets, SELL, unsettled or hashless orders', () => {
    expect(checkDepositMissing(makeOrder({ targetWalletAddress: '0xsomeoneelse' }), ours, undefined)).toBe('n/a');
    expect(checkDepositMissing(makeOrder({ targetWalletAddress: '0xours' }), ours, undefined)).toBe('n/a'); // case-sensitive
    expect(checkDepositMissing(makeOrder({ orderType: 'SELL' }), ours, undefined)).toBe('n/a');
    expect(checkDepositMissing(makeOrder({ orderState: 'WITHDRAWING' }), ours, undefined)).toBe('n/a');
    expect(checkDepositMissing(makeOrder({ transactionHash: null }), ours, undefined)).toBe('n/a');
  });
  it('waits for a later run when the order completed after the deposits were read, never when one settles it', () => {
    // makeOrder completes at 2026-11-10T10:05:00Z.
    const o = makeOrder();
    const completed = Date.parse('2026-11-10T10:05:00Z');
    expect(awaitsDeposit(o, ours, undefined, completed - 1)).toBe(true);
    expect(checkDepositMissing(o, ours, undefined, completed - 1)).toBe('skipped');
    // Read at the very instant it completed, or later: judged now.
    expect(awaitsDeposit(o, ours, undefined, completed)).toBe(false);
    expect(failures(checkDepositMissing(o, ours, undefined, completed))).toHaveLength(1);
    // Unknown read (never synced): judged now.
    expect(awaitsDeposit(o, ours, undefined, null)).toBe(false);
    expect(failures(checkDepositMissing(o, ours, undefined))).toHaveLength(1);
    // A deposit settles it whatever the read; an order not paid to us waits for nothing.
    expect(awaitsDeposit(o, ours, makeDeposit(), completed - 1)).toBe(false);
    expect(awaitsDeposit(makeOrder({ orderType: 'SELL' }), ours, undefined, completed - 1)).toBe(false);
  });
  it('prefers the deposit that agrees when a hash credits several', () => {
    const o = makeOrder();
    expect(
      matchDeposit(o, [makeDeposit({ depositId: 'a', amount: d('1') }), makeDeposit({ depositId: 'b' })])?.depositId,
    ).toBe('b');
  });
});

describe('E_FILL_QTY', () => {
  it('sum of fills equals cumQty exactly', () => {
    expect(checkFillQty(makeOrderAgg())).toEqual([]);
    expect(failures(checkFillQty(makeOrderAgg({ fillQty: d('1.500000000000000001') })))[0]).toMatchObject({
      expected: '1.5',
      actual: '1.500000000000000001',
      difference: '0.000000000000000001',
    });
    expect(failures(checkFillQty(makeOrderAgg({ cumQty: null })))[0]).toMatchObject({ expected: '0' });
  });
  it('leaves orphans to E_FILL_ORPHAN', () => expect(checkFillQty(makeOrderAgg({ found: false }))).toBe('n/a'));
});

describe('E_ORDER_STATUS', () => {
  it('a REJECTED order has no filled quantity and no fill; a FILLED one nothing left open', () => {
    expect(checkOrderStatus(makeOrderAgg())).toEqual([]);
    const none = { cumQty: d('0'), fillQty: d('0'), fillCount: 0, fillNotional: d('0'), avgPx: null };
    expect(checkOrderStatus(makeOrderAgg({ ordStatus: 'REJECTED', leavesQty: d('1.5'), ...none }))).toEqual([]);
    const rejected = failures(checkOrderStatus(makeOrderAgg({ ordStatus: 'REJECTED', leavesQty: d('1.5') })));
    expect(rejected).toMatchObject([
      { check: 'REJECTED with a filled quantity (cumQty)', expected: '0', actual: '1.5', difference: '1.5' },
      { check: 'REJECTED with 2 stored fills', expected: '0', actual: '1.5', facts: { state: 'REJECTED' } },
    ]);
    const open = failures(checkOrderStatus(makeOrderAgg({ leavesQty: d('0.000000000000000001') })));
    expect(open).toMatchObject([{ expected: '0', actual: '0.000000000000000001', facts: { state: 'FILLED' } }]);
  });
  it('CANCELED and EXPIRED orders may be filled in part; an order not stored is an orphan', () => {
    for (const ordStatus of ['CANCELED', 'EXPIRED', 'PART_FILLED', 'OPEN'])
      expect(checkOrderStatus(makeOrderAgg({ ordStatus, leavesQty: d('1') }))).toEqual([]);
    expect(checkOrderStatus(makeOrderAgg({ found: false }))).toBe('n/a');
  });
  it('is one break per order naming the exchange order, its figures a quantity of the base currency', () => {
    const tally = new RuleTally();
    const ref = { currencies: null, symbols: new Map([['ETH-USD', makeSymbol()]]), fees: null, whitelist: null };
    checkExchangeOrders(tally, makeEngineConfig(), { ...ref, balanceSnapshotCount: 0 }, [
      makeOrderAgg({ exOrdId: '7', leavesQty: d('0.1') }),
      makeOrderAgg({ exOrdId: '8' }),
    ]);
    const [b] = tally.breaks().filter((x) => x.code === 'E_ORDER_STATUS');
    expect(b).toMatchObject({ key: '7', entity: 'exchangeOrder', unit: 'amount', currency: 'ETH', severity: 'medium' });
    expect(tally.results().find((r) => r.code === 'E_ORDER_STATUS')).toMatchObject({ checked: 2, breaks: 1 });
    // The SQL prefilter keeps exactly the orders the rule could flag (rules-prefilter.test.ts runs it).
    expect(orderPrefilter(makeEngineConfig(), { ...ref, balanceSnapshotCount: 0 }).couldFail).toContainEqual(
      ORDER_STATUS_COULD_FAIL,
    );
  });
});

describe('E_FILL_AVGPX', () => {
  const sym = makeSymbol(); // increment 0.01: tolerance 0.005
  it('passes exactly at half an increment and fails one unit over', () => {
    expect(checkFillAvgPx(makeOrderAgg({ avgPx: d('2000.015') }), sym)).toEqual([]);
    expect(checkFillAvgPx(makeOrderAgg({ avgPx: d('2000.005') }), sym)).toEqual([]);
    expect(failures(checkFillAvgPx(makeOrderAgg({ avgPx: d('2000.015000000000000001') }), sym))[0]).toMatchObject({
      actual: '2000.01',
      difference: '-0.005000000000000001',
    });
  });
  it('decides on the exact quotient and reports the VWAP to 6 decimals beyond the increment', () => {
    // 6000.1 / 3 = 2000.0333...: a non-terminating quotient
    const agg = makeOrderAgg({ fillQty: d('3'), cumQty: d('3'), fillNotional: d('6000.1'), avgPx: d('2000.02') });
    expect(failures(checkFillAvgPx(agg, sym))[0]).toMatchObject({
      expected: '2000.02',
      actual: '2000.03333333',
      difference: '0.01333333',
    });
    expect(
      checkFillAvgPx(
        makeOrderAgg({ fillQty: d('3'), cumQty: d('3'), fillNotional: d('6000.1'), avgPx: d('2000.03') }),
        sym,
      ),
    ).toEqual([]);
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
    expect(failures(checkFillOrphan(makeFill({ orderFound: false, orderNotFound: true })))[0]).toMatchObject({
      check: 'order 11223344556677 of the fill is not stored',
      expected: null,
      actual: null,
      note: 'GET /orders/{id} answered 404',
    });
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
    expect(
      checkFeeRate(makeFill({ fee: d('0.0005') }), rates, makeSymbol(), { feeCurrency: 'base', tolerance: d('0') }),
    ).toEqual([]);
    expect(
      failures(
        checkFeeRate(makeFill({ fee: d('0.000500000000000001') }), rates, makeSymbol(), {
          feeCurrency: 'base',
          tolerance: d('0'),
        }),
      )[0],
    ).toMatchObject({ currency: 'ETH' });
  });
  it('unknown symbol: scale 8', () => {
    expect(checkFeeRate(makeFill({ fee: d('1.000005005') }), schedule[0]!, undefined, cfg)).toEqual([]);
    expect(failures(checkFeeRate(makeFill({ fee: d('1.000005006') }), schedule[0]!, undefined, cfg))[0]).toMatchObject({
      currency: 'USD',
    });
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
    expect(
      failures(
        checkOrderSize(makeOrderAgg({ cumQty: d('0.0005'), leavesQty: d('0.000499999999999999') }), makeSymbol()),
      ),
    ).toHaveLength(1);
    expect(checkOrderSize(makeOrderAgg({ cumQty: d('1000') }), makeSymbol())).toEqual([]);
    expect(failures(checkOrderSize(makeOrderAgg({ cumQty: d('1000.0001') }), makeSymbol()))).toHaveLength(1);
    expect(checkOrderSize(makeOrderAgg({ cumQty: d('1000000') }), makeSymbol({ maxOrderSize: d(0) }))).toEqual([]);
  });
});

describe('E_STALE and E_WITHDRAWAL_BENEFICIARY', () => {
  const ago = (h: number) => new Date(NOW.getTime() - h * 3_600_000);
  it('UNCONFIRMED deposit / PENDING withdrawal past the configured age', () => {
    expect(checkDepositStale(makeDeposit({ state: 'UNCONFIRMED', timestamp: ago(24) }), NOW, 24)).toEqual([]);
    expect(
      failures(
        checkDepositStale(makeDeposit({ state: 'UNCONFIRMED', timestamp: new Date(ago(24).getTime() - 1) }), NOW, 24),
      ),
    ).toHaveLength(1);
    expect(checkDepositStale(makeDeposit({ timestamp: ago(100) }), NOW, 24)).toBe('n/a');
    expect(
      failures(checkWithdrawalStale(makeWithdrawal({ state: 'PENDING', timestamp: ago(49) }), NOW, 48)),
    ).toHaveLength(1);
    expect(checkWithdrawalStale(makeWithdrawal({ state: 'PENDING', timestamp: ago(47) }), NOW, 48)).toEqual([]);
  });
  it('beneficiary must be on the whitelist', () => {
    expect(checkBeneficiary(makeWithdrawal(), new Set(['wl-1']))).toEqual([]);
    expect(failures(checkBeneficiary(makeWithdrawal({ beneficiary: 'wl-9' }), new Set(['wl-1'])))[0]).toMatchObject({
      actual: 'wl-9',
    });
  });
});

describe('issue 14: the fee that applies, orders without fills, one deposit per order', () => {
  const rates = { fetchedAt: new Date('2026-11-01T00:00:00Z'), makerRate: d('0.0008'), takerRate: d('0.001') };
  const cfg = { feeCurrency: 'counter' as const, tolerance: null };
  it('E_FEE_RATE: a MARKET or STOP fill took liquidity, so the maker rate alone is a break', () => {
    // notional 1000.005: taker 1.000005, maker 0.800004
    for (const ordType of ['MARKET', 'STOP']) {
      expect(checkFeeRate(makeFill({ ordType }), rates, makeSymbol(), cfg)).toEqual([]);
      const v = failures(checkFeeRate(makeFill({ ordType, fee: d('0.800004') }), rates, makeSymbol(), cfg));
      expect(v[0]).toMatchObject({
        expected: '1.000005',
        actual: '0.800004',
        difference: '-0.200001',
        currency: 'USD',
      });
      expect(v[0]!.check).toContain(`a ${ordType} order takes liquidity`);
    }
  });
  it('E_FEE_RATE: LIMIT, STOPLIMIT, an unknown type and an orphan fill keep either rate', () => {
    for (const ordType of ['LIMIT', 'STOPLIMIT', 'ICEBERG', null])
      expect(
        checkFeeRate(makeFill({ ordType, fee: d('0.800004') }), rates, makeSymbol(), cfg),
        String(ordType),
      ).toEqual([]);
    expect(
      checkFeeRate(makeFill({ ordType: null, orderFound: false, fee: d('0.800004') }), rates, makeSymbol(), cfg),
    ).toEqual([]);
    expect(takesLiquidity('market')).toBe(false); // the exchange spells its enums in capitals
  });
  it('E_FILL_QTY: an order with cumQty > 0 and no stored fill is a break (sum 0)', () => {
    const v = failures(
      checkFillQty(makeOrderAgg({ fillCount: 0, fillQty: d(0), fillNotional: d(0), cumQty: d('1.5') })),
    );
    expect(v[0]).toMatchObject({ expected: '1.5', actual: '0', difference: '-1.5' });
    expect(v[0]!.check).toContain('no fill stored');
  });
  it('X_DEPOSIT_MISSING: a REJECTED deposit settles nothing; an UNCONFIRMED one does', () => {
    const ours = new Set(['0xOURS']);
    const o = makeOrder();
    expect(matchDeposit(o, [makeDeposit({ state: 'REJECTED' })])).toBeUndefined();
    expect(
      failures(checkDepositMissing(o, ours, matchDeposit(o, [makeDeposit({ state: 'REJECTED' })])))[0],
    ).toMatchObject({ expected: '0.031234567890123456', actual: null });
    expect(checkDepositMissing(o, ours, matchDeposit(o, [makeDeposit({ state: 'UNCONFIRMED' })]))).toEqual([]);
    // A rejected deposit that agrees does not win over a credited one that does not.
    expect(
      matchDeposit(o, [
        makeDeposit({ depositId: 'a', state: 'REJECTED' }),
        makeDeposit({ depositId: 'b', amount: d('1') }),
      ])?.depositId,
    ).toBe('b');
  });
  it('X_DEPOSIT_MISSING: one deposit settles one order, the earliest created (then orderId) first', () => {
    const ours = new Set(['0xOURS']);
    const early = makeOrder({ orderId: 'o-b', createdAtText: '2026-11-10T10:00:00.000000001Z' });
    const late = makeOrder({ orderId: 'o-a', createdAtText: '2026-11-10T10:00:00.000000002Z' });
    const settled = settleDeposits([late, early], [makeDeposit()], ours);
    expect([...settled.keys()]).toEqual(['o-b']);
    const tie = settleDeposits([makeOrder({ orderId: 'o-2' }), makeOrder({ orderId: 'o-1' })], [makeDeposit()], ours);
    expect([...tie.keys()]).toEqual(['o-1']);
    // Two deposits on the hash: each order gets one, the agreeing one to the order it agrees with.
    const other = makeOrder({ orderId: 'o-c', createdAtText: '2026-11-09T00:00:00Z', outputAmount: d('2') });
    const two = settleDeposits(
      [early, other],
      [makeDeposit({ depositId: 'd1' }), makeDeposit({ depositId: 'd2', amount: d('2') })],
      ours,
    );
    expect(Object.fromEntries([...two].map(([k, v]) => [k, v.depositId]))).toEqual({ 'o-c': 'd2', 'o-b': 'd1' });
    // An order not paid to us claims nothing.
    expect([
      ...settleDeposits(
        [makeOrder({ orderId: 'o-0', createdAtText: '2026-11-01T00:00:00Z', targetWalletAddress: '0xelse' }), late],
        [makeDeposit()],
        ours,
      ).keys(),
    ]).toEqual(['o-a']);
  });
  it('X_DEPOSIT_MISSING in the engine: the claimant of another period takes the deposit first', () => {
    const cfg = {
      now: NOW,
      usdTolerance: d('0.01'),
      partnerFeeRate: null,
      webhooksEnabled: false,
      staleAfterHours: { partnerOrder: 24, deposit: 24, withdrawal: 24 },
      feeCurrency: 'counter',
      exchangeFeeTolerance: null,
      balanceTolerance: d(0),
      balanceLocalTolerance: d('0.01'),
    } as EngineConfig;
    const ref: ReferenceData = {
      currencies: null,
      symbols: null,
      fees: null,
      whitelist: null,
      balanceSnapshotCount: 0,
    };
    const mine = makeOrder({ orderId: 'o-now', createdAtText: '2026-11-10T10:00:00Z' });
    const earlier = makeOrder({ orderId: 'o-then', createdAtText: '2026-11-01T10:00:00Z' });
    const run = (claimants?: Map<string, (typeof mine)[]>) => {
      const tally = new RuleTally();
      checkPartnerBatch(tally, cfg, ref, {
        orders: [mine],
        depositsByTx: new Map([['0xhash1', [makeDeposit()]]]),
        ourAddresses: new Set(['0xOURS']),
        claimantsByTx: claimants,
      });
      return tally
        .breaks()
        .filter((b) => b.code.startsWith('X_'))
        .map((b) => `${b.code} ${b.key}`);
    };
    expect(run()).toEqual([]);
    expect(run(new Map([['0xhash1', [earlier, mine]]]))).toEqual(['X_DEPOSIT_MISSING o-now']);
  });
});
