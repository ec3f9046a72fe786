import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import { figureText, NO_WORKFLOW, type ReportedBreak } from '../../src/domain/index.js';
import { toBreak } from '../../src/rules/tally.js';
import type { Failure } from '../../src/rules/types.js';
import { stakeOf } from '../../src/rules/describe.js';
import { RULES, type RuleCode } from '../../src/rules/catalog.js';
import { checkBeneficiary, checkDepositStale } from '../../src/rules/payment-rules.js';
import { checkFillOrphan } from '../../src/rules/fill-rules.js';
import { breakValuation, UsdRates, valuationText } from '../../src/report/usd-rates.js';
import { moneyAtStake, stakeFigures, stakeLines, sumStakeFigures } from '../../src/report/money-at-stake.js';
import { breakRow } from '../../src/report/breaks-sheet.js';
import { Precision } from '../../src/report/precision.js';
import { d, makeDeposit, makeFill, makeWithdrawal, NOW } from './recon-factories.js';

/** A break as a rule detects it and the break table stores it (figures as exact text, detail as JSON). */
function stored(code: RuleCode, key: string, failures: Failure[] | 'n/a' | 'skipped', currency: string | null = null) {
  const b = toBreak(code, key, failures as Failure[], currency);
  return {
    ...b,
    expected: figureText(b.expected),
    actual: figureText(b.actual),
    difference: figureText(b.difference),
    detail: JSON.parse(JSON.stringify(b.detail)) as unknown,
  };
}
const reported = (b: ReturnType<typeof stored>, inPeriod = true): ReportedBreak => ({
  ...b,
  status: 'open',
  firstSeenRun: 'r1',
  firstSeenAt: new Date('2026-11-01T00:00:00Z'),
  lastSeenRun: 'r1',
  lastSeenAt: new Date('2026-11-01T00:00:00Z'),
  resolvedRun: null,
  resolvedAt: null,
  reopenedCount: 0,
  inPeriod,
  workflow: NO_WORKFLOW,
});
const RATES = new UsdRates({
  balances: [{ currency: 'ETH', rate: new Decimal('2000'), fetchedAt: new Date('2026-11-10T23:59:30Z') }],
});

describe("each rule's valuation (its descriptor)", () => {
  it('every rule says how its break is valued, or that it moves no money', () => {
    for (const r of RULES) expect(r.stake.how, r.code).toMatch(/\S/);
    const none = RULES.filter((r) => r.stake.basis === 'none').map((r) => r.code);
    expect(none).toEqual(expect.arrayContaining(['P_STALE', 'E_STALE', 'S_COVERAGE', 'S_QUARANTINE']));
    expect(RULES.filter((r) => r.stake.basis === 'recorded').map((r) => r.code)).toEqual([
      'E_FILL_ORPHAN',
      'E_WITHDRAWAL_BENEFICIARY',
    ]);
  });

  it('a withdrawal to a beneficiary off the whitelist: minus (amount + fee); nothing when it never left', () => {
    const w = makeWithdrawal({ beneficiary: 'stranger', amount: d('0.5'), fee: d('0.001') });
    const b = stored('E_WITHDRAWAL_BENEFICIARY', 'wd-1', checkBeneficiary(w, new Set(['wl-1'])), 'ETH');
    expect(stakeOf(b)).toEqual({ value: new Decimal('-0.501'), currency: 'ETH' });
    const v = breakValuation(b, RATES);
    expect(v).toMatchObject({ kind: 'usd', usd: new Decimal('-1002'), dp: 2 });
    expect(valuationText(b, v)).toBe('-0.501 ETH x 2000 USD/ETH (balance snapshot of 2026-11-10 23:59 UTC)');
    const noFee = stored('E_WITHDRAWAL_BENEFICIARY', 'wd-2', checkBeneficiary({ ...w, fee: null }, new Set()), 'ETH');
    expect(stakeOf(noFee)).toEqual({ value: new Decimal('-0.5'), currency: 'ETH' });
    const refunded = stored(
      'E_WITHDRAWAL_BENEFICIARY',
      'wd-3',
      checkBeneficiary({ ...w, state: 'REFUNDED' }, new Set()),
    );
    expect(stakeOf(refunded)).toEqual({ value: new Decimal('0'), currency: 'ETH' });
  });

  it("an orphan fill: its notional in the counter currency, minus for a BUY, plus for a SELL; no figure without the symbol's rules", () => {
    const buy = makeFill({ orderFound: false, side: 'BUY', qty: d('0.5'), price: d('2000.01') });
    expect(stakeOf(stored('E_FILL_ORPHAN', 'x1', checkFillOrphan(buy, 'USD')))).toEqual({
      value: new Decimal('-1000.005'),
      currency: 'USD',
    });
    const sell = stored('E_FILL_ORPHAN', 'x2', checkFillOrphan({ ...buy, side: 'SELL' }, 'USD'));
    expect(breakValuation(sell, RATES)).toMatchObject({ kind: 'usd', usd: new Decimal('1000.01'), dp: 2 });
    const unknown = stored('E_FILL_ORPHAN', 'x3', checkFillOrphan(buy, undefined));
    expect(stakeOf(unknown)).toBe('unknown');
    expect(breakValuation(unknown, RATES)).toEqual({ kind: 'no figure', why: 'no amount recorded' });
  });

  it('an amount rule: its signed difference; an age rule: no money, said so on the Breaks sheet', () => {
    const fee: Failure = { check: 'fee', expected: d('1.23'), actual: d('1.73'), difference: d('0.50') };
    expect(stakeOf(stored('P_FEE_USD', 'o', [fee], 'USD'))).toEqual({ value: new Decimal('0.50'), currency: 'USD' });
    const noRate = stored('X_DEPOSIT_AMOUNT', 'o', [{ ...fee, currency: 'XYZ' }]);
    expect(breakValuation(noRate, RATES)).toEqual({ kind: 'no figure', why: 'no USD rate for XYZ' });
    const age = stored(
      'E_STALE',
      'dep-1',
      checkDepositStale(
        makeDeposit({ state: 'UNCONFIRMED', timestamp: new Date(NOW.getTime() - 50 * 3_600_000) }),
        NOW,
        24,
      ),
    );
    expect(stakeOf(age)).toBe('no money');
    const row = breakRow(reported(age), { now: NOW, precision: Precision.empty(), usd: RATES });
    expect(row.cells[9]).toBe('no money');
    expect(row.cells[10]).toMatch(/^no money: an age/);
  });
});

