import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import { detailText } from '../../src/report/break-text.js';
import { amountAtStake, breakSentence, ruleTitle } from '../../src/rules/describe.js';
import { atPrecision, unitWord } from '../../src/rules/words.js';
import { RULES, type RuleCode } from '../../src/rules/catalog.js';
import { toBreak, type BreakExtras } from '../../src/rules/tally.js';
import type { Failure } from '../../src/rules/types.js';
import { checkBalanceSanity } from '../../src/rules/balance-roll.js';
import { checkDepositStale, checkWithdrawalStale } from '../../src/rules/payment-rules.js';
import { checkFillSymbolRules, checkOrderSize } from '../../src/rules/fill-rules.js';
import { checkStale } from '../../src/rules/partner-rules.js';
import { BreakLinks, breakRow, dataSheetOf, keysBySheet, positionsIn } from '../../src/report/breaks-sheet.js';
import { rowPlace } from '../../src/report/cells.js';
import { Precision } from '../../src/report/precision.js';
import { UsdRates } from '../../src/report/usd-rates.js';
import { amountsAsReported, breakId, figureText, NO_WORKFLOW, type ReportedBreak } from '../../src/domain/index.js';
import {
  d,
  makeDeposit,
  makeFill,
  makeOrder,
  makeOrderAgg,
  makeSymbol,
  makeWithdrawal,
  NOW,
} from './recon-factories.js';

/** A break as a rule detects it and the break table stores it (figures as exact text). */
function stored(
  code: RuleCode,
  key: string,
  failures: Failure[],
  currency: string | null = null,
  extras?: BreakExtras,
) {
  const b = toBreak(code, key, failures, currency, extras);
  return {
    ...b,
    expected: figureText(b.expected),
    actual: figureText(b.actual),
    difference: figureText(b.difference),
  };
}
const fee = (over: Partial<Failure> = {}): Failure => ({
  check: 'partnerFeeUsd != partnerFee x amountUsd / inputAmount',
  expected: d('1.23'),
  actual: d('1.73'),
  difference: d('0.50'),
  ...over,
});
const verdict = (v: unknown) => v as Failure[];
const hoursAgo = (h: number) => new Date(NOW.getTime() - h * 3_600_000);

describe('rule titles', () => {
  it('every rule has a plain-English title, none the code itself, all different', () => {
    for (const r of RULES) {
      expect(r.title, r.code).toMatch(/^[A-Z][a-z]/);
      expect(r.title).not.toContain('_');
    }
    expect(new Set(RULES.map((r) => r.title)).size).toBe(RULES.length);
    expect(ruleTitle('P_FEE_USD')).toBe('Partner fee USD twin');
    expect(ruleTitle('E_STALE')).toBe('Deposit or withdrawal stuck');
    expect(ruleTitle('Z_UNKNOWN')).toBe('Z_UNKNOWN');
  });
});

describe('what a detected break is about (its rule says it, nothing reads its words)', () => {
  it('the unit: amounts, hours for ages whatever the record currency, prices, text for states and hashes', () => {
    expect(stored('P_FEE_USD', 'o', [fee()], 'USD')).toMatchObject({ unit: 'amount', entity: 'partnerOrder' });
    const stale = stored(
      'E_STALE',
      '1',
      verdict(
        checkDepositStale(makeDeposit({ state: 'UNCONFIRMED', currency: 'BTC', timestamp: hoursAgo(50) }), NOW, 24),
      ),
    );
    expect(stale).toMatchObject({ unit: 'hours', entity: 'deposit', currency: 'BTC', expected: '24', actual: '50' });
    expect(unitWord(stale)).toBe('hours');
    const partnerStale = stored(
      'P_STALE',
      'o',
      verdict(checkStale(makeOrder({ orderState: 'PENDING', orderStateUpdatedAt: hoursAgo(30) }), NOW, 24)),
    );
    expect(partnerStale).toMatchObject({ unit: 'hours', entity: 'partnerOrder' });
    const gap = { check: 'no webhook event', expected: 'COMPLETED', actual: 'FAILED', difference: null };
    expect(stored('P_WEBHOOK_GAP', 'o', [gap]).unit).toBe('text');
    // a currency mismatch compares codes, not amounts
    const mismatch = { check: 'currency', expected: 'BTC', actual: 'ETH', difference: null, currency: 'BTC' };
    expect(stored('X_DEPOSIT_AMOUNT', 'o', [mismatch]).unit).toBe('text');
    // "present" against an amount is still an amount
    expect(stored('P_FEE_USD', 'o', [fee({ expected: 'present', difference: null })], 'USD').unit).toBe('amount');
    // a withdrawal's age names a withdrawal; an order's size check an exchange order; a price check a price
    const w = stored(
      'E_STALE',
      'W1',
      verdict(checkWithdrawalStale(makeWithdrawal({ state: 'PENDING', timestamp: hoursAgo(25) }), NOW, 24)),
    );
    expect(w.entity).toBe('withdrawal');
    const symbol = makeSymbol({ minOrderSize: d('1') });
    const size = verdict(checkOrderSize(makeOrderAgg({ cumQty: d('0.1'), leavesQty: d('0') }), symbol));
    expect(stored('E_SYMBOL_RULES', '5', size).entity).toBe('exchangeOrder');
    const price = verdict(checkFillSymbolRules(makeFill({ price: d('100.00005') }), makeSymbol()));
    expect(stored('E_SYMBOL_RULES', '6', price)).toMatchObject({ entity: 'fill', unit: 'price' });
    // balance_local is in the exchange's local currency (assumed USD), not the line's
    const line = {
      currency: 'GBP',
      balance: d('1'),
      available: d('1'),
      rate: d('635500'),
      balanceLocal: d('635500.05'),
    };
    const local = stored('E_BALANCE_SANITY', 'GBP', verdict(checkBalanceSanity(line, d('0.01'))), 'GBP');
    expect(local).toMatchObject({ currency: 'USD', unit: 'amount', entity: 'balance', difference: '0.05' });
  });
});

