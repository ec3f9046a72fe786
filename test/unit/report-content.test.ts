import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import { buildMessage } from '../../src/report/email.js';
import { amountOrText, isAmount, numberFormat } from '../../src/report/cells.js';
import { openBreakCounts, type ReportedBreak } from '../../src/domain/index.js';
import type { Changes, RunInfo, Totals } from '../../src/report/model.js';
import { Precision, splitSymbol } from '../../src/report/precision.js';
import { BreakIndex, fillRow } from '../../src/report/sheets.js';
import { ageDays, sortBreaks } from '../../src/report/breaks-sheet.js';
import { headline, periodLabel, summaryRows } from '../../src/report/summary.js';

const makeRun = (overrides: Partial<RunInfo> = {}): RunInfo => ({
  id: 'r1',
  account: 'default',
  command: 'run',
  status: 'succeeded',
  periodFrom: '2026-11-01',
  periodTo: '2026-11-02',
  startedAt: new Date('2026-11-02T02:00:00Z'),
  finishedAt: null,
  failedStage: null,
  error: null,
  stages: {},
  counts: { partnerOrders: 3, fills: 10 },
  requests: {},
  ruleResults: [{ code: 'P_FEE_USD', severity: 'medium', description: 'd', status: 'passed', checked: 3, breaks: 0 }],
  rulesetVersion: '1',
  configHash: 'h',
  ...overrides,
});

const makeBreak = (overrides: Partial<ReportedBreak> = {}): ReportedBreak => ({
  code: 'P_FEE_USD',
  key: 'o1',
  severity: 'medium',
  currency: 'USD',
  expected: '1.00',
  actual: '1.10',
  difference: '0.10',
  message: null,
  detail: null,
  status: 'open',
  firstSeenRun: 'r0',
  firstSeenAt: new Date('2026-10-30T02:00:00Z'),
  lastSeenRun: 'r1',
  lastSeenAt: new Date('2026-11-02T02:00:00Z'),
  resolvedRun: null,
  resolvedAt: null,
  reopenedCount: 0,
  inPeriod: true,
  ...overrides,
});
const NONE = openBreakCounts([]);

describe('headline', () => {
  it('is green only with results and nothing open', () => {
    expect(headline(makeRun(), NONE)).toMatchObject({ reconciled: true, text: 'RECONCILED: 2026-11-01, no open breaks' });
    expect(headline(makeRun({ ruleResults: [] }), NONE).reconciled).toBe(false);
    expect(headline(makeRun({ status: 'failed', failedStage: 'sync' }), NONE).text).toBe('NOT RECONCILED: the run failed at sync');
  });
  it('counts open breaks by severity', () => {
    const open = openBreakCounts([makeBreak({ severity: 'high' }), makeBreak(), makeBreak({ severity: 'low', inPeriod: false }), makeBreak({ severity: 'high' })]);
    expect(headline(makeRun(), open).text).toBe('NOT RECONCILED: 4 open breaks (2 high, 1 medium, 1 low)');
    expect(headline(makeRun(), open).detail).toBe('Period 2026-11-01: 3 of this period, 1 carried over');
  });
  it('names the period with its last day inclusive', () => {
    expect(periodLabel('2026-11-01', '2026-11-02')).toBe('2026-11-01');
    expect(periodLabel('2026-11-01', '2026-11-08')).toBe('2026-11-01 to 2026-11-07');
  });
});

