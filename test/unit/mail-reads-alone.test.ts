/**
 * Issue 45 point 6: both e-mails read alone. The verdict, the money at stake (formatted like every USD figure) and the
 * open breaks to look at first (one line each: code, record, impact) come before the counts; no line names a path of
 * the server or a docs file except the one "Where the files are" line, the last.
 */
import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import { openBreakCounts, type ReportedBreak } from '../../src/domain/index.js';
import { buildDigest } from '../../src/report/digest.js';
import { buildMessage } from '../../src/report/email.js';
import { groupDigest } from '../../src/report/group.js';
import { groupMessage } from '../../src/report/group-mail.js';
import { moneyAtStake, stakeFigures } from '../../src/report/money-at-stake.js';
import { UsdRates } from '../../src/report/usd-rates.js';
import { makeBreak, makeRun } from '../helpers/report-factories.js';
import { account, counts } from '../helpers/group-accounts.js';

const NOW = new Date('2026-11-02T03:00:00Z');
const RATES = new UsdRates({ balances: [{ currency: 'BTC', rate: new Decimal('50000'), fetchedAt: NOW }] });

const BREAKS: ReportedBreak[] = [
  makeBreak({ key: 'o-short', difference: '-4443.125', expected: '5000', actual: '556.875' }),
  makeBreak({ key: 'o-extra', difference: '10', inPeriod: false }),
  makeBreak({ key: 'o-tiny', difference: '-0.0004', expected: '1.2300', actual: '1.2296' }),
  makeBreak({ key: 'o-btc', currency: 'BTC', difference: '-0.00001' }),
  makeBreak({ key: 'o-none', currency: 'XYZ', difference: '5' }),
  makeBreak({
    code: 'E_STALE',
    key: 'dep-1',
    entity: 'deposit',
    unit: 'hours',
    currency: 'BTC',
    expected: '24',
    actual: '50.85',
    difference: '26.85',
    firstSeenAt: new Date('2026-09-01T00:00:00Z'),
  }),
];

function mail(breaks: ReportedBreak[], extra: Partial<Parameters<typeof buildMessage>[0]> = {}) {
  const run = makeRun();
  const c = openBreakCounts(breaks);
  const figures = { moneyAtStake: stakeFigures(moneyAtStake(breaks, RATES)), closingUsd: null, closingUnvalued: [] };
  const digest = buildDigest({
    run,
    openBreaks: breaks,
    counts: c,
    rates: RATES,
    now: NOW,
    attachmentName: 'w.xlsx',
    detailDir: '/srv/reports/w_detail',
    figures,
  });
  return {
    digest,
    ...buildMessage({
      run,
      counts: c,
      digest,
      attachmentName: 'w.xlsx',
      host: 'h1',
      workbookPath: '/srv/reports/w.xlsx',
      ...extra,
    }),
  };
}

/** The lines that name a path of the server or a docs file. */
const pathLines = (text: string) => text.split('\n').filter((l) => /\/srv\/|docs\/|\.md\b/.test(l));

describe('the e-mail of an account', () => {
  it('states the verdict, the money at stake and the breaks to look at first before the counts', () => {
    const m = mail(BREAKS);
    const lines = m.text.split('\n');
    expect(lines[0]).toBe('NOT RECONCILED: 6 open breaks (0 high, 6 medium, 0 low)');
    const at = (start: string) => lines.findIndex((l) => l.startsWith(start));
    expect(lines).toContain('  shortfalls USD -4,443.63 (this period -4,443.63, carried over 0.00)');
    expect(lines).toContain('  surpluses USD 10.00 (this period 0.00, carried over 10.00)');
    expect(lines).toContain(
      '  1 open break without a USD figure (1 this period, 0 carried over); 1 that move no money',
    );
    expect(lines[at('The 5 open breaks to look at first') + 1]).toMatch(
      /^ {2}1\. P_FEE_USD order o-short: USD -4,443\.13; medium, 3 days old, this period\. Partner fee USD twin/,
    );
    expect(m.text).toMatch(/^ {2}2\. P_FEE_USD order o-extra: USD 10\.00; medium, 3 days old, carried over\. /m);
    expect(m.text).toMatch(/^ {2}3\. P_FEE_USD order o-btc: USD -0\.50; /m);
    // a smaller impact to its first significant digit
    expect(m.text).toMatch(/^ {2}4\. P_FEE_USD order o-tiny: USD -0\.0004; /m);
    // the stake comes before the breaks, which come before the counts
    expect(at('Money at stake:')).toBeLessThan(at('The 5 open breaks'));
    expect(at('The 5 open breaks')).toBeLessThan(at('Open breaks: 6'));
    // the same in the html
    expect(m.html).toContain('<li>shortfalls USD -4,443.63 (this period -4,443.63, carried over 0.00)</li>');
    expect(m.html).toMatch(/<li>P_FEE_USD order o-short: USD -4,443\.13; /);
  });

  it('says "no money" or "no USD figure" for a break without an impact', () => {
    const m = mail([BREAKS[4]!, BREAKS[5]!]);
    expect(m.text).toMatch(/^ {2}\d\. P_FEE_USD order o-none: no USD figure; /m);
    expect(m.text).toMatch(/^ {2}\d\. E_STALE deposit dep-1: no money; medium, 62 days old, this period\. /m);
  });

  it('names paths only on its last line, "Where the files are"', () => {
    for (const m of [
      mail(BREAKS),
      mail(BREAKS, { notAttached: { reason: 'too big', path: '/srv/reports/w.xlsx', host: 'h1' } }),
    ]) {
      const where =
        'Where the files are, on h1: the workbook /srv/reports/w.xlsx; every record of the period in ' +
        '/srv/reports/w_detail (one gzip CSV per data sheet).';
      expect(pathLines(m.text)).toEqual([where]);
      expect(m.text.trimEnd().split('\n').at(-1)).toBe(where);
      const html = m.html.split('\n').filter((l) => /\/srv\/|docs\/|\.md\b/.test(l));
      expect(html).toEqual([`<p style="color:#555">${where}</p>`]);
    }
  });
});

