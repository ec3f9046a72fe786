import { Decimal } from '../../src/decimal/decimal.js';
import { figureText, type Figure } from '../../src/domain/index.js';
import type { EngineConfig, ReferenceData } from '../../src/rules/engine.js';
import { balanceRollFindings } from '../../src/rules/balance-roll.js';
import { coverageFindings, quarantineFindings, unsyncedDayFindings } from '../../src/rules/sync-rules.js';
import { breaksOf } from '../../src/rules/tally.js';
import type {
  BalanceSnapshot,
  Break,
  Deposit,
  ExchangeOrderAgg,
  Fill,
  PartnerCurrency,
  PartnerOrder,
  SymbolRules,
  Withdrawal,
} from '../../src/domain/index.js';

export const d = (v: string | number) => new Decimal(v);

export const NOW = new Date('2026-11-20T12:00:00Z');

/** A consistent EUR -> ETH BUY order; override what the case is about. */
export function makeOrder(overrides: Partial<PartnerOrder> = {}): PartnerOrder {
  return {
    orderId: 'o-1',
    orderType: 'BUY',
    createdAt: new Date('2026-11-10T10:00:00Z'),
    createdAtText: '2026-11-10T10:00:00.000Z',
    orderState: 'COMPLETED',
    orderStateUpdatedAt: new Date('2026-11-10T10:05:00Z'),
    orderStateUpdatedAtText: '2026-11-10T10:05:00.123456789Z',
    inputCurrency: 'EUR',
    inputAmount: d('100'),
    outputCurrency: 'ETH',
    outputAmount: d('0.031234567890123456'),
    amountUsd: d('108'),
    processingFee: d('2.5'),
    processingFeeUsd: d('2.7'),
    partnerFee: d('1'),
    partnerFeeUsd: d('1.08'),
    networkFee: d('0.5'),
    networkFeeUsd: d('0.54'),
    targetWalletAddress: '0xOURS',
    transactionHash: '0xhash1',
    notFound: false,
    ...overrides,
  };
}

export function makeCurrency(overrides: Partial<PartnerCurrency> = {}): PartnerCurrency {
  return { code: 'EUR', type: 'FIAT', precision: 2, minBuyAmount: d('20'), maxBuyAmount: d('5000'), ...overrides };
}

export function currencies(...list: PartnerCurrency[]): Map<string, PartnerCurrency> {
  const all = list.length
    ? list
    : [
        makeCurrency(),
        makeCurrency({ code: 'ETH', type: 'CRYPTO', precision: 18, minBuyAmount: null, maxBuyAmount: null }),
        makeCurrency({ code: 'USD', precision: 2 }),
      ];
  return new Map(all.map((c) => [c.code, c]));
}

export function makeOrderAgg(overrides: Partial<ExchangeOrderAgg> = {}): ExchangeOrderAgg {
  return {
    exOrdId: '11223344556677',
    found: true,
    symbol: 'ETH-USD',
    side: 'BUY',
    ordStatus: 'FILLED',
    cumQty: d('1.5'),
    leavesQty: d('0'),
    avgPx: d('2000.01'),
    fillCount: 2,
    fillQty: d('1.5'),
    fillNotional: d('3000.015'),
    ...overrides,
  };
}

export function makeFill(overrides: Partial<Fill> = {}): Fill {
  return {
    execId: '9007199254740993',
    exOrdId: '11223344556677',
    side: 'BUY',
    symbol: 'ETH-USD',
    price: d('2000.01'),
    qty: d('0.5'),
    fee: d('1.000005'), // 0.5 x 2000.01 x 0.001 (taker)
    timestamp: new Date('2026-11-10T10:00:00Z'),
    orderFound: true,
    orderNotFound: false,
    ordType: 'LIMIT',
    orderSide: 'BUY',
    orderSymbol: 'ETH-USD',
    ...overrides,
  };
}

export function makeSymbol(overrides: Partial<SymbolRules> = {}): SymbolRules {
  return {
    symbol: 'ETH-USD',
    baseCurrency: 'ETH',
    baseScale: 8,
    counterCurrency: 'USD',
    counterScale: 2,
    priceIncrement: d('0.01'),
    lotSize: d('0.0001'),
    minOrderSize: d('0.001'),
    maxOrderSize: d('1000'),
    ...overrides,
  };
}

