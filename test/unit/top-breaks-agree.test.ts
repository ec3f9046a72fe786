/**
 * Issue 45: the Summary's "largest five by USD impact" and the e-mail's breaks to look at first are the same breaks in
 * the same order (src/report/top-breaks.ts), explained or not, ties broken the same way.
 */
import { describe, expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import { NO_WORKFLOW, openBreakCounts, type ReportedBreak } from '../../src/domain/index.js';
import { buildDigest } from '../../src/report/digest.js';
import { buildMessage } from '../../src/report/email.js';
import { groupTopBreaks } from '../../src/report/group-top-breaks.js';
import { Precision } from '../../src/report/precision.js';
import { summaryRows } from '../../src/report/summary-sheet.js';
import { UsdRates } from '../../src/report/usd-rates.js';
import { makeBreak, makeRun } from '../helpers/report-factories.js';

const NOW = new Date('2026-12-01T03:00:00Z');
const RATES = new UsdRates({ balances: [{ currency: 'BTC', rate: new Decimal('50000') }] });
const explained = { ...NO_WORKFLOW, status: 'explained' as const, explanation: 'known' };
const OCT30 = new Date('2026-10-30T02:00:00Z');

// Five ties at USD 500 and one larger explained break: the order is |USD| descending, then the oldest, severity, key.
const BREAKS: ReportedBreak[] = [
  makeBreak({ key: 'k-f', difference: '40', firstSeenAt: OCT30 }),
  makeBreak({ key: 'k-b', difference: '500', firstSeenAt: OCT30 }),
  makeBreak({ key: 'k-zero', difference: '0', firstSeenAt: new Date('2026-08-01T00:00:00Z') }),
  makeBreak({ key: 'k-none', currency: 'XYZ', difference: '5', firstSeenAt: new Date('2026-08-01T00:00:00Z') }),
  makeBreak({ key: 'k-a', difference: '500', firstSeenAt: OCT30 }),
  makeBreak({ key: 'k-d', difference: '500', firstSeenAt: OCT30, severity: 'high' }),
  makeBreak({ key: 'k-c', difference: '-500', firstSeenAt: new Date('2026-10-20T02:00:00Z') }),
  makeBreak({ key: 'k-expl', difference: '-900', firstSeenAt: OCT30, workflow: explained }),
];

function summaryTopFive(breaks: ReportedBreak[]): string[][] {
  const rows = summaryRows({
    run: makeRun(),
    openBreaks: breaks,
    counts: openBreakCounts(breaks),
    changes: { previous: null, opened: [], reopened: [], resolved: [], stillOpen: 0 },
    totals: { partner: [], fills: [], deposits: [], withdrawals: [] },
    assumptions: [],
    precision: Precision.empty(),
    now: NOW,
    rates: RATES,
    balanceRolls: [],
  });
  const at = rows.findIndex((r) => r.cells[0] === 'Largest 5 open breaks by USD impact');
  return rows
    .slice(at + 2, at + 7)
    .filter((r) => r.cellTones !== undefined) // the table's rows (toned by severity), not the lines under it
    .map((r) => [String(r.cells[0]), String(r.cells[6]), String((r.cells[1] as { value: Decimal }).value)]);
}

function mailTopFive(breaks: ReportedBreak[]) {
  const run = makeRun();
  const counts = openBreakCounts(breaks);
  const digest = buildDigest({ run, openBreaks: breaks, counts, rates: RATES, now: NOW, attachmentName: 'w.xlsx' });
  const message = buildMessage({ run, counts, digest, attachmentName: 'w.xlsx' });
  return { digest, text: message.text };
}

describe('the Summary and the e-mail name the same top breaks', () => {
  it('in the same order: the largest absolute USD impact first, explained or not, ties by age, severity, key', () => {
    const summary = summaryTopFive(BREAKS);
    const { digest, text } = mailTopFive(BREAKS);
    const mail = digest.topBreaks.map((b) => [b.code, b.record!, String(new Decimal(b.usdImpact!))]);
    expect(summary).toEqual(mail);
    expect(digest.topBreaks.map((b) => b.key)).toEqual(['k-expl', 'k-c', 'k-d', 'k-a', 'k-b']);
    expect(digest.topBreaks.map((b) => b.why)).toEqual(Array(5).fill('largest'));
    // The e-mail's numbered lines, in the digest's order.
    const numbered = text.split('\n').filter((l) => /^ {2}\d\. /.test(l));
    expect(numbered.map((l) => /^ {2}\d\. P_FEE_USD (.*?):/.exec(l)?.[1])).toEqual(summary.map((s) => s[1]));
  });

  it("the group e-mail merges the accounts' lists by the same rule", () => {
    const alpha = mailTopFive(BREAKS.filter((b) => ['k-expl', 'k-a', 'k-zero'].includes(b.key))).digest;
    const beta = mailTopFive(BREAKS.filter((b) => ['k-c', 'k-f', 'k-none'].includes(b.key))).digest;
    const group = groupTopBreaks([
      { account: 'beta', digest: beta },
      { account: 'alpha', digest: alpha },
    ]);
    expect(group.map((b) => [b.account, b.key])).toEqual([
      ['alpha', 'k-expl'], // USD 900, explained: ranked by impact all the same
      ['beta', 'k-c'], // USD 500, the older of the two at 500
      ['alpha', 'k-a'],
      ['beta', 'k-f'],
      ['beta', 'k-none'], // no impact: after every break with one; as old as k-zero, by key
    ]);
  });

  it('whatever order the breaks come in', () => {
    const reversed = [...BREAKS].reverse();
    expect(summaryTopFive(reversed)).toEqual(summaryTopFive(BREAKS));
    expect(mailTopFive(reversed).digest.topBreaks).toEqual(mailTopFive(BREAKS).digest.topBreaks);
  });

  it('the e-mail goes on with breaks of no impact only after every one the Summary ranks', () => {
    const few = BREAKS.filter((b) => ['k-f', 'k-zero', 'k-none', 'k-c'].includes(b.key));
    const { digest } = mailTopFive(few);
    expect(digest.topBreaks.map((b) => [b.key, b.why])).toEqual([
      ['k-c', 'largest'],
      ['k-f', 'largest'],
      ['k-none', 'oldest'], // both first seen on 2026-08-01: by key
      ['k-zero', 'oldest'],
    ]);
    expect(summaryTopFive(few).map((s) => s[2])).toEqual(['-500', '40']);
  });
});
