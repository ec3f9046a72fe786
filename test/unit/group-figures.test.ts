import { describe, expect, it } from 'vitest';
import type { Row } from '../../src/report/cells.js';
import { groupDigest, groupSummaryRows, type GroupAccount } from '../../src/report/group.js';
import { accountColour, colourLegend, worstColour } from '../../src/report/group-colours.js';
import { groupTotals } from '../../src/report/group-totals.js';
import { groupMessage } from '../../src/report/group-mail.js';
import { batchSentence, runOutcomeText } from '../../src/report/batch-words.js';
import { account, counts, digestWith } from '../helpers/group-accounts.js';

// alpha: 3 open breaks (1 high explained, 2 medium unexplained); beta failed, though a run of it left counts and
// figures (they must not be summed); gamma still running at a deadline report; delta reconciled (1 low explained).
const alpha = account(
  'alpha',
  'succeeded',
  counts({ high: { n: 1, explained: 1 }, medium: { n: 2 } }),
  digestWith('100.10', '5000.00'),
);
const beta = account('beta', 'failed', counts({ high: { n: 7 } }), digestWith('999.00', '123.00'));
const gamma = account('gamma', 'running', null, null);
const delta = account('delta', 'succeeded', counts({ low: { n: 1, explained: 1 } }), digestWith('0.20', '250.05'));
const NOW = new Date('2026-11-21T03:00:00Z');

const digestOf = (accounts: GroupAccount[]) =>
  groupDigest({
    batchId: 'b1',
    periodFrom: '2026-11-20',
    periodTo: '2026-11-20',
    partial: false,
    accounts,
    attachmentName: 'g.xlsx',
    now: NOW,
  });

const text = (row: Row) =>
  row.cells.map((c) => (c && typeof c === 'object' && 'kind' in c && c.kind === 'amount' ? c.value.toFixed(2) : c));

describe('the group totals', () => {
  it('sum only the accounts whose run completed and name every account left out, with why', () => {
    const t = groupTotals([alpha, beta, gamma, delta]);
    expect(t.label).toBe('Total of 2 of 4 accounts (beta failed, gamma still running: left out)');
    expect(t.counted).toEqual(['alpha', 'delta']);
    expect([t.openBreaks, t.high, t.medium, t.low, t.unexplained]).toEqual([4, 1, 2, 1, 2]);
    expect(t.moneyAtStake).toBe('100.30');
    expect(t.closingUsd).toBe('5250.05');
    // exact: no rounding of the figures the lines carry (the workbook shows 2 decimals)
    const fine = groupTotals([
      account('x', 'succeeded', counts({}), digestWith('13057.97012', '0.1')),
      account('y', 'succeeded', counts({}), digestWith('5872.01099', '0.2')),
    ]);
    expect([fine.moneyAtStake, fine.closingUsd]).toEqual(['18929.98111', '0.30']);
  });

  it('say "all" when none is left out, and show no sum rather than a zero when none completed', () => {
    expect(groupTotals([alpha, delta]).label).toBe('Total of all 2 accounts');
    const none = groupTotals([beta, account('epsilon', 'pending', null, null)]);
    expect(none.label).toBe('Total of 0 of 2 accounts (beta failed, epsilon not started: left out)');
    expect([none.openBreaks, none.unexplained, none.moneyAtStake, none.closingUsd]).toEqual([null, null, null, null]);
  });

  it('name a completed account whose USD figures are missing, rather than sum it as zero', () => {
    const old = account('old', 'succeeded', counts({ low: { n: 2 } }), null);
    const noSnapshot = account('fresh', 'succeeded', counts({}), digestWith('3.00', null));
    const t = groupTotals([alpha, old, noSnapshot]);
    expect(t.label).toBe(
      'Total of all 3 accounts (old: no USD figures, left out of the USD sums; fresh: no closing balance, left out of the closing sum)',
    );
    expect([t.openBreaks, t.moneyAtStake, t.closingUsd]).toEqual([5, '103.10', '5000.00']);
  });

  it("stand on the Group summary's Total line, in its columns, and in the e-mail", () => {
    const accounts = [alpha, beta, gamma, delta];
    const digest = digestOf(accounts);
    const rows = groupSummaryRows(digest, accounts);
    const total = rows.find((r) => r.cells[0] === 'Total')!;
    expect(text(total)).toEqual([
      'Total',
      'Total of 2 of 4 accounts (beta failed, gamma still running: left out)',
      4,
      1,
      2,
      1,
      2,
      // shortfalls, surpluses, breaks without a USD figure: summed apart, never netted
      '-100.30',
      '0.00',
      0,
      '5250.05',
      null,
      null,
    ]);
    // the failed account's own line has blank figures
    expect(text(rows.find((r) => r.cells[0] === 'beta')!).slice(2, 11)).toEqual([
      null,
      null,
      null,
      null,
      null,
      null,
      null,
      null,
      null,
    ]);
    const mail = groupMessage(digest);
    expect(mail.text).toContain(
      'Total of 2 of 4 accounts (beta failed, gamma still running: left out): 4 open breaks (2 unexplained); money at stake: shortfalls USD -100.30, surpluses USD 0.00, 0 open breaks without a USD figure; closing balances USD 5,250.05',
    );
    expect(mail.html).toContain(
      '<td>Total</td><td>Total of 2 of 4 accounts (beta failed, gamma still running: left out)',
    );
  });
});