describe('amountAtStake', () => {
  it('is the signed difference for amounts, minus the missing deposit for a rule that says so, nothing for ages, prices and text', () => {
    expect(amountAtStake(stored('P_FEE_USD', 'o', [fee({ difference: d('-0.50') })], 'USD'))).toEqual({
      value: new Decimal('-0.50'),
      currency: 'USD',
    });
    const missing = { check: 'no deposit', expected: d('0.01'), actual: null, difference: null, currency: 'BTC' };
    expect(amountAtStake(stored('X_DEPOSIT_MISSING', 'o', [missing]))).toEqual({
      value: new Decimal('-0.01'),
      currency: 'BTC',
    });
    expect(amountAtStake(stored('P_FEE_USD', 'o', [{ ...missing }], 'USD'))).toBeNull();
    expect(
      amountAtStake(
        stored(
          'E_STALE',
          '1',
          verdict(
            checkDepositStale(makeDeposit({ state: 'UNCONFIRMED', currency: 'BTC', timestamp: hoursAgo(50) }), NOW, 24),
          ),
        ),
      ),
    ).toBeNull();
    const avg = { check: 'vwap', expected: d('100'), actual: d('101'), difference: d('1'), currency: 'USD' };
    expect(amountAtStake(stored('E_FILL_AVGPX', '1', [avg]))).toBeNull();
    const price = verdict(checkFillSymbolRules(makeFill({ price: d('100.00005') }), makeSymbol()));
    expect(amountAtStake(stored('E_SYMBOL_RULES', '6', price))).toBeNull();
    const lot = verdict(checkFillSymbolRules(makeFill({ qty: d('0.10005') }), makeSymbol({ lotSize: d('0.0001') })));
    expect(amountAtStake(stored('E_SYMBOL_RULES', '6', lot))).toEqual({
      value: new Decimal('-0.00005'),
      currency: 'ETH',
    });
    const gap = { check: 'no webhook event', expected: 'COMPLETED', actual: null, difference: null };
    expect(amountAtStake(stored('P_WEBHOOK_GAP', 'o', [gap]))).toBeNull();
  });
});

describe('amountsAsReported', () => {
  it('is expected | actual | difference | currency, empty for null', () => {
    const b = { expected: '1.23', actual: '1.73', difference: '0.50', currency: 'USD' };
    expect(amountsAsReported(b)).toBe('1.23 | 1.73 | 0.50 | USD');
    expect(amountsAsReported({ ...b, actual: null, difference: null, currency: null })).toBe('1.23 |  |  | ');
  });
});

