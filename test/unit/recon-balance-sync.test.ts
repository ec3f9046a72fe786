import { describe, expect, it } from 'vitest';
import { checkBalanceSanity, rollForward, type DayFlows } from '../../src/rules/balance-roll.js';
import { asText, balanceRollBreaks, coverageBreaks, d, makeSnapshot, quarantineBreaks } from './recon-factories.js';

const flow = (
  currency: string,
  day: string,
  f: Partial<Record<'deposits' | 'withdrawals' | 'bought' | 'sold' | 'fees', string>>,
): DayFlows => ({
  currency,
  day,
  deposits: d(f.deposits ?? '0'),
  withdrawals: d(f.withdrawals ?? '0'),
  bought: d(f.bought ?? '0'),
  sold: d(f.sold ?? '0'),
  fees: d(f.fees ?? '0'),
});

describe('E_BALANCE_ROLL', () => {
  const s1 = makeSnapshot('1', '2026-11-01T02:00:00Z', { ETH: '1.000000000000000001', USD: '5000' });
  const flows = [
    flow('ETH', '2026-11-01', { deposits: '0.5', bought: '0.25' }),
    flow('ETH', '2026-11-02', { withdrawals: '0.100000000000000001' }),
    flow('USD', '2026-11-01', { sold: '500', fees: '0.5' }),
  ];
  it('rolls opening + deposits - withdrawals + bought - sold - fees to the closing', () => {
    const s2 = makeSnapshot('2', '2026-11-03T02:00:00Z', { ETH: '1.65', USD: '4499.5' });
    const figs = rollForward(s1, s2, flows, d(0));
    expect(
      figs.map((f) => [f.currency, f.expectedClosing.toString(), f.residual.toString(), f.firstDivergentDay]),
    ).toEqual([
      ['ETH', '1.65', '0', null],
      ['USD', '4499.5', '0', null],
    ]);
    expect(balanceRollBreaks([figs], d(0))).toEqual([]);
  });
  it('a residual of one unit (18 decimals) is a break; at the tolerance it passes', () => {
    const s2 = makeSnapshot('2', '2026-11-03T02:00:00Z', { ETH: '1.650000000000000001', USD: '4499.5' });
    const figs = rollForward(s1, s2, flows, d(0));
    const [b] = balanceRollBreaks([figs], d(0));
    expect(asText(b!)).toMatchObject({
      code: 'E_BALANCE_ROLL',
      entity: 'balance',
      unit: 'amount',
      key: 'ETH',
      currency: 'ETH',
      expected: '1.65',
      actual: '1.650000000000000001',
      difference: '0.000000000000000001',
    });
    expect(
      balanceRollBreaks([rollForward(s1, s2, flows, d('0.000000000000000001'))], d('0.000000000000000001')),
    ).toEqual([]);
  });
  it('a currency absent from one snapshot is 0 there', () => {
    const s2 = makeSnapshot('2', '2026-11-03T02:00:00Z', { ETH: '1.65', USD: '4499.5', BTC: '0.1' });
    const [b] = balanceRollBreaks([rollForward(s1, s2, flows, d(0))], d(0));
    expect(asText(b!)).toMatchObject({ key: 'BTC', expected: '0', actual: '0.1', difference: '0.1' });
  });
  it('locates the first divergent day where the rolled balance goes negative', () => {
    const a = makeSnapshot('1', '2026-11-01T02:00:00Z', { BTC: '0' });
    const b = makeSnapshot('2', '2026-11-04T02:00:00Z', { BTC: '0' });
    // a withdrawal on the 3rd of coins whose deposit (on the 2nd) was never recorded
    const figs = rollForward(a, b, [flow('BTC', '2026-11-03', { withdrawals: '1' })], d(0));
    expect(figs[0]).toMatchObject({ firstDivergentDay: '2026-11-03' });
    expect(figs[0]!.days.map((x) => x.derivedClosing)).toEqual(['1', '1', '0', '0']);
  });
  it('one break per currency: the latest failing pair in the figures, all in detail', () => {
    const a = makeSnapshot('1', '2026-11-01T02:00:00Z', { BTC: '1' });
    const b = makeSnapshot('2', '2026-11-02T02:00:00Z', { BTC: '2' });
    const c = makeSnapshot('3', '2026-11-03T02:00:00Z', { BTC: '2.5' });
    const [br] = balanceRollBreaks([rollForward(a, b, [], d(0)), rollForward(b, c, [], d(0))], d(0));
    // The break's day is where its latest failing pair went wrong.
    expect(asText(br!)).toMatchObject({ expected: '2', actual: '2.5', difference: '0.5', day: '2026-11-02' });
    expect((br!.detail as { checks: unknown[] }).checks).toHaveLength(2);
  });
});

describe('E_BALANCE_SANITY', () => {
  const line = { currency: 'ETH', balance: d('2'), available: d('2'), balanceLocal: d('4000.02'), rate: d('2000') };
  it('balance_local within the local tolerance; available not above balance', () => {
    expect(checkBalanceSanity(line, d('0.01'))).toBeInstanceOf(Array);
    expect(checkBalanceSanity({ ...line, balanceLocal: d('4000.01') }, d('0.01'))).toEqual([]);
    expect(checkBalanceSanity(line, d('0.01'))).toHaveLength(1);
    expect(
      checkBalanceSanity({ ...line, balanceLocal: d('4000'), available: d('2.000000000000000001') }, d('0.01')),
    ).toHaveLength(1);
  });
});

describe('S_COVERAGE and S_QUARANTINE', () => {
  it('unsettled days and cursors become breaks with their keys', () => {
    const rows = [
      { source: 'partner', stream: 'orders', day: '2026-11-01', settled: false, pages: 3, rows: 120, detail: null },
      { source: 'partner', stream: 'orders', day: '2026-11-02', settled: true, pages: 1, rows: 10, detail: null },
      {
        source: 'exchange',
        stream: 'cursor:fills',
        day: '2026-11-02',
        settled: false,
        pages: 0,
        rows: 0,
        detail: null,
      },
    ];
    expect(coverageBreaks(rows).map((b) => [b.key, b.severity])).toEqual([
      ['partner:orders:2026-11-01', 'high'],
      ['exchange:cursor:fills', 'high'],
    ]);
  });
  it('quarantined records are keyed by their id, else endpoint#position', () => {
    const base = { source: 'exchange', entity: 'fill', reason: 'qty: expected number', firstSeenAt: new Date() };
    const keys = quarantineBreaks([
      { ...base, id: '1', endpoint: '/fills', recordKey: '777', position: 3 },
      { ...base, id: '2', endpoint: '/fills', recordKey: null, position: 4 },
      { ...base, id: '3', endpoint: '/fills', recordKey: '777', position: 3 },
    ]).map((b) => [b.key, b.severity]);
    expect(keys).toEqual([
      ['777', 'medium'],
      ['/fills#4', 'medium'],
    ]);
  });
});