describe('money at stake', () => {
  const withdrawal = (key: string, inPeriod: boolean) =>
    reported(
      stored(
        'E_WITHDRAWAL_BENEFICIARY',
        key,
        checkBeneficiary(makeWithdrawal({ withdrawalId: key }), new Set()),
        'ETH',
      ),
      inPeriod,
    );
  const orphan = (side: string, inPeriod: boolean) =>
    reported(stored('E_FILL_ORPHAN', side, checkFillOrphan(makeFill({ orderFound: false, side }), 'USD')), inPeriod);

  it('sums negative impacts as shortfalls and positive ones as surpluses, never netted, split by period', () => {
    const breaks = [withdrawal('w1', true), withdrawal('w2', false), orphan('SELL', false), orphan('BUY', true)];
    const m = moneyAtStake(breaks, RATES);
    // -(0.5 + 0.001) ETH x 2000 = -1002.00 each; a 0.5 x 2000.01 fill is 1000.01 (1000.005 to the cent)
    expect([m.shortfalls.total, m.shortfalls.inPeriod, m.shortfalls.carriedOver].map(String)).toEqual([
      '-3004.01',
      '-2002.01',
      '-1002',
    ]);
    expect([m.surpluses.total, m.surpluses.inPeriod, m.surpluses.carriedOver].map(String)).toEqual([
      '1000.01',
      '0',
      '1000.01',
    ]);
    expect(m.noFigure).toEqual({ total: 0, inPeriod: 0, carriedOver: 0 });
  });

  it('counts the breaks without a figure apart from those that move no money, this period and carried over', () => {
    const noRate = reported(
      stored('X_DEPOSIT_AMOUNT', 'o', [
        { check: 'x', expected: d('1'), actual: d('2'), difference: d('1'), currency: 'XYZ' },
      ]),
      false,
    );
    const oldOrphan = reported({ ...stored('E_FILL_ORPHAN', 'x', checkFillOrphan(makeFill({ orderFound: false }))) });
    const age = reported(
      stored('E_STALE', 'd', checkDepositStale(makeDeposit({ state: 'UNCONFIRMED', timestamp: new Date(0) }), NOW, 24)),
    );
    const m = moneyAtStake([noRate, oldOrphan, age], RATES);
    expect(m.noFigure).toEqual({ total: 2, inPeriod: 1, carriedOver: 1 });
    expect(m.noMoney).toEqual({ total: 1, inPeriod: 1, carriedOver: 0 });
    expect(m.shortfalls.total.isZero() && m.surpluses.total.isZero()).toBe(true);
  });

  it('stores its figures beside the earlier keys, sums them over accounts, and says them in words', () => {
    const f = stakeFigures(moneyAtStake([withdrawal('w1', true), orphan('SELL', false)], RATES));
    // the earlier keys stay: the absolute impacts
    expect([f.total, f.inPeriod, f.carriedOver, f.unvalued]).toEqual(['2002.01', '1002', '1000.01', 0]);
    expect(f.shortfalls).toEqual({ total: '-1002', inPeriod: '-1002', carriedOver: '0' });
    expect(stakeLines(f)).toEqual([
      'shortfalls USD -1,002.00 (this period -1,002.00, carried over 0.00)',
      'surpluses USD 1,000.01 (this period 0.00, carried over 1,000.01)',
      '0 open breaks without a USD figure (0 this period, 0 carried over); 0 that move no money',
    ]);
    const both = sumStakeFigures([f, f])!;
    expect([both.shortfalls!.total, both.surpluses!.total, both.total]).toEqual(['-2004', '2000.02', '4004.02']);
    // figures stored before shortfalls and surpluses were told apart: no sum passes for the whole
    expect(sumStakeFigures([f, { total: '5', inPeriod: '5', carriedOver: '0', unvalued: 0 }])).toBeNull();
  });
});