describe('breaks', () => {
  it('sort by severity, then age (oldest first)', () => {
    const sorted = sortBreaks([
      makeBreak({ key: 'low', severity: 'low', firstSeenAt: new Date('2020-01-01') }),
      makeBreak({ key: 'med-new', firstSeenAt: new Date('2026-11-01') }),
      makeBreak({ key: 'high', severity: 'high', firstSeenAt: new Date('2026-11-01') }),
      makeBreak({ key: 'med-old', firstSeenAt: new Date('2026-10-01') }),
    ]);
    expect(sorted.map((b) => b.key)).toEqual(['high', 'med-old', 'med-new', 'low']);
    expect(ageDays(new Date('2026-10-30T02:00:00Z'), new Date('2026-11-02T01:59:59Z'))).toBe(2);
  });
  it('index highlights rows by the rules of their sheet only', () => {
    const index = new BreakIndex([makeBreak({ code: 'E_FEE_RATE', key: '42' }), makeBreak({ code: 'E_FILL_QTY', key: '42' })]);
    expect(index.codes('42', ['E_FILL_ORPHAN', 'E_FEE_RATE'])).toEqual(['E_FEE_RATE']);
    expect(index.codes('42', ['E_'])).toEqual(['E_FEE_RATE', 'E_FILL_QTY']);
    expect(index.codes('43', ['E_'])).toEqual([]);
    // one rule, two kinds of key: the check in the message says which entity the id names
    const symbolRules = new BreakIndex([
      makeBreak({ code: 'E_SYMBOL_RULES', key: '7', message: 'order quantity below the minimum order size' }),
      makeBreak({ code: 'E_SYMBOL_RULES', key: '8', message: 'qty not a multiple of the lot size 0.0001' }),
    ]);
    expect(symbolRules.codes('7', ['E_SYMBOL_RULES'], 'order')).toEqual(['E_SYMBOL_RULES']);
    expect(symbolRules.codes('7', ['E_SYMBOL_RULES'], 'fill')).toEqual([]);
    expect(symbolRules.codes('8', ['E_SYMBOL_RULES'], 'fill')).toEqual(['E_SYMBOL_RULES']);
    expect(symbolRules.codes('8', ['E_SYMBOL_RULES'], 'order')).toEqual([]);
  });
  it('keeps non-numeric expectations as text', () => {
    expect(amountOrText('present', 2)).toBe('present');
    expect(isAmount(amountOrText('-0.50', 2))).toBe(true);
  });
});

describe('precision', () => {
  const precision = new Precision({
    partner: new Map([['EUR', { precision: 2, type: 'FIAT' }]]),
    symbols: new Map([['ETH-EUR', { base: 'ETH', counter: 'EUR', baseScale: 18, counterScale: 2, priceScale: 2 }]]),
  });
  it('uses snapshots, then 2 for fiat and 8 for crypto', () => {
    expect(precision.partner('EUR')).toBe(2);
    expect(precision.exchange('ETH')).toBe(18);
    expect(precision.partner('GBP')).toBe(2);
    expect(precision.partner('SOL')).toBe(8);
    expect(precision.symbol('BTC-USD')).toMatchObject({ qty: 8, counter: 2, base: 'BTC', counterCode: 'USD' });
    expect(splitSymbol('BTC-EUR')).toEqual(['BTC', 'EUR']);
  });
  it('formats a fill at the symbol scales and names the fee currency', () => {
    const row = fillRow(
      { execId: '1', exOrdId: '2', tradeId: '1', side: 'BUY', symbol: 'ETH-EUR', price: new Decimal('2000.5'), qty: new Decimal('1.000000000000000001'), fee: new Decimal('0.1'), timestamp: new Date(0) },
      precision,
      new BreakIndex([]),
      'counter',
    );
    expect(row.cells[10]).toBe('EUR');
    expect(row.cells[7]).toMatchObject({ dp: 18 });
    expect(row.tone).toBeUndefined();
    expect(numberFormat(2)).toBe('#,##0.00;[Red]-#,##0.00');
  });
});