describe('the group e-mail', () => {
  const digestOf = (breaks: ReportedBreak[]) => mail(breaks).digest;
  const group = () =>
    groupDigest({
      batchId: 'b1',
      periodFrom: '2026-11-01',
      periodTo: '2026-11-02',
      partial: false,
      accounts: [
        account('acme', 'succeeded', counts({ medium: { n: 4 } }), digestOf(BREAKS.slice(0, 4))),
        account('globex', 'succeeded', counts({ medium: { n: 2 } }), digestOf(BREAKS.slice(4))),
        account('initech', 'failed', null, null),
      ],
      attachmentName: 'g.xlsx',
      now: NOW,
    });

  it('lists each account in one line with its status and money at stake, and the breaks to look at first', () => {
    const m = groupMessage(group(), undefined, { path: '/srv/reports/g.xlsx', host: 'h1' });
    const lines = m.text.split('\n');
    expect(lines[0]).toBe('0 OF 3 ACCOUNTS RECONCILED, 2 WITH OPEN BREAKS, 1 FAILED');
    expect(lines).toContain(
      'acme: not reconciled: 4 open breaks (4 unexplained); money at stake: shortfalls USD -4,443.63, surpluses USD 10.00, 0 open breaks without a USD figure (run r-acme)',
    );
    expect(lines.find((l) => l.startsWith('globex: '))).toMatch(
      /shortfalls USD 0\.00, surpluses USD 0\.00, 1 open break without a USD figure/,
    );
    expect(lines.find((l) => l.startsWith('initech: '))).toBe(
      'initech: FAILED in sync.exchange: Exchange API unreachable (run r-initech)',
    );
    const top = lines.findIndex((l) => l.startsWith('The 5 open breaks to look at first, every account'));
    expect(lines.slice(top + 1, top + 3)).toEqual([
      expect.stringMatching(/^ {2}1\. acme: P_FEE_USD order o-short: USD -4,443\.13; /),
      expect.stringMatching(/^ {2}2\. acme: P_FEE_USD order o-extra: USD 10\.00; /),
    ]);
    // no impact: the oldest first
    expect(m.text).toMatch(/^ {2}5\. globex: E_STALE deposit dep-1: no money; /m);
    expect(pathLines(m.text)).toEqual([
      "Where the files are, on h1: the group workbook /srv/reports/g.xlsx; each account's own workbook is named on its line of the Group summary.",
    ]);
    expect(m.html).toContain('<li>acme: P_FEE_USD order o-short: USD -4,443.13; ');
  });

  it('without its workbook says why under the verdict, and where it is only on the last line', () => {
    const m = groupMessage(group(), { reason: 'too big', path: '/srv/reports/g.xlsx', host: 'h1' });
    expect(m.text).toContain('The group workbook g.xlsx is not attached: too big. Where it is: see the last line.');
    expect(pathLines(m.text)).toHaveLength(1);
    expect(m.text.trimEnd().split('\n').at(-1)).toMatch(/^Where the files are, on h1: the group workbook \/srv\//);
  });
});
