import { parse } from 'lossless-json';
import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import {
  amountsAsReported,
  breakSentence,
  detailText,
  impactAmount,
  ruleTitle,
  unitOf,
  type BreakForWords,
} from '../../src/report/break-text.js';
import { RULES } from '../../src/rules/catalog.js';
import { BreakLinks, breakRow, dataSheetOf, keysBySheet, positionsIn } from '../../src/report/breaks-sheet.js';
import { rowPlace } from '../../src/report/cells.js';
import { Precision } from '../../src/report/precision.js';
import { UsdRates } from '../../src/report/usd-rates.js';
import { NO_WORKFLOW, type ReportedBreak } from '../../src/domain/index.js';

const b = (over: Partial<BreakForWords>): BreakForWords => ({
  code: 'P_FEE_USD',
  key: 'ord_123',
  currency: 'USD',
  expected: '1.23',
  actual: '1.73',
  difference: '0.50',
  message: null,
  ...over,
});

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

describe('unitOf', () => {
  it('is the currency for amounts, hours for ages whatever the record currency, text for states and hashes', () => {
    expect(unitOf(b({}))).toBe('USD');
    expect(unitOf(b({ code: 'E_FILL_QTY', currency: 'BTC', expected: '0.3', actual: '0.2', difference: '-0.1' }))).toBe(
      'BTC',
    );
    expect(unitOf(b({ code: 'E_STALE', currency: 'BTC', expected: '24', actual: '50.92', difference: '26.92' }))).toBe(
      'hours',
    );
    expect(unitOf(b({ code: 'P_STALE', currency: null, expected: '24', actual: '30.00', difference: '6.00' }))).toBe(
      'hours',
    );
    expect(
      unitOf(b({ code: 'P_WEBHOOK_GAP', currency: null, expected: 'COMPLETED', actual: 'FAILED', difference: null })),
    ).toBe('text');
    expect(
      unitOf(b({ code: 'P_STATE', currency: null, expected: 'transactionHash', actual: null, difference: null })),
    ).toBe('text');
    expect(unitOf(b({ code: 'E_FILL_ORPHAN', currency: null, expected: null, actual: null, difference: null }))).toBe(
      'text',
    );
    // a currency mismatch compares codes, not amounts
    expect(
      unitOf(b({ code: 'X_DEPOSIT_AMOUNT', currency: 'BTC', expected: 'BTC', actual: 'ETH', difference: null })),
    ).toBe('text');
    // "present" against an amount still has a currency
    expect(unitOf(b({ expected: 'present', actual: '1.2', difference: null }))).toBe('USD');
    // balance_local is in the exchange's local currency (assumed USD), not the line's
    expect(
      unitOf(
        b({
          code: 'E_BALANCE_SANITY',
          currency: 'GBP',
          expected: '635500',
          actual: '635500.05',
          difference: '0.05',
          message: 'balance_local != balance x rate (local currency)',
        }),
      ),
    ).toBe('USD');
    expect(
      unitOf(
        b({
          code: 'E_BALANCE_SANITY',
          currency: 'GBP',
          expected: '1',
          actual: '2',
          difference: '1',
          message: 'available above balance',
        }),
      ),
    ).toBe('GBP');
  });
});