describe('summary rows', () => {
  const totals: Totals = { partner: [], fills: [], deposits: [], withdrawals: [] };
  const changes: Changes = { previous: null, opened: [], reopened: [], resolved: [], stillOpen: 0 };
  it('put the headline first and state every rule and assumption', () => {
    const rows = summaryRows({
      run: makeRun({ ruleResults: [{ code: 'P_WEBHOOK_GAP', severity: 'low', description: 'webhook gap', status: 'not_checked', checked: 0, breaks: 0, reason: 'webhooks not configured' }] }),
      openBreaks: [],
      counts: NONE,
      changes,
      totals,
      assumptions: [['Fill fee currency', 'counter']],
      precision: Precision.empty(),
      now: new Date('2026-11-02T03:00:00Z'),
    });
    expect(rows[0]).toMatchObject({ tone: 'ok' });
    expect(rows[0]!.cells[0]).toBe('RECONCILED: 2026-11-01, no open breaks');
    const rule = rows.find((r) => r.cells[0] === 'P_WEBHOOK_GAP')!;
    expect(rule.cells[2]).toBe('not checked');
    expect(String(rule.cells[6])).toContain('webhooks not configured');
    expect(rows.some((r) => r.cells[0] === 'Fill fee currency' && r.cells[1] === 'counter')).toBe(true);
    expect(rows.some((r) => r.cells[0] === 'Previous run' && String(r.cells[1]).includes('first run'))).toBe(true);
  });
});

describe('summary: API requests', () => {
  const input = (run: RunInfo) => ({
    run,
    openBreaks: [],
    counts: NONE,
    changes: { previous: null, opened: [], reopened: [], resolved: [], stillOpen: 0 },
    totals: { partner: [], fills: [], deposits: [], withdrawals: [] },
    assumptions: [],
    precision: Precision.empty(),
    now: new Date('2026-11-02T03:00:00Z'),
  });
  /** The rows of the "API requests" table, up to the blank row after it. */
  const table = (run: RunInfo) => {
    const rows = summaryRows(input(run));
    const start = rows.findIndex((r) => r.cells[0] === 'API requests');
    const end = rows.findIndex((r, i) => i > start && r.cells.length === 0);
    return rows.slice(start + 1, end).map((r) => r.cells.slice(0, 6));
  };

  it('lists each endpoint with its rate limit and time at it, totals per API and over all', () => {
    const requests = {
      exchange: { 'GET /fills': { requests: 41, retries: 0, perSecond: 20 }, 'GET /deposits/{id}': { requests: 3, retries: 1, perSecond: 20 } },
      partner: { 'GET /orders': { requests: 400, retries: 1, perSecond: 100 }, 'GET /currencies': { requests: 3, retries: 0, perSecond: 10 } },
    };
    expect(table(makeRun({ requests }))).toEqual([
      ['API', 'Endpoint', 'Requests', 'Retries', 'Rate limit (/s)', 'Time at that rate (s)'],
      ['Partner API', 'GET /currencies', 3, 0, 10, 0.3],
      ['Partner API', 'GET /orders', 400, 1, 100, 4],
      ['Partner API', 'total', 403, 1, null, 4.3],
      ['Exchange API', 'GET /deposits/{id}', 3, 1, 20, 0.15],
      ['Exchange API', 'GET /fills', 41, 0, 20, 2.05],
      ['Exchange API', 'total', 44, 1, null, 2.2],
      ['All APIs', 'total', 447, 2, null, 6.5],
    ]);
  });

  it('says so when the run made no request', () => {
    expect(table(makeRun())).toEqual([['API', 'Endpoint', 'Requests', 'Retries', 'Rate limit (/s)', 'Time at that rate (s)'], ['(no API requests recorded for this run)']]);
  });
});

