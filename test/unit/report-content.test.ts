import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import { buildMessage, messageSubject } from '../../src/report/email.js';
import { buildDigest, topBreaks, usdImpact } from '../../src/report/digest.js';
import { UsdRates } from '../../src/report/usd-rates.js';
import { amountOrText, isAmount, numberFormat } from '../../src/report/cells.js';
import { breakId, NO_WORKFLOW, openBreakCounts, type LateBreak, type ReportedBreak } from '../../src/domain/index.js';
import type { BalanceRollRec, RunInfo, Totals } from '../../src/domain/index.js';
import { Precision, splitSymbol } from '../../src/report/precision.js';
import { BreakIndex, fillRow } from '../../src/report/sheets.js';
import { ageDays, breakRow, breaksSpec, sortBreaks } from '../../src/report/breaks-sheet.js';
import { LATE_LISTED_IN_MAIL } from '../../src/report/late-data.js';
import { lateData } from '../../src/report/json-summary.js';
import { moneyAtStake, stakeFigures } from '../../src/report/money-at-stake.js';
import {
  balanceTotals,
  feeDays,
  finishedTime,
  headline,
  PARTIAL_MEANING,
  periodLabel,
  reportFileNameOf,
  stagesInRunOrder,
} from '../../src/report/summary.js';
import { summaryRows, type SummaryInput } from '../../src/report/summary-sheet.js';
import { reportFileName } from '../../src/stages/report.js';
import { makeBreak, makeRun } from '../helpers/report-factories.js';

const explained = { ...NO_WORKFLOW, status: 'explained' as const, explanation: 'known' };
const NONE = openBreakCounts([]);