describe('impactAmount', () => {
  it('is |difference| in the unit for money, the missing deposit for X_DEPOSIT_MISSING, nothing for ages, prices and text', () => {
    expect(impactAmount(b({ difference: '-0.50' }))).toEqual({ value: new Decimal('0.50'), currency: 'USD' });
    expect(
      impactAmount(b({ code: 'X_DEPOSIT_MISSING', currency: 'BTC', expected: '0.01', actual: null, difference: null })),
    ).toEqual({ value: new Decimal('0.01'), currency: 'BTC' });
    expect(
      impactAmount(b({ code: 'E_STALE', currency: 'BTC', expected: '24', actual: '50', difference: '26' })),
    ).toBeNull();
    expect(
      impactAmount(b({ code: 'E_FILL_AVGPX', currency: 'USD', expected: '100', actual: '101', difference: '1' })),
    ).toBeNull();
    expect(
      impactAmount(
        b({
          code: 'E_SYMBOL_RULES',
          currency: 'USD',
          difference: '-0.00005',
          message: 'price not a multiple of the price increment 0.0001',
        }),
      ),
    ).toBeNull();
    expect(
      impactAmount(
        b({
          code: 'E_SYMBOL_RULES',
          currency: 'BTC',
          difference: '-0.00005',
          message: 'qty not a multiple of the lot size 0.0001',
        }),
      ),
    ).toEqual({ value: new Decimal('0.00005'), currency: 'BTC' });
    expect(
      impactAmount(b({ code: 'P_WEBHOOK_GAP', currency: null, expected: 'COMPLETED', actual: null, difference: null })),
    ).toBeNull();
  });
});

describe('amountsAsReported', () => {
  it('is expected | actual | difference | currency, empty for null', () => {
    expect(amountsAsReported(b({}))).toBe('1.23 | 1.73 | 0.50 | USD');
    expect(amountsAsReported(b({ actual: null, difference: null, currency: null }))).toBe('1.23 |  |  | ');
  });
});