describe('open break counts', () => {
  it('split every open break into this period and carried over, per severity and per rule, most first', () => {
    const counts = openBreakCounts([
      makeBreak({ code: 'E_FEE_RATE', severity: 'medium' }),
      makeBreak({ code: 'E_BALANCE_ROLL', severity: 'high', inPeriod: false }),
      makeBreak({ code: 'E_FEE_RATE', severity: 'medium', inPeriod: false }),
      makeBreak({ code: 'X_DEPOSIT_MISSING', severity: 'high' }),
      makeBreak({ code: 'S_ODD', severity: 'urgent' as never }),
    ]);
    expect(counts).toEqual({
      total: 5,
      inPeriod: 3,
      carriedOver: 2,
      severity: { high: { total: 2, inPeriod: 1, carriedOver: 1 }, medium: { total: 2, inPeriod: 1, carriedOver: 1 }, low: { total: 0, inPeriod: 0, carriedOver: 0 } },
      rules: [
        { code: 'E_FEE_RATE', severity: 'medium', total: 2, inPeriod: 1, carriedOver: 1 },
        { code: 'E_BALANCE_ROLL', severity: 'high', total: 1, inPeriod: 0, carriedOver: 1 },
        { code: 'S_ODD', severity: 'urgent', total: 1, inPeriod: 1, carriedOver: 0 },
        { code: 'X_DEPOSIT_MISSING', severity: 'high', total: 1, inPeriod: 1, carriedOver: 0 },
      ],
    });
  });
});

describe('message', () => {
  it('has the period, the open-break count and the two counts in the subject and the headline in both bodies', () => {
    const counts = openBreakCounts([makeBreak({ severity: 'high' }), makeBreak({ inPeriod: false })]);
    const m = buildMessage({ run: makeRun(), counts, attachmentName: 'x.xlsx' });
    expect(m.subject).toBe('ramp-recon 2026-11-01: 2 open breaks (1 high): 1 of this period, 1 carried over');
    expect(m.text).toContain('NOT RECONCILED: 2 open breaks (1 high, 1 medium, 0 low)');
    expect(m.text).toContain('Open breaks: 2 (high 1, medium 1, low 0)\n  of this period: 1 (high 1, medium 0, low 0)\n  carried over: 1 (high 0, medium 1, low 0)');
    expect(m.text).toContain('  P_FEE_USD: 2 (1 / 1; passed in this run (3 checked))');
    expect(m.html).toContain('NOT RECONCILED');
    expect(m.html).toContain('x.xlsx');
    const ok = buildMessage({ run: makeRun(), counts: NONE, attachmentName: 'x.xlsx' });
    expect(ok.subject).toBe('ramp-recon 2026-11-01: reconciled, 0 open breaks');
  });
  it('lists every rule with open breaks, none cut', () => {
    const codes = Array.from({ length: 14 }, (_, i) => `R_${String(i).padStart(2, '0')}`);
    const counts = openBreakCounts(codes.map((code) => makeBreak({ code })));
    const m = buildMessage({ run: makeRun(), counts, attachmentName: 'x.xlsx' });
    for (const code of codes) {
      expect(m.text).toContain(`  ${code}: 1 (1 / 0;`);
      expect(m.html).toContain(`<td>${code}</td>`);
    }
  });
  it('says that a rule not checked in this run keeps the breaks earlier runs left open, instead of contradicting itself', () => {
    const run = makeRun({ ruleResults: [{ code: 'E_BALANCE_ROLL', severity: 'high', description: 'roll', status: 'not_checked', checked: 0, breaks: 0, reason: 'fewer than two balance snapshots' }] });
    const m = buildMessage({ run, counts: openBreakCounts([makeBreak({ code: 'E_BALANCE_ROLL', severity: 'high', inPeriod: false })]), attachmentName: 'x.xlsx' });
    expect(m.text).toContain('  E_BALANCE_ROLL: 1 (0 / 1; not checked in this run (fewer than two balance snapshots): its open breaks are as earlier runs left them)');
    expect(m.text).toContain('Not checked in this run: E_BALANCE_ROLL (fewer than two balance snapshots)');
  });
  it('escapes HTML', () => {
    const m = buildMessage({ run: makeRun({ id: '<b>' }), counts: NONE, attachmentName: 'a&b.xlsx' });
    expect(m.html).toContain('&lt;b&gt;');
    expect(m.html).toContain('a&amp;b.xlsx');
  });
});