describe('breakSentence', () => {
  it("reads at the currency's precision when given it, never showing a difference that is not zero as 0", () => {
    const long = fee({ expected: d('1.23456789012345'), actual: d('1.73'), difference: d('0.49543210987655') });
    expect(breakSentence(stored('P_FEE_USD', 'ord_9', [long], 'USD'), 2)).toBe(
      'Partner fee USD twin off by 0.50 USD on order ord_9: expected 1.23, actual 1.73 (partnerFeeUsd != partnerFee x amountUsd / inputAmount).',
    );
    // exact without it (the CLI and the JSON keep the stored figures)
    expect(breakSentence(stored('P_FEE_USD', 'ord_9', [long], 'USD'))).toContain('off by 0.49543210987655 USD');
    const tiny = fee({ expected: d('1.23'), actual: d('1.2297'), difference: d('-0.0003') });
    expect(breakSentence(stored('P_FEE_USD', 'ord_8', [tiny], 'USD'), 2)).toContain(
      'off by -0.0003 USD on order ord_8: expected 1.2300, actual 1.2297',
    );
    expect(atPrecision('0.00000004', 8)).toBe('0.00000004');
    expect(atPrecision('-0.000000004', 8)).toBe('-0.000000004');
    expect(atPrecision('12.5', 0)).toBe('13');
    expect(atPrecision('COMPLETED', 2)).toBe('COMPLETED');
  });

  it('says what happened in words, always naming the key', () => {
    expect(breakSentence(stored('P_FEE_USD', 'ord_123', [fee()], 'USD'))).toBe(
      'Partner fee USD twin off by 0.5 USD on order ord_123: expected 1.23, actual 1.73 (partnerFeeUsd != partnerFee x amountUsd / inputAmount).',
    );
    const deposit = makeDeposit({
      depositId: '123',
      state: 'UNCONFIRMED',
      currency: 'BTC',
      timestamp: hoursAgo(50.92),
    });
    expect(breakSentence(stored('E_STALE', '123', verdict(checkDepositStale(deposit, NOW, 24))))).toBe(
      'Deposit 123 (BTC) UNCONFIRMED for 50.9 hours (limit 24).',
    );
    const withdrawal = makeWithdrawal({
      withdrawalId: 'W1',
      state: 'PENDING',
      currency: 'EUR',
      timestamp: hoursAgo(25),
    });
    expect(breakSentence(stored('E_STALE', 'W1', verdict(checkWithdrawalStale(withdrawal, NOW, 24))))).toBe(
      'Withdrawal W1 (EUR) PENDING for 25 hours (limit 24).',
    );
    const gone = makeOrder({
      orderId: 'o1',
      orderState: 'PENDING',
      orderStateUpdatedAt: hoursAgo(30.04),
      notFound: true,
    });
    expect(breakSentence(stored('P_STALE', 'o1', verdict(checkStale(gone, NOW, 24))))).toBe(
      'Partner order o1 PENDING for 30 hours (limit 24) and no longer found by the partner API.',
    );
    const missing = {
      check: 'no exchange deposit with txHash 0xabc',
      expected: d('0.01'),
      actual: null,
      difference: null,
      currency: 'BTC',
      facts: { txHash: '0xabc' },
    };
    expect(breakSentence(stored('X_DEPOSIT_MISSING', 'o2', [missing]))).toBe(
      'No exchange deposit of 0.01 BTC for paid order o2 (transaction hash 0xabc).',
    );
    const residual = { check: 'residual -0.01 ...', expected: d('1.5'), actual: d('1.49'), difference: d('-0.01') };
    const roll = stored('E_BALANCE_ROLL', 'BTC', [residual], 'BTC', {
      day: '2026-11-01',
      detail: { firstDivergentDay: '2026-11-01' },
    });
    expect(breakSentence(roll)).toBe(
      'BTC balance does not roll forward off by -0.01 BTC: expected closing 1.5, actual 1.49 (first divergent day 2026-11-01).',
    );
    const unsynced = { check: 'no sync covered the day', expected: 'synced', actual: 'not synced', difference: null };
    expect(breakSentence(stored('S_COVERAGE', 'exchange:fills:2026-11-01', [unsynced]))).toBe(
      'exchange fills of 2026-11-01 not fully synced (exchange:fills:2026-11-01): no sync covered the day.',
    );
    const gap = {
      check: 'no webhook event with state COMPLETED',
      expected: 'COMPLETED',
      actual: null,
      difference: null,
    };
    expect(breakSentence(stored('P_WEBHOOK_GAP', 'o3', [gap]))).toBe(
      'Partner webhook missing or different on order o3: no webhook event with state COMPLETED.',
    );
    const negative = { check: 'networkFee is negative', expected: d(0), actual: d('-0.5'), difference: d('-0.5') };
    const sum = { check: 'fees sum to inputAmount or more', expected: d(1), actual: d(2), difference: d(1) };
    expect(breakSentence(stored('P_FEE_BOUNDS', 'o4', [negative, sum], 'GBP'))).toBe(
      'Partner fees out of bounds on order o4: networkFee is negative (expected 0, actual -0.5, difference -0.5 GBP) (and 1 more check, see Detail).',
    );
    const orphan = {
      check: 'order 11 of the fill is not stored',
      expected: null,
      actual: null,
      difference: null,
      note: 'GET /orders/{id} answered 404',
    };
    expect(breakSentence(stored('E_FILL_ORPHAN', '52', [orphan]))).toBe(
      'Fill 52: order 11 of the fill is not stored (GET /orders/{id} answered 404).',
    );
    const unknown = {
      code: 'Z_NEW',
      key: 'k',
      entity: 'balance' as const,
      unit: 'text' as const,
      currency: null,
      expected: null,
      actual: null,
      difference: null,
      message: null,
    };
    expect(breakSentence(unknown)).toBe('Z_NEW on k.');
  });
});