describe('breakSentence', () => {
  it('says what happened in words, always naming the key', () => {
    expect(breakSentence(b({ message: 'partnerFeeUsd != partnerFee x amountUsd / inputAmount' }))).toBe(
      'Partner fee USD twin off by 0.50 USD on order ord_123: expected 1.23, actual 1.73 (partnerFeeUsd != partnerFee x amountUsd / inputAmount).',
    );
    expect(
      breakSentence(
        b({
          code: 'E_STALE',
          key: '123',
          currency: 'BTC',
          expected: '24',
          actual: '50.92',
          difference: '26.92',
          message: 'deposit UNCONFIRMED for more than 24h (age in hours)',
        }),
      ),
    ).toBe('Deposit 123 (BTC) UNCONFIRMED for 50.9 hours (limit 24).');
    expect(
      breakSentence(
        b({
          code: 'E_STALE',
          key: 'W1',
          currency: 'EUR',
          expected: '24',
          actual: '25.00',
          difference: '1.00',
          message: 'withdrawal PENDING for more than 24h (age in hours)',
        }),
      ),
    ).toBe('Withdrawal W1 (EUR) PENDING for 25 hours (limit 24).');
    expect(
      breakSentence(
        b({
          code: 'P_STALE',
          key: 'o1',
          currency: null,
          expected: '24',
          actual: '30.04',
          difference: '6.04',
          message: 'PENDING and no longer found by the partner API (404) (age in hours)',
        }),
      ),
    ).toBe('Partner order o1 PENDING for 30 hours (limit 24) and no longer found by the partner API.');
    expect(
      breakSentence(
        b({
          code: 'X_DEPOSIT_MISSING',
          key: 'o2',
          currency: 'BTC',
          expected: '0.01',
          actual: null,
          difference: null,
          message: 'no exchange deposit with txHash 0xabc',
        }),
      ),
    ).toBe('No exchange deposit of 0.01 BTC for paid order o2 (transaction hash 0xabc).');
    expect(
      breakSentence(
        b({
          code: 'E_BALANCE_ROLL',
          key: 'BTC',
          currency: 'BTC',
          expected: '1.5',
          actual: '1.49',
          difference: '-0.01',
          message: 'residual -0.01 ...',
          detail: { firstDivergentDay: '2026-11-01' },
        }),
      ),
    ).toBe(
      'BTC balance does not roll forward off by -0.01 BTC: expected closing 1.5, actual 1.49 (first divergent day 2026-11-01).',
    );
    expect(
      breakSentence(
        b({
          code: 'S_COVERAGE',
          key: 'exchange:fills:2026-11-01',
          currency: null,
          expected: 'synced',
          actual: 'not synced',
          difference: null,
          message: 'no sync covered the day',
        }),
      ),
    ).toBe('exchange fills of 2026-11-01 not fully synced (exchange:fills:2026-11-01): no sync covered the day.');
    expect(
      breakSentence(
        b({
          code: 'P_WEBHOOK_GAP',
          key: 'o3',
          currency: null,
          expected: 'COMPLETED',
          actual: null,
          difference: null,
          message: 'no webhook event with state COMPLETED',
        }),
      ),
    ).toBe('Partner webhook missing or different on order o3: no webhook event with state COMPLETED.');
    expect(
      breakSentence(
        b({
          code: 'P_FEE_BOUNDS',
          key: 'o4',
          currency: 'GBP',
          expected: '0',
          actual: '-0.5',
          difference: '-0.5',
          message: 'networkFee is negative (+1 more)',
        }),
      ),
    ).toBe(
      'Partner fees out of bounds on order o4: networkFee is negative (expected 0, actual -0.5, difference -0.5 GBP) (and 1 more check, see Detail).',
    );
    expect(
      breakSentence(
        b({
          code: 'E_FILL_ORPHAN',
          key: '52',
          currency: null,
          expected: null,
          actual: null,
          difference: null,
          message: 'order 11 of the fill is not stored (GET /orders/{id} answered 404)',
        }),
      ),
    ).toBe('Fill 52: order 11 of the fill is not stored (GET /orders/{id} answered 404).');
    expect(
      breakSentence(
        b({ code: 'Z_NEW', key: 'k', currency: null, expected: null, actual: null, difference: null, message: null }),
      ),
    ).toBe('Z_NEW on k.');
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
    severity: 'medium',
    currency: 'USD',
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
      { now: new Date('2026-11-03T00:00:00Z'), precision, usd, links },
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
      inPeriod,
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
    expect(difference).toEqual({ kind: 'amount', value: new Decimal('-0.50'), dp: 2 });
    expect(impact).toEqual({ kind: 'amount', value: new Decimal('0.5'), dp: 2 });
  });

  it('keeps the key as text without a row, and text figures as text', () => {
    const row = breakRow(
      reported({
        code: 'P_WEBHOOK_GAP',
        severity: 'low',
        currency: null,
        expected: 'COMPLETED',
        actual: 'FAILED',
        difference: null,
      }),
      { now: new Date('2026-11-01T00:00:00Z'), precision },
    );
    expect(row.cells[3]).toBe('ord_123');
    expect(row.cells.slice(5, 10)).toEqual(['text', 'COMPLETED', 'FAILED', null, null]);
    expect(row.cells[13]).toBe('open');
    expect(row.cells[17]).toBeNull();
  });

  it('names the data sheet of each rule family', () => {
    expect(dataSheetOf({ code: 'X_DEPOSIT_MISSING', message: null })).toBe('partnerOrders');
    expect(dataSheetOf({ code: 'E_FILL_AVGPX', message: null })).toBe('ordersVsFills');
    expect(dataSheetOf({ code: 'E_SYMBOL_RULES', message: 'order quantity below the minimum order size' })).toBe(
      'ordersVsFills',
    );
    expect(dataSheetOf({ code: 'E_SYMBOL_RULES', message: 'qty not a multiple of the lot size 0.1' })).toBe('fills');
    expect(dataSheetOf({ code: 'E_STALE', message: 'withdrawal PENDING for more than 24h' })).toBe('withdrawals');
    expect(dataSheetOf({ code: 'E_STALE', message: 'deposit UNCONFIRMED for more than 24h' })).toBe('deposits');
    expect(dataSheetOf({ code: 'E_BALANCE_SANITY', message: null })).toBe('balances');
    expect(dataSheetOf({ code: 'S_COVERAGE', message: null })).toBe('coverage');
    expect(dataSheetOf({ code: 'S_QUARANTINE', message: null })).toBeNull();
    expect(
      keysBySheet([
        { code: 'P_FEE_USD', key: 'a', message: null },
        { code: 'P_STATE', key: 'a', message: null },
        { code: 'E_FEE_RATE', key: '9', message: null },
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