describe('headline', () => {
  it('is green only with results and nothing open', () => {
    expect(headline(makeRun(), NONE)).toMatchObject({
      reconciled: true,
      text: 'RECONCILED: 2026-11-01, no open breaks',
    });
    expect(headline(makeRun({ ruleResults: [] }), NONE).reconciled).toBe(false);
    expect(headline(makeRun({ status: 'failed', failedStage: 'sync' }), NONE).text).toBe(
      'FAILED in sync: 2026-11-01 not reconciled',
    );
  });
  it('counts open breaks by severity', () => {
    const open = openBreakCounts([
      makeBreak({ severity: 'high' }),
      makeBreak(),
      makeBreak({ severity: 'low', inPeriod: false }),
      makeBreak({ severity: 'high' }),
    ]);
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
  it('index highlights the rows of the record a break names, by its kind and key', () => {
    const index = new BreakIndex([
      makeBreak({ code: 'E_FEE_RATE', key: '42', entity: 'fill' }),
      makeBreak({ code: 'E_FILL_QTY', key: '42', entity: 'exchangeOrder' }),
      makeBreak({ code: 'E_SYMBOL_RULES', key: '42', entity: 'fill' }),
    ]);
    expect(index.codes('fill', '42')).toEqual(['E_FEE_RATE', 'E_SYMBOL_RULES']);
    expect(index.codes('exchangeOrder', '42')).toEqual(['E_FILL_QTY']);
    expect(index.codes('fill', '43')).toEqual([]);
    expect(index.codes('fill', null)).toEqual([]);
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
      {
        execId: '1',
        exOrdId: '2',
        tradeId: '1',
        side: 'BUY',
        symbol: 'ETH-EUR',
        price: new Decimal('2000.5'),
        qty: new Decimal('1.000000000000000001'),
        fee: new Decimal('0.1'),
        timestamp: new Date(0),
      },
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
  it('put the headline first and state every rule and assumption', () => {
    const rows = summaryRows(
      summaryInput(
        makeRun({
          ruleResults: [
            {
              code: 'P_WEBHOOK_GAP',
              severity: 'low',
              description: 'webhook gap',
              status: 'not_checked',
              checked: 0,
              breaks: 0,
              reason: 'webhooks not configured',
            },
          ],
        }),
        [],
        {
          assumptions: [['Fill fee currency', 'counter']],
        },
      ),
    );
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
      exchange: {
        'GET /fills': { requests: 41, retries: 0, perSecond: 20 },
        'GET /deposits/{id}': { requests: 3, retries: 1, perSecond: 20 },
      },
      partner: {
        'GET /orders': { requests: 400, retries: 1, perSecond: 100 },
        'GET /currencies': { requests: 3, retries: 0, perSecond: 10 },
      },
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
    expect(table(makeRun())).toEqual([
      ['API', 'Endpoint', 'Requests', 'Retries', 'Rate limit (/s)', 'Time at that rate (s)'],
      ['(no API requests recorded for this run)'],
    ]);
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
      explained: 0,
      severity: {
        high: { total: 2, inPeriod: 1, carriedOver: 1 },
        medium: { total: 2, inPeriod: 1, carriedOver: 1 },
        low: { total: 0, inPeriod: 0, carriedOver: 0 },
      },
      rules: [
        { code: 'E_FEE_RATE', severity: 'medium', total: 2, inPeriod: 1, carriedOver: 1, explained: 0 },
        { code: 'E_BALANCE_ROLL', severity: 'high', total: 1, inPeriod: 0, carriedOver: 1, explained: 0 },
        { code: 'S_ODD', severity: 'urgent', total: 1, inPeriod: 1, carriedOver: 0, explained: 0 },
        { code: 'X_DEPOSIT_MISSING', severity: 'high', total: 1, inPeriod: 1, carriedOver: 0, explained: 0 },
      ],
    });
  });
});

const RATES = new UsdRates({
  balances: [
    { currency: 'BTC', rate: new Decimal('50000') },
    { currency: 'EUR', rate: new Decimal('1.1') },
  ],
});
const NOW = new Date('2026-11-02T03:00:00Z');
/** The message as deliver builds it: from the counts and the digest stored with the workbook. */
const message = (run: RunInfo, breaks: ReportedBreak[], attachmentName = 'x.xlsx') => {
  const counts = openBreakCounts(breaks);
  const digest = buildDigest({ run, openBreaks: breaks, counts, rates: RATES, now: NOW, attachmentName });
  return buildMessage({ run, counts, digest, attachmentName });
};

describe('message', () => {
  it('has the period and the two counts in the subject and the headline in both bodies', () => {
    const m = message(makeRun(), [makeBreak({ severity: 'high' }), makeBreak({ inPeriod: false })]);
    expect(m.subject).toBe('ramp-recon 2026-11-01: 2 open breaks (1 this period, 1 carried over)');
    expect(m.text).toContain('NOT RECONCILED: 2 open breaks (1 high, 1 medium, 0 low)');
    expect(m.text).toContain('Status: not reconciled: 2 open breaks (2 unexplained, 0 explained)');
    expect(m.text).toContain(
      'Open breaks: 2 (high 1, medium 1, low 0)\n  of this period: 1 (high 1, medium 0, low 0)\n  carried over: 1 (high 0, medium 1, low 0)\n  explained: 0',
    );
    expect(m.text).toContain('  P_FEE_USD: 2 (1 / 1; passed in this run (3 checked))');
    expect(m.html).toContain('NOT RECONCILED');
    expect(m.html).toContain('x.xlsx');
    expect(message(makeRun(), []).subject).toBe('ramp-recon 2026-11-01: reconciled, no open breaks');
    expect(message(makeRun({ periodTo: '2026-11-05', startedAt: new Date('2026-11-05T02:00:00Z') }), []).subject).toBe(
      'ramp-recon 2026-11-01 to 2026-11-04: reconciled, no open breaks',
    );
  });
  it('marks a period that was not over when its run started as partial, in the subject, both bodies and the Summary', () => {
    // started on the period's own day: its records were still arriving
    const partial = makeRun({ startedAt: new Date('2026-11-01T18:00:00Z') });
    const m = message(partial, [makeBreak({ severity: 'high' })]);
    expect(m.subject).toBe('ramp-recon 2026-11-01 (partial): 1 open break (1 this period, 0 carried over)');
    expect(m.text).toContain(`Period 2026-11-01: ${PARTIAL_MEANING}`);
    expect(m.html).toContain('its records were still arriving');
    const rows = summaryRows(summaryInput(partial, []));
    expect(rows.find((r) => r.cells[1] === PARTIAL_MEANING)?.cellTones).toEqual({ 1: 'medium' });
    // started the next day: complete
    const complete = makeRun({ startedAt: new Date('2026-11-02T00:00:00Z') });
    expect(message(complete, []).subject).toBe('ramp-recon 2026-11-01: reconciled, no open breaks');
    expect(summaryRows(summaryInput(complete, [])).some((r) => r.cells[1] === PARTIAL_MEANING)).toBe(false);
  });
  it('without the workbook says why and where it is, in both bodies, instead of "attached"', () => {
    const run = makeRun();
    const counts = openBreakCounts([]);
    const digest = buildDigest({ run, openBreaks: [], counts, rates: RATES, now: NOW, attachmentName: 'w.xlsx' });
    const why = {
      reason: 'the message with it would be 12.3 MB, over email.maxMessageBytes',
      path: '/r/w.xlsx',
      host: 'h1',
    };
    const m = buildMessage({ run, counts, digest, attachmentName: 'w.xlsx', notAttached: why });
    const sentence =
      'The workbook w.xlsx is not attached: the message with it would be 12.3 MB, over email.maxMessageBytes. ' +
      'Everything in this message is taken from it; where it is: see the last line.';
    expect(m.text).toContain(sentence);
    expect(m.html).toContain(sentence);
    // the path is on the one line that names paths, the last
    expect(m.text.trimEnd().split('\n').at(-1)).toBe('Where the files are, on h1: the workbook /r/w.xlsx.');
    expect(m.html).toContain('Where the files are, on h1: the workbook /r/w.xlsx.');
    expect(m.text).not.toContain('is attached');
    expect(message(run, [], 'w.xlsx').text).toContain('The workbook w.xlsx is attached;');
  });
  it('says when breaks are explained, all of them or some, and when the run failed', () => {
    const all = message(makeRun(), [
      makeBreak({ workflow: explained }),
      makeBreak({ key: 'o2', inPeriod: false, workflow: explained }),
    ]);
    expect(all.subject).toBe('ramp-recon 2026-11-01: 2 open breaks (1 this period, 1 carried over), all explained');
    expect(all.text).toContain('RECONCILED WITH EXPLANATIONS: 2 open breaks, all explained');
    expect(all.html).toContain('#FFEB9C');
    const some = message(makeRun(), [makeBreak({ workflow: explained }), makeBreak({ key: 'o2' })]);
    expect(some.subject).toBe('ramp-recon 2026-11-01: 2 open breaks (2 this period, 0 carried over), 1 explained');
    expect(some.text).toContain('  P_FEE_USD: 2 (2 / 0; 1 explained; passed');
    const failed = message(makeRun({ status: 'failed', failedStage: 'sync.exchange', error: 'HTTP 500' }), [
      makeBreak(),
    ]);
    // the run judged the breaks before it failed (it has rule results): they are not "last known"
    expect(failed.subject).toBe('ramp-recon 2026-11-01: FAILED in sync.exchange, not reconciled (1 open break)');
    expect(failed.text).toContain('Status: failed in sync.exchange: HTTP 500');
  });
  it('lists every rule with open breaks, none cut', () => {
    const codes = Array.from({ length: 14 }, (_, i) => `R_${String(i).padStart(2, '0')}`);
    const m = message(
      makeRun(),
      codes.map((code) => makeBreak({ code })),
    );
    for (const code of codes) {
      expect(m.text).toContain(`  ${code}: 1 (1 / 0;`);
      expect(m.html).toContain(`<td>${code}</td>`);
    }
  });
  it('names the five breaks to look at first in words, with age and USD impact, the same in text and html', () => {
    const breaks = [
      makeBreak({ key: 'small', currency: 'EUR', difference: '0.10', firstSeenAt: new Date('2026-11-01T02:00:00Z') }),
      makeBreak({ key: 'big', currency: 'BTC', difference: '-0.01', firstSeenAt: new Date('2026-11-01T02:00:00Z') }),
      makeBreak({ key: 'mid', currency: 'EUR', difference: '100', firstSeenAt: new Date('2026-11-01T02:00:00Z') }),
      makeBreak({ key: 'eur2', currency: 'EUR', difference: '1', firstSeenAt: new Date('2026-11-01T02:00:00Z') }),
      makeBreak({
        code: 'E_STALE',
        entity: 'deposit',
        unit: 'hours',
        key: 'old',
        currency: 'BTC',
        expected: '24',
        actual: '500',
        difference: '476',
        firstSeenAt: new Date('2026-10-01T02:00:00Z'),
      }),
      makeBreak({
        code: 'E_STALE',
        entity: 'deposit',
        unit: 'hours',
        key: 'older-but-explained',
        currency: 'BTC',
        difference: '9',
        firstSeenAt: new Date('2026-09-01T02:00:00Z'),
        workflow: explained,
      }),
      makeBreak({ key: 'new', currency: 'XYZ', difference: '5', firstSeenAt: new Date('2026-11-02T01:00:00Z') }),
      // no money at stake: never before a break that has some, however old
      makeBreak({ key: 'zero', currency: 'EUR', difference: '0', firstSeenAt: new Date('2026-08-01T02:00:00Z') }),
    ];
    const top = topBreaks(breaks, RATES, NOW);
    expect(top.map((b) => [b.key, b.why, b.usdImpact, b.ageDays])).toEqual([
      ['big', 'largest', '-500.00', 1],
      ['mid', 'largest', '110.00', 1],
      ['eur2', 'largest', '1.10', 1],
      ['small', 'largest', '0.11', 1],
      ['zero', 'oldest', '0.00', 93],
    ]);
    expect(topBreaks(breaks, RATES, NOW, 6).map((b) => b.key)).toEqual(['big', 'mid', 'eur2', 'small', 'zero', 'old']);
    expect(
      usdImpact(
        makeBreak({ code: 'E_STALE', entity: 'deposit', unit: 'hours', currency: 'BTC', difference: '5' }),
        RATES,
      ),
    ).toBeNull();
    const m = message(makeRun(), breaks);
    for (const b of top) {
      expect(m.text).toContain(b.sentence);
      expect(m.html).toContain(
        b.sentence.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'),
      );
    }
    // one line each: code, record and impact first
    expect(m.text).toMatch(/^ {2}1\. P_FEE_USD order big: USD -500\.00; medium, 1 day old, this period\. \S/m);
    expect(m.text).toMatch(/^ {2}5\. P_FEE_USD order zero: USD 0\.00; medium, 93 days old, this period\. \S/m);
  });
  it('says that a rule not checked in this run keeps the breaks earlier runs left open, instead of contradicting itself', () => {
    const run = makeRun({
      ruleResults: [
        {
          code: 'E_BALANCE_ROLL',
          severity: 'high',
          description: 'roll',
          status: 'not_checked',
          checked: 0,
          breaks: 0,
          reason: 'fewer than two balance snapshots',
        },
      ],
    });
    const m = message(run, [makeBreak({ code: 'E_BALANCE_ROLL', severity: 'high', inPeriod: false })]);
    expect(m.text).toContain(
      '  E_BALANCE_ROLL: 1 (0 / 1; not checked in this run (fewer than two balance snapshots): its open breaks are as earlier runs left them)',
    );
    expect(m.text).toContain('Not checked in this run: E_BALANCE_ROLL (fewer than two balance snapshots)');
  });
  it('escapes HTML', () => {
    const m = message(makeRun({ id: '<b>' }), [], 'a&b.xlsx');
    expect(m.html).toContain('&lt;b&gt;');
    expect(m.html).toContain('a&amp;b.xlsx');
  });
  it("the subject is the digest's period with the stored counts, whatever the run row says later", () => {
    const breaks = [makeBreak()];
    const counts = openBreakCounts(breaks);
    const digest = buildDigest({
      run: makeRun({ status: 'running' }),
      openBreaks: breaks,
      counts,
      rates: RATES,
      now: NOW,
      attachmentName: 'x.xlsx',
    });
    // delivery failed then retried: the run row now says failed at deliver; the mail still describes its attachment
    const later = buildMessage({
      run: makeRun({ status: 'failed', failedStage: 'deliver' }),
      counts,
      digest,
      attachmentName: 'x.xlsx',
    });
    expect(later.subject).toBe(messageSubject(digest, counts));
    expect(later.text).toContain(`Status: ${digest.headline.status}`);
  });
});

describe('period label and file name', () => {
  it('one day is the day; several days name the first and the last, both inclusive', () => {
    expect(periodLabel('2026-11-21', '2026-11-22')).toBe('2026-11-21');
    expect(periodLabel('2026-11-18', '2026-11-22')).toBe('2026-11-18 to 2026-11-21');
    expect(periodLabel('2026-11-30', '2026-12-01')).toBe('2026-11-30');
  });
  it('the file name carries the same label', () => {
    expect(reportFileName({ periodFrom: '2026-11-21', periodTo: '2026-11-22', id: 'r1' })).toBe(
      'ramp-recon_2026-11-21_r1.xlsx',
    );
    expect(reportFileNameOf({ periodFrom: '2026-11-18', periodTo: '2026-11-22', id: 'r1' })).toBe(
      'ramp-recon_2026-11-18_to_2026-11-21_r1.xlsx',
    );
  });
  it('the Summary shows Period with that label and no exclusive "to"', () => {
    const rows = summaryRows(summaryInput(makeRun({ periodFrom: '2026-11-18', periodTo: '2026-11-22' })));
    expect(rows.find((r) => r.cells[0] === 'Period')?.cells[1]).toBe('2026-11-18 to 2026-11-21');
    expect(rows.some((r) => r.cells.some((c) => typeof c === 'string' && /exclusive/.test(c)))).toBe(false);
    expect(rows.some((r) => r.cells[0] === 'Period to (exclusive)' || r.cells[0] === 'Period from')).toBe(false);
  });
});

function summaryInput(run: RunInfo, breaks: ReportedBreak[] = [], extra: Partial<SummaryInput> = {}): SummaryInput {
  return {
    run,
    openBreaks: breaks,
    counts: openBreakCounts(breaks),
    changes: { previous: null, opened: [], reopened: [], resolved: [], stillOpen: 0 },
    totals: { partner: [], fills: [], deposits: [], withdrawals: [] },
    assumptions: [],
    precision: Precision.empty(),
    now: NOW,
    ...extra,
  };
}

describe('money at stake', () => {
  it('shows shortfalls and surpluses apart, and the breaks without a figure, on the Summary and in the e-mail', () => {
    const breaks = [
      makeBreak({ key: 'a', currency: 'EUR', difference: '-100000' }),
      makeBreak({ key: 'b', currency: 'BTC', difference: '0.001', inPeriod: false }),
      makeBreak({ key: 'c', currency: 'XYZ', difference: '5' }),
      makeBreak({ key: 'd', code: 'E_STALE', entity: 'deposit', unit: 'hours', currency: 'BTC', difference: '30' }),
      makeBreak({ key: 'e', currency: 'USD', difference: '-0.0004', inPeriod: false }),
    ];
    const m = moneyAtStake(breaks, RATES);
    expect([m.shortfalls.total, m.shortfalls.inPeriod, m.shortfalls.carriedOver].map(String)).toEqual([
      '-110000.0004',
      '-110000',
      '-0.0004',
    ]);
    expect(String(m.surpluses.total)).toBe('50');
    expect(m.noFigure).toEqual({ total: 1, inPeriod: 1, carriedOver: 0 });
    expect(m.noMoney).toEqual({ total: 1, inPeriod: 1, carriedOver: 0 });
    const rows = summaryRows(summaryInput(makeRun(), breaks, { rates: RATES }));
    const at = rows.findIndex((r) => r.cells[0] === 'Money at stake (USD)');
    expect(at).toBe(2);
    expect(rows[at]!.cells).toEqual(['Money at stake (USD)', 'Total', 'This period', 'Carried over']);
    expect(rows[at + 1]!.cells).toEqual([
      'Shortfalls: money missing or gone',
      // the exact sum, shown at two decimals (its exact text goes with the cell)
      { kind: 'amount', value: new Decimal('-110000.0004'), dp: 2 },
      { kind: 'amount', value: new Decimal('-110000'), dp: 2 },
      // a smaller non-zero figure to its first significant digit, never 0.00
      { kind: 'amount', value: new Decimal('-0.0004'), dp: 4 },
    ]);
    expect(rows[at + 2]!.cells.slice(0, 2)).toEqual([
      'Surpluses: money extra',
      { kind: 'amount', value: new Decimal('50'), dp: 2 },
    ]);
    expect(rows[at + 3]!.cells.slice(0, 4)).toEqual(['Open breaks without a USD figure', 1, 1, 0]);
    expect(rows[at + 4]!.cells).toEqual(['Open breaks that move no money', 1, 1, 0]);

    // the e-mail says the same figures, formatted like every USD figure
    const run = makeRun();
    const counts = openBreakCounts(breaks);
    const figures = { moneyAtStake: stakeFigures(m), closingUsd: null, closingUnvalued: [] };
    const digest = buildDigest({
      run,
      openBreaks: breaks,
      counts,
      rates: RATES,
      now: NOW,
      attachmentName: 'w.xlsx',
      figures,
    });
    const mail = buildMessage({ run, counts, digest, attachmentName: 'w.xlsx' });
    expect(mail.text).toContain(
      [
        'Money at stake:',
        '  shortfalls USD -110,000.00 (this period -110,000.00, carried over -0.0004)',
        '  surpluses USD 50.00 (this period 0.00, carried over 50.00)',
        '  1 open break without a USD figure (1 this period, 0 carried over); 1 that move no money',
      ].join('\n'),
    );
    expect(mail.html).toContain('<li>shortfalls USD -110,000.00 (this period -110,000.00, carried over -0.0004)</li>');
  });
});

describe('banner and status', () => {
  const status = (run: RunInfo, breaks: ReportedBreak[]) => {
    const rows = summaryRows(summaryInput(run, breaks));
    return { banner: rows[0]!, status: rows.find((r) => r.cells[0] === 'Status')!.cells[1] as string };
  };
  it('agree: red with an unexplained break, amber when all are explained, green with none, red on a failure', () => {
    const red = status(makeRun({ status: 'running' }), [makeBreak(), makeBreak({ key: 'o2', workflow: explained })]);
    expect(red.banner).toMatchObject({
      tone: 'bad',
      cells: expect.arrayContaining(['NOT RECONCILED: 2 open breaks (0 high, 2 medium, 0 low; 1 explained)']),
    });
    expect(red.status).toBe('not reconciled: 2 open breaks (1 unexplained, 1 explained)');
    const amber = status(makeRun({ status: 'running' }), [
      makeBreak({ workflow: explained }),
      makeBreak({ key: 'o2', workflow: explained }),
    ]);
    expect(amber.banner.tone).toBe('medium');
    expect(amber.banner.cells[0]).toBe('RECONCILED WITH EXPLANATIONS: 2 open breaks, all explained');
    expect(amber.status).toBe('reconciled with explanations: 2 open breaks, all explained');
    const green = status(makeRun({ status: 'running' }), []);
    expect(green.banner.tone).toBe('ok');
    expect(green.status).toBe('reconciled: no open breaks');
    const failed = status(makeRun({ status: 'failed', failedStage: 'sync.exchange', error: 'HTTP 503' }), []);
    expect(failed.banner.cells[0]).toBe('FAILED in sync.exchange: 2026-11-01 not reconciled');
    expect(failed.status).toBe('failed in sync.exchange: HTTP 503');
    // only the e-mail failed: the verdict is the breaks', the status adds the e-mail
    const mail = headline(
      makeRun({ status: 'failed', failedStage: 'deliver', error: 'ECONNREFUSED' }),
      openBreakCounts([]),
    );
    expect(mail).toMatchObject({
      tone: 'ok',
      status: 'reconciled: no open breaks; e-mail not sent (failed at deliver: ECONNREFUSED)',
    });
  });
  it('every banner verdict is its status verdict', () => {
    const cases: Array<[RunInfo, ReportedBreak[]]> = [
      [makeRun(), []],
      [makeRun(), [makeBreak()]],
      [makeRun(), [makeBreak({ workflow: explained })]],
      [makeRun({ ruleResults: [] }), []],
      [makeRun({ status: 'failed', failedStage: 'reconcile' }), [makeBreak()]],
    ];
    for (const [run, breaks] of cases) {
      const h = headline(run, openBreakCounts(breaks));
      // "FAILED in reconcile: ..." / "failed in reconcile: ...": a failure's banner too is its status's verdict
      const verdict = h.text.split(':')[0]!.toLowerCase();
      expect(h.status.startsWith(verdict), `${h.text} / ${h.status}`).toBe(true);
    }
  });
  it('shows explained next to open counts, per severity and per rule', () => {
    const rows = summaryRows(
      summaryInput(makeRun(), [
        makeBreak({ workflow: explained }),
        makeBreak({ key: 'o2' }),
        makeBreak({ code: 'E_FEE_RATE', key: '9', severity: 'high' }),
      ]),
    );
    expect(rows.find((r) => r.cells[0] === 'Severity')?.cells).toEqual([
      'Severity',
      'Open',
      'Of this period',
      'Carried over',
      'Explained',
    ]);
    expect(rows.find((r) => r.cells[0] === 'medium')?.cells).toEqual(['medium', 2, 2, 0, 1]);
    expect(rows.find((r) => r.cells[0] === 'total')?.cells).toEqual(['total', 3, 3, 0, 1]);
    expect(rows.find((r) => r.cells[0] === 'P_FEE_USD')?.cells.slice(0, 6)).toEqual([
      'P_FEE_USD',
      'medium',
      2,
      2,
      0,
      1,
    ]);
  });
});

describe('run times and stages', () => {
  it('lists stages in run order (seq, then start), whatever order the object has', () => {
    const stages = {
      report: { seq: 3, startedAt: '2026-11-02T02:05:00.000Z', status: 'succeeded' },
      'sync.exchange': { seq: 0, startedAt: '2026-11-02T02:00:00.000Z', status: 'succeeded', ms: 1500 },
      reconcile: {
        seq: 2,
        startedAt: '2026-11-02T02:03:00.000Z',
        finishedAt: '2026-11-02T02:04:00.000Z',
        status: 'succeeded',
      },
      'sync.partner': { seq: 1, startedAt: '2026-11-02T02:00:00.000Z', status: 'succeeded', ms: 2500 },
      deliver: { startedAt: '2026-11-02T02:06:00.000Z', status: 'skipped' },
    };
    expect(stagesInRunOrder(stages).map(([n]) => n)).toEqual([
      'sync.exchange',
      'sync.partner',
      'reconcile',
      'report',
      'deliver',
    ]);
    const rows = summaryRows(summaryInput(makeRun({ stages, finishedAt: null })));
    const at = rows.findIndex((r) => r.cells[0] === 'Stage (in run order)');
    expect(rows.slice(at + 1, at + 6).map((r) => r.cells[0])).toEqual([
      'sync.exchange',
      'sync.partner',
      'reconcile',
      'report',
      'deliver',
    ]);
    // written inside the run: the reconcile's end, labelled so
    expect(rows.find((r) => r.cells[0] === 'Reconcile finished (UTC)')?.cells[1]).toEqual(
      new Date('2026-11-02T02:04:00.000Z'),
    );
    const sync = rows.find((r) => r.cells[0] === 'All sync stages');
    expect(sync?.cells[1]).toBe(4);
  });
  it('a finished run shows its finish', () => {
    const at = new Date('2026-11-02T02:10:00Z');
    expect(finishedTime({ finishedAt: at, stages: {} })).toEqual({ label: 'Finished (UTC)', at, note: null });
    expect(finishedTime({ finishedAt: null, stages: {} }).at).toBeNull();
  });
});

describe('balance table', () => {
  const d = (v: string) => new Decimal(v);
  const roll = (
    currency: string,
    o: string,
    c: string,
    flows: Partial<Record<'deposits' | 'withdrawals' | 'bought' | 'sold' | 'fees', string>>,
    openingAt: string,
    closingAt: string,
  ): BalanceRollRec => {
    const f = {
      deposits: d(flows.deposits ?? '0'),
      withdrawals: d(flows.withdrawals ?? '0'),
      bought: d(flows.bought ?? '0'),
      sold: d(flows.sold ?? '0'),
      fees: d(flows.fees ?? '0'),
    };
    const expected = d(o).plus(f.deposits).minus(f.withdrawals).plus(f.bought).minus(f.sold).minus(f.fees);
    return {
      currency,
      opening: d(o),
      ...f,
      expectedClosing: expected,
      actualClosing: d(c),
      residual: d(c).minus(expected),
      firstDivergentDay: null,
      openingAt: new Date(openingAt),
      closingAt: new Date(closingAt),
    };
  };
  const rolls = [
    // listed latest first, as balanceRollOfRun reads them
    roll('BTC', '1.5', '1.4', { sold: '0.1', fees: '0.001' }, '2026-11-02T02:00:00Z', '2026-11-03T02:00:00Z'),
    roll('BTC', '1', '1.5', { deposits: '0.7', withdrawals: '0.2' }, '2026-11-01T02:00:00Z', '2026-11-02T02:00:00Z'),
    roll('EUR', '100', '90', { bought: '5', withdrawals: '15' }, '2026-11-01T02:00:00Z', '2026-11-02T02:00:00Z'),
  ];
  it('opens with the first pair, sums each flow, closes with the last pair, residual = actual - expected', () => {
    const [btc, eur] = balanceTotals(rolls);
    expect(btc).toMatchObject({ currency: 'BTC', pairs: 2 });
    expect(
      [
        btc!.opening,
        btc!.deposits,
        btc!.withdrawals,
        btc!.bought,
        btc!.sold,
        btc!.fees,
        btc!.expectedClosing,
        btc!.actualClosing,
        btc!.residual,
      ].map(String),
    ).toEqual(['1', '0.7', '0.2', '0', '0.1', '0.001', '1.399', '1.4', '0.001']);
    // chained pairs: the period's residual is the sum of the pairs' residuals
    expect(btc!.residual.equals(rolls[0]!.residual!.plus(rolls[1]!.residual!))).toBe(true);
    expect(String(eur!.residual)).toBe('0');
  });
  it('values each closing in USD and totals them, naming currencies without a rate', () => {
    const withXyz = [...rolls, roll('XYZ', '1', '1', {}, '2026-11-01T02:00:00Z', '2026-11-02T02:00:00Z')];
    const rows = summaryRows(summaryInput(makeRun(), [], { balanceRolls: withXyz, rates: RATES }));
    const usd = rows.find((r) => r.cells[0] === 'Actual closing USD')!;
    expect(usd.cells.slice(1).map((c) => (c && typeof c === 'object' && 'value' in c ? String(c.value) : c))).toEqual([
      '70000',
      '99',
      null,
    ]);
    const total = rows.find((r) => r.cells[0] === 'Total closing USD (all currencies)')!;
    expect(String((total.cells[1] as { value: Decimal }).value)).toBe('70099');
    expect(rows.some((r) => r.cells[0] === 'not included (no USD rate): XYZ')).toBe(true);
    expect(rows.find((r) => r.cells[0] === 'Currency' && r.cells[1] === 'BTC')?.cells).toEqual([
      'Currency',
      'BTC',
      'EUR',
      'XYZ',
    ]);
  });
});

describe('totals and fees with the currency named', () => {
  const precision = new Precision({
    partner: new Map([['EUR', { precision: 2, type: 'FIAT' }]]),
    symbols: new Map([['ETH-EUR', { base: 'ETH', counter: 'EUR', baseScale: 8, counterScale: 2, priceScale: 2 }]]),
  });
  it('fills by symbol carry their fee currency in a column of its own', () => {
    const totals: Totals = {
      partner: [],
      fills: [
        { symbol: 'ETH-EUR', fills: 2, qty: new Decimal('1.5'), notional: new Decimal('3000'), fees: new Decimal('3') },
      ],
      deposits: [],
      withdrawals: [],
    };
    const counter = summaryRows({ ...summaryInput(makeRun()), totals, precision }).find(
      (r) => r.cells[0] === 'ETH-EUR',
    )!;
    expect(counter.cells[5]).toBe('EUR');
    expect(counter.cells[4]).toMatchObject({ dp: 2 });
    const base = summaryRows({ ...summaryInput(makeRun(), [], { feeCurrency: 'base' }), totals, precision }).find(
      (r) => r.cells[0] === 'ETH-EUR',
    )!;
    expect(base.cells[5]).toBe('ETH');
    expect(base.cells[4]).toMatchObject({ dp: 8 });
  });
  it('fees per day: one row per day and currency, never adding two currencies, with USD totals', () => {
    const days = feeDays(
      [
        { day: '2026-11-01', currency: 'EUR', fee: new Decimal('2.5'), feeUsd: new Decimal('2.75') },
        { day: '2026-11-01', currency: 'USD', fee: new Decimal('1'), feeUsd: new Decimal('1') },
      ],
      [
        { day: '2026-11-01', symbol: 'ETH-EUR', fee: new Decimal('3') },
        { day: '2026-11-01', symbol: 'BTC-USD', fee: new Decimal('0.5') },
        { day: '2026-11-01', symbol: 'SOL-XYZ', fee: new Decimal('7') },
      ],
      precision,
      'counter',
    );
    expect(
      days.map((x) => [x.day, x.currency, x.partnerFee?.toString() ?? null, x.exchangeFee?.toString() ?? null]),
    ).toEqual([
      ['2026-11-01', 'EUR', '2.5', '3'],
      ['2026-11-01', 'USD', '1', '0.5'],
      ['2026-11-01', 'XYZ', null, '7'],
    ]);
    const rows = summaryRows(summaryInput(makeRun(), [], { feeDays: days, rates: RATES }));
    const dayTotal = rows.find((r) => r.cells[1] === 'day total USD')!;
    expect(String((dayTotal.cells[3] as { value: Decimal }).value)).toBe('3.75');
    // 3 EUR at 1.1 + 0.5 USD; XYZ has no rate and is named
    expect(String((dayTotal.cells[5] as { value: Decimal }).value)).toBe('3.8');
    expect(dayTotal.cells[6]).toContain('XYZ');
  });
});

describe('late data: breaks of earlier days the run opened or resolved', () => {
  const late: LateBreak[] = [
    { code: 'X_DEPOSIT_MISSING', key: 'o9', day: '2026-10-29', event: 'resolved', severity: 'high', message: null },
    { code: 'E_FILL_QTY', key: '1234', day: '2026-10-28', event: 'resolved', severity: 'high', message: null },
    { code: 'P_PARTNER_FEE_RATE', key: 'o7', day: '2026-10-30', event: 'opened', severity: 'medium', message: null },
  ];
  const input = (run: RunInfo) => summaryInput(run);

  it('the Summary says how many and lists each with the day of its record, oldest day first', () => {
    const rows = summaryRows(input(makeRun({ lateBreaks: late })));
    const at = rows.findIndex((r) => r.cells[0] === 'Earlier days changed by late data');
    expect(at).toBeGreaterThan(0);
    expect(rows[at + 1]!.cells[0]).toBe('3 breaks of earlier days changed by late data: 1 opened, 2 resolved');
    expect(rows.slice(at + 3, at + 6).map((r) => [r.cells[1], r.cells[2], r.cells[3]])).toEqual([
      ['resolved', 'E_FILL_QTY', '1234'],
      ['resolved', 'X_DEPOSIT_MISSING', 'o9'],
      ['opened', 'P_PARTNER_FEE_RATE', 'o7'],
    ]);
    const none = summaryRows(input(makeRun()));
    expect(none[none.findIndex((r) => r.cells[0] === 'Earlier days changed by late data') + 1]!.cells[0]).toBe(
      'no break of an earlier day changed',
    );
  });

  it('the e-mail names them in text and html, from the digest stored with the workbook', () => {
    const m = message(makeRun({ lateBreaks: late }), [makeBreak()]);
    expect(m.text).toContain(
      '3 breaks of earlier days changed by late data: 1 opened, 2 resolved:\n  2026-10-28: E_FILL_QTY 1234 resolved (',
    );
    expect(m.text).toContain('  2026-10-30: P_PARTNER_FEE_RATE o7 opened (Partner fee rate)');
    expect(m.html).toContain(
      '<li>2026-10-29: X_DEPOSIT_MISSING o9 resolved (Exchange deposit missing for a paid order)</li>',
    );
    expect(message(makeRun(), [makeBreak()]).text).not.toContain('late data');
    // More than the e-mail lists: the rest is counted, the Summary has them all.
    const many = Array.from({ length: LATE_LISTED_IN_MAIL + 2 }, (_, i) => ({ ...late[0]!, key: `o${i}` }));
    const big = message(makeRun({ lateBreaks: many }), []);
    expect(big.text).toContain(`... and 2 more (see the workbook's Summary)`);
    expect(big.text.match(/X_DEPOSIT_MISSING o\d+ resolved/g)).toHaveLength(LATE_LISTED_IN_MAIL);
  });

  it('the Breaks sheet marks an open break the run opened on late data in "This period?"', () => {
    const b = makeBreak({ code: 'P_PARTNER_FEE_RATE', key: 'o7', inPeriod: false });
    const ctx = { now: NOW, precision: Precision.empty() };
    const column = breaksSpec.columns.findIndex((c) => c.header === 'This period?');
    expect(breakRow(b, { ...ctx, late: new Map(late.map((l) => [breakId(l.code, l.key), l])) }).cells[column]).toBe(
      'no: opened by late data of 2026-10-30',
    );
    expect(breakRow(b, ctx).cells[column]).toBe('no');
    expect(breakRow(makeBreak(), ctx).cells[column]).toBe('yes');
  });

  it('the JSON summary counts them and lists each, oldest day first', () => {
    expect(lateData(late)).toEqual({
      total: 3,
      opened: 1,
      reopened: 0,
      resolved: 2,
      breaks: [
        { code: 'E_FILL_QTY', key: '1234', day: '2026-10-28', event: 'resolved', severity: 'high' },
        { code: 'X_DEPOSIT_MISSING', key: 'o9', day: '2026-10-29', event: 'resolved', severity: 'high' },
        { code: 'P_PARTNER_FEE_RATE', key: 'o7', day: '2026-10-30', event: 'opened', severity: 'medium' },
      ],
    });
  });
});