describe('detailText', () => {
  it('prints each check on its line and the other fields as name: value, numbers exact', () => {
    const detail = parse(
      '{"checks":[{"note":"age in hours","check":"deposit UNCONFIRMED for more than 24h","actual":"50.50","expected":"24"}],"pairs":[1,2],"big":123456789012345678901234567890,"none":null}',
    );
    expect(detailText(detail)).toBe(
      'check 1: check: deposit UNCONFIRMED for more than 24h; expected: 24; actual: 50.50; note: age in hours\npairs: 1, 2\nbig: 123456789012345678901234567890',
    );
    expect(detailText(null)).toBe('');
    expect(detailText('plain')).toBe('plain');
    expect(detailText({ coverage: [{ day: '2026-11-01', rows: 3 }] })).toBe('coverage: (day: 2026-11-01; rows: 3)');
  });
});

describe('Breaks rows', () => {
  const precision = new Precision({ partner: new Map([['USD', { precision: 2, type: 'FIAT' }]]), symbols: new Map() });
  const reported = (over: Partial<ReportedBreak>): ReportedBreak => ({
    code: 'P_FEE_USD',
    key: 'ord_123',
    entity: 'partnerOrder',
    severity: 'medium',
    currency: 'USD',
    unit: 'amount',
    day: null,
    expected: '1.23',
    actual: '1.73',
    difference: '-0.50',
    message: 'partnerFeeUsd != partnerFee to the cent',
    detail: null,
    status: 'open',
    firstSeenRun: 'r1',
    firstSeenAt: new Date('2026-11-01T00:00:00Z'),
    lastSeenRun: 'r2',
    lastSeenAt: new Date('2026-11-02T00:00:00Z'),
    resolvedRun: null,
    resolvedAt: null,
    reopenedCount: 0,
    inPeriod: true,
    workflow: NO_WORKFLOW,
    ...over,
  });

  it('shows a figure with at least its own decimals, so a difference is never shown as zero when it is not', () => {
    const ctx = { now: new Date('2026-11-03T00:00:00Z'), precision, usd: new UsdRates({}) };
    const cells = (over: Partial<ReportedBreak>) => {
      const row = breakRow(reported(over), ctx);
      return { difference: row.cells[8], usd: row.cells[9] };
    };
    // USD at 2 decimals: -0.0003 keeps its 4, and so does the row's USD impact
    expect(cells({ expected: '1.2300', actual: '1.2297', difference: '-0.0003' })).toEqual({
      difference: { kind: 'amount', value: new Decimal('-0.0003'), dp: 4, unit: 'USD' },
      usd: { kind: 'amount', value: new Decimal('-0.0003'), dp: 4 },
    });
    // trailing zeros are not decimals of the figure: the currency's 2 hold
    expect(cells({ expected: '1.2300', actual: '1.7300', difference: '-0.5000' }).difference).toMatchObject({ dp: 2 });
    // 18 decimals, all of them: the column widens to the number (never ###); the figures of more than 15 significant
    // digits Excel does not hold stop at the decimals it does, their exact text beside them
    const long = cells({
      expected: '0.047981416227322125',
      actual: '0.047501429206504803',
      difference: '-0.000479987020817322',
    }).difference as { dp: number };
    expect(long.dp).toBe(18);
    expect(
      cells({ expected: '0', actual: '0.000000000000000004', difference: '0.000000000000000004' }).difference,
    ).toMatchObject({
      dp: 18,
    });
  });

  it('links the key to its row, values the impact in USD, shows the workflow, colours the severity cell only', () => {
    const links = new BreakLinks(new Map([['partnerOrders', new Map([['ord_123', 7]])]]), 5);
    const usd = new UsdRates({});
    const row = breakRow(
      reported({
        workflow: {
          ...NO_WORKFLOW,
          status: 'explained',
          owner: 'ana',
          explanation: 'known rounding',
          lastNote: 'checked',
          lastNoteBy: 'ana',
          lastNoteAt: new Date('2026-11-02T10:00:00Z'),
        },
      }),
      {
        now: new Date('2026-11-03T00:00:00Z'),
        precision,
        usd,
        links,
        // the break lies in a signed-off period: the close is named
        closedPeriods: new Map([[breakId('P_FEE_USD', 'ord_123'), 'c20261102T090000Z-1a2b3c']]),
      },
    );
    expect(row.tone).toBeUndefined();
    expect(row.cellTones).toEqual({ 0: 'medium' });
    const [
      severity,
      title,
      code,
      key,
      sentence,
      unit,
      ,
      ,
      difference,
      impact,
      valuation,
      inPeriod,
      closedPeriod,
      age,
      ,
      status,
      owner,
      lastNote,
      explanation,
      explained,
      amounts,
    ] = row.cells;
    expect([
      severity,
      title,
      code,
      unit,
      inPeriod,
      closedPeriod,
      age,
      status,
      owner,
      lastNote,
      explanation,
      explained,
      amounts,
    ]).toEqual([
      'medium',
      'Partner fee USD twin',
      'P_FEE_USD',
      'USD',
      'yes',
      'c20261102T090000Z-1a2b3c',
      2,
      'explained',
      'ana',
      'checked (ana, 2026-11-02)',
      'known rounding',
      'yes',
      '1.23 | 1.73 | -0.50 | USD',
    ]);
    // 7th data row, 4 data rows a part: "Partner orders (2)", row 4 (header + 3)
    expect(key).toEqual({ kind: 'link', text: 'ord_123', sheet: 'Partner orders (2)', row: 4 });
    expect(sentence).toContain('ord_123');
    expect(difference).toEqual({ kind: 'amount', value: new Decimal('-0.50'), dp: 2, unit: 'USD' });
    // signed like the difference: less charged than expected is negative
    expect(impact).toEqual({ kind: 'amount', value: new Decimal('-0.5'), dp: 2 });
    expect(valuation).toBe('-0.5 USD, in USD');
  });

  it('keeps the key as text without a row, and text figures as text', () => {
    const row = breakRow(
      reported({
        code: 'P_WEBHOOK_GAP',
        severity: 'low',
        unit: 'text',
        currency: null,
        expected: 'COMPLETED',
        actual: 'FAILED',
        difference: null,
      }),
      { now: new Date('2026-11-01T00:00:00Z'), precision },
    );
    expect(row.cells[3]).toBe('ord_123');
    expect(row.cells.slice(5, 10)).toEqual(['text', 'COMPLETED', 'FAILED', null, null]);
    expect(row.cells[15]).toBe('open');
    expect(row.cells[19]).toBeNull();
  });

  it('names the data sheet of each record kind', () => {
    expect(dataSheetOf({ entity: 'partnerOrder' })).toBe('partnerOrders');
    expect(dataSheetOf({ entity: 'exchangeOrder' })).toBe('ordersVsFills');
    expect(dataSheetOf({ entity: 'fill' })).toBe('fills');
    expect(dataSheetOf({ entity: 'withdrawal' })).toBe('withdrawals');
    expect(dataSheetOf({ entity: 'deposit' })).toBe('deposits');
    expect(dataSheetOf({ entity: 'balance' })).toBe('balances');
    expect(dataSheetOf({ entity: 'coverage' })).toBe('coverage');
    expect(dataSheetOf({ entity: 'quarantine' })).toBeNull();
    expect(
      keysBySheet([
        { entity: 'partnerOrder', key: 'a' },
        { entity: 'partnerOrder', key: 'a' },
        { entity: 'fill', key: '9' },
      ]),
    ).toEqual(
      new Map([
        ['partnerOrders', ['a']],
        ['fills', ['9']],
      ]),
    );
    expect(positionsIn(['BTC', 'BTC', 'EUR', null])).toEqual(
      new Map([
        ['BTC', 1],
        ['EUR', 3],
      ]),
    );
  });

  it('places a data row on the part the writer puts it on', () => {
    expect(rowPlace('Fills', 1)).toEqual({ sheet: 'Fills', row: 2 });
    expect(rowPlace('Fills', 2, 3)).toEqual({ sheet: 'Fills', row: 3 });
    expect(rowPlace('Fills', 3, 3)).toEqual({ sheet: 'Fills (2)', row: 2 });
    expect(rowPlace('Exchange orders vs fills', 5, 3)).toEqual({ sheet: 'Exchange orders vs fills (3)', row: 2 });
    expect(rowPlace('A name longer than twenty-six chars', 4, 3).sheet).toBe('A name longer than twenty- (2)');
  });
});