describe('the group colours', () => {
  it('red: failed, not run, or an unexplained high break; amber: unexplained breaks, none high; green: none unexplained', () => {
    expect(accountColour(beta)).toBe('red');
    expect(accountColour(gamma)).toBe('red');
    expect(accountColour(account('p', 'pending', null, null))).toBe('red');
    expect(accountColour(account('h', 'succeeded', counts({ high: { n: 2, explained: 1 } }), null))).toBe('red');
    // alpha's high break is explained: its two unexplained medium ones make it amber
    expect(accountColour(alpha)).toBe('amber');
    expect(accountColour(account('l', 'succeeded', counts({ low: { n: 1 } }), null))).toBe('amber');
    expect(accountColour(account('e', 'succeeded', counts({ high: { n: 1, explained: 1 } }), null))).toBe('green');
    expect(accountColour(delta)).toBe('green');
    expect(accountColour(account('z', 'succeeded', counts({}), null))).toBe('green');
    expect(worstColour([delta, alpha])).toBe('amber');
    expect(worstColour([delta, alpha, gamma])).toBe('red');
    expect(worstColour([delta])).toBe('green');
  });

  it('the legend on the Group summary is the definition that fills each line: same tone, same words', () => {
    const accounts = [alpha, beta, gamma, delta];
    const digest = digestOf(accounts);
    const rows = groupSummaryRows(digest, accounts);
    const legend = colourLegend();
    expect(legend.map((l) => l.colour)).toEqual(['red', 'amber', 'green']);
    expect(legend.map((l) => l.means)).toEqual([
      'failed, not run (or still running), or an unexplained open break of high severity',
      'unexplained open breaks, none of high severity',
      'reconciled: no unexplained open break (explained ones may remain)',
    ]);
    const legendRows = rows.filter((r) => legend.some((l) => l.colour === r.cells[0]));
    expect(legendRows.map((r) => [r.cells[0], r.cells[1], r.cellTones?.[0]])).toEqual(
      legend.map((l) => [l.colour, l.means, l.tone]),
    );
    const toneOf = (colour: string) => legend.find((l) => l.colour === colour)!.tone;
    for (const [a, colour] of [
      [alpha, 'amber'],
      [beta, 'red'],
      [gamma, 'red'],
      [delta, 'green'],
    ] as const) {
      const line = rows.find((r) => r.cells[0] === a.account)!;
      expect(line.cellTones, a.account).toEqual({ 0: toneOf(colour), 1: toneOf(colour) });
    }
    // three colours, three fills: a legend that could not tell them apart would say nothing
    expect(new Set(legend.map((l) => l.tone)).size).toBe(3);
    // the verdict line takes the worst account's colour
    expect(digest.colour).toBe('red');
    expect(rows[0]!.tone).toBe(toneOf('red'));
    expect(digestOf([alpha, delta]).colour).toBe('amber');
    // the e-mail colours its lines and writes its legend from the same definition
    const html = groupMessage(digest).html;
    for (const l of legend) expect(html).toContain(l.means);
    expect(html).toMatch(/<tr style="color:#FFFFFF;background:#C00000;font-weight:bold"><td>beta<\/td>/);
    expect(html).toMatch(/<tr style="color:#000000;background:#FFC000"><td>alpha<\/td>/);
    expect(html).toMatch(/<tr style="color:#006100;background:#C6EFCE"><td>delta<\/td>/);
  });

  it("an account's status says how many unexplained breaks are high, the reason it is red", () => {
    const h = account('h', 'succeeded', counts({ high: { n: 2, explained: 1 }, low: { n: 1 } }), null);
    const rows = groupSummaryRows(digestOf([h]), [h]);
    expect(rows.find((r) => r.cells[0] === 'h')!.cells[1]).toBe(
      'not reconciled: 3 open breaks (2 unexplained, 1 of high severity)',
    );
  });
});

describe("a batch's printed sentence", () => {
  it('says "completed" when every account ran, whatever the verdict, and names the accounts that did not', () => {
    expect(
      batchSentence({
        batchId: 'b1',
        accounts: [
          { account: 'acme', completed: true },
          { account: 'globex', completed: true },
        ],
        verdict: '0 of 2 accounts reconciled, 2 with open breaks',
      }),
    ).toBe(
      'batch b1 completed: both accounts ran to the end; 0 of 2 accounts reconciled, 2 with open breaks (reconciled: no unexplained open break)',
    );
    expect(
      batchSentence({
        batchId: 'b2',
        accounts: [
          { account: 'acme', completed: true },
          { account: 'initech', completed: false },
        ],
        verdict: null,
        reportError: 'disk full',
      }),
    ).toBe('batch b2 failed: 1 of 2 accounts did not complete (initech); no group report (disk full)');
  });

  it("an account's run line: completed, then the group report's words for it", () => {
    const c = counts({ medium: { n: 3, explained: 1 } });
    expect(runOutcomeText({ runId: 'r1', status: 'succeeded', summary: { breakCounts: c } })).toBe(
      'run r1 completed: not reconciled: 3 open breaks (2 unexplained)',
    );
    expect(runOutcomeText({ runId: 'r2', status: 'succeeded', summary: { breakCounts: counts({}) } })).toBe(
      'run r2 completed: reconciled',
    );
    expect(
      runOutcomeText({
        runId: 'r3',
        status: 'failed',
        failedStage: 'report',
        error: 'boom',
        summary: { breakCounts: c },
      }),
    ).toBe('run r3 failed in stage report: boom');
  });
});