export function makeDeposit(overrides: Partial<Deposit> = {}): Deposit {
  return {
    depositId: 'dep-1',
    amount: d('0.031234567890123456'),
    currency: 'ETH',
    address: '0xOURS:memo',
    txHash: '0xhash1',
    state: 'COMPLETED',
    timestamp: new Date('2026-11-10T10:10:00Z'),
    firstSeenAt: new Date('2026-11-10T11:00:00Z'),
    ...overrides,
  };
}

export function makeWithdrawal(overrides: Partial<Withdrawal> = {}): Withdrawal {
  return {
    withdrawalId: 'wd-1',
    amount: d('0.5'),
    fee: d('0.001'),
    currency: 'ETH',
    beneficiary: 'wl-1',
    state: 'COMPLETED',
    timestamp: new Date('2026-11-10T12:00:00Z'),
    firstSeenAt: new Date('2026-11-10T12:30:00Z'),
    ...overrides,
  };
}

export function makeSnapshot(id: string, at: string, lines: Record<string, string>): BalanceSnapshot {
  return {
    id,
    fetchedAt: new Date(at),
    balances: Object.entries(lines).map(([currency, balance]) => ({
      currency,
      balance: d(balance),
      available: d(balance),
      balanceLocal: d(balance),
      rate: d(1),
    })),
  };
}

export function makeEngineConfig(overrides: Partial<EngineConfig> = {}): EngineConfig {
  return {
    now: NOW,
    usdTolerance: d('0.01'),
    partnerFeeRate: null,
    webhooksEnabled: false,
    staleAfterHours: { partnerOrder: 24, deposit: 24, withdrawal: 24 },
    feeCurrency: 'counter',
    exchangeFeeTolerance: null,
    balanceTolerance: d('0'),
    balanceLocalTolerance: d('0.01'),
    ...overrides,
  };
}

export function makeReference(overrides: Partial<ReferenceData> = {}): ReferenceData {
  return {
    currencies: currencies(),
    symbols: new Map([['ETH-USD', makeSymbol()]]),
    fees: [{ fetchedAt: new Date('2026-11-01T00:00:00Z'), makerRate: d('0.0008'), takerRate: d('0.001') }],
    whitelist: new Set(['wl-1']),
    balanceSnapshotCount: 2,
    ...overrides,
  };
}

/**
 * A verdict's failures (or a break) with its figures as exact text, as the break table stores them: the rules report
 * Decimals, the tests compare the text.
 */
export function failures(v: unknown): Array<Record<string, unknown>> {
  return Array.isArray(v) ? v.map(asText) : [];
}

export function asText<T extends object>(f: T): T {
  const out: Record<string, unknown> = { ...(f as Record<string, unknown>) };
  for (const k of ['expected', 'actual', 'difference']) if (k in out) out[k] = figureText((out[k] ?? null) as Figure);
  return out as T;
}

/** A stored break: an open P_FEE_USD on partner order o-1 (expected 1.00 EUR, actual 1.50), first seen in run r1. */
export function makeStoredBreak(overrides: Partial<Break> = {}): Break {
  const at = new Date('2026-11-21T02:00:00Z');
  return {
    code: 'P_FEE_USD',
    key: 'o-1',
    entity: 'partnerOrder',
    severity: 'medium',
    currency: 'EUR',
    unit: 'amount',
    expected: '1.00',
    actual: '1.50',
    difference: '0.50',
    message: 'fee USD twin differs',
    detail: null,
    day: null,
    status: 'open',
    firstSeenRun: 'r1',
    firstSeenAt: at,
    lastSeenRun: 'r1',
    lastSeenAt: at,
    resolvedRun: null,
    resolvedAt: null,
    reopenedCount: 0,
    ...overrides,
  };
}

/** The breaks of the set checks' findings, as the engine makes them (each rule's descriptor). */
export const balanceRollBreaks = (...args: Parameters<typeof balanceRollFindings>) =>
  breaksOf('E_BALANCE_ROLL', balanceRollFindings(...args));
export const coverageBreaks = (...args: Parameters<typeof coverageFindings>) =>
  breaksOf('S_COVERAGE', coverageFindings(...args));
export const quarantineBreaks = (...args: Parameters<typeof quarantineFindings>) =>
  breaksOf('S_QUARANTINE', quarantineFindings(...args));
export function unsyncedDayBreaks(...args: Parameters<typeof unsyncedDayFindings>) {
  const { findings, checked } = unsyncedDayFindings(...args);
  return { breaks: breaksOf('S_COVERAGE', findings), checked };
}
