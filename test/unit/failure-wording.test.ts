/** What the workbook and the e-mail of a failed run say: the stage, why, what was kept, the breaks as last known. */
import { describe, expect, it } from 'vitest';
import { buildMessage, failureNotice, messageSubject } from '../../src/report/email.js';
import { buildDigest } from '../../src/report/digest.js';
import { UsdRates } from '../../src/report/usd-rates.js';
import { Precision } from '../../src/report/precision.js';
import { headline, runFailure } from '../../src/report/summary.js';
import { summaryRows, type SummaryInput } from '../../src/report/summary-sheet.js';
import { openBreakCounts, type ReportedBreak, type RunInfo } from '../../src/domain/index.js';
import { makeBreak, makeRun } from '../helpers/report-factories.js';

const NOW = new Date('2026-11-02T03:00:00Z');
const RATES = new UsdRates({});

/** A run that failed in its exchange sync: no reconcile, so no rule results and no counts of its own. */
const failedRun = (overrides: Partial<RunInfo> = {}): RunInfo =>
  makeRun({
    id: 'r20261102T020000',
    status: 'failed',
    finishedAt: new Date('2026-11-02T02:01:00Z'),
    failedStage: 'sync.exchange',
    error: 'Exchange API GET /v3/exchange/fills: connection refused; check EXCHANGE_API_URL',
    stages: { 'sync.exchange': { status: 'failed', error: 'connection refused', seq: 0 } },
    counts: {},
    ruleResults: [],
    rulesetVersion: null,
    ...overrides,
  });

/** A break last seen by the run before (the failed run judged nothing), from an earlier period. */
const openBreak = (overrides: Partial<ReportedBreak> = {}): ReportedBreak =>
  makeBreak({
    lastSeenRun: 'r0',
    lastSeenAt: new Date('2026-10-30T02:00:00Z'),
    inPeriod: false,
    ...overrides,
  });

const STORED = {
  partnerOrders: 12,
  fills: 0,
  exchangeOrders: 0,
  deposits: 0,
  withdrawals: 0,
  balanceSnapshots: 0,
  quarantined: 1,
};

function mailOf(run: RunInfo, breaks: ReportedBreak[], stored?: Record<string, number>) {
  const counts = openBreakCounts(breaks);
  const digest = buildDigest({
    run,
    openBreaks: breaks,
    counts,
    rates: RATES,
    now: NOW,
    attachmentName: 'w.xlsx',
    ...(stored ? { stored } : {}),
  });
  return { digest, counts, message: buildMessage({ run, counts, digest, attachmentName: 'w.xlsx' }) };
}

describe('the failure of a run, as its workbook and e-mail say it', () => {
  it('is a failure in any stage but deliver; judged only when the run recorded rule results first', () => {
    expect(runFailure(failedRun())).toEqual({
      stage: 'sync.exchange',
      error: failedRun().error,
      judged: false,
    });
    const ruleResults = [
      { code: 'P_FEE_USD', severity: 'medium', description: 'd', status: 'passed', checked: 1, breaks: 0 },
    ];
    expect(runFailure(failedRun({ failedStage: 'run', ruleResults }))?.judged).toBe(true);
    expect(runFailure(failedRun({ failedStage: 'deliver' }))).toBeNull();
    expect(runFailure(failedRun({ status: 'succeeded', failedStage: null }))).toBeNull();
    // a row marked failed without a stage (interrupted between stages) fails in "run"
    expect(runFailure(failedRun({ failedStage: null }))?.stage).toBe('run');
  });

  it('the banner says FAILED and the stage; the detail says the breaks are as last known; the status has the error', () => {
    const h = headline(failedRun(), openBreakCounts([openBreak()]));
    expect(h).toEqual({
      reconciled: false,
      tone: 'bad',
      text: 'FAILED in sync.exchange: 2026-11-01 not reconciled',
      detail:
        'Period 2026-11-01; open breaks as last known (not judged by this run): 1 open break (0 of this period, 1 carried over)',
      status: `failed in sync.exchange: ${failedRun().error}`,
    });
  });

  it('the Summary: failure rows under the banner, the open breaks marked as last known, the counts the database holds', () => {
    const breaks = [openBreak()];
    const input: SummaryInput = {
      run: failedRun(),
      openBreaks: breaks,
      counts: openBreakCounts(breaks),
      changes: { previous: null, opened: [], reopened: [], resolved: [], stillOpen: 1 },
      totals: { partner: [], fills: [], deposits: [], withdrawals: [] },
      assumptions: [],
      precision: Precision.empty(),
      now: NOW,
      storedCounts: STORED,
    };
    const rows = summaryRows(input);
    const text = (r: (typeof rows)[number]) => r.cells.map((c) => (c === null || c === undefined ? '' : String(c)));
    expect(text(rows[0]!)[0]).toBe('FAILED in sync.exchange: 2026-11-01 not reconciled');
    expect(rows[0]!.tone).toBe('bad');
    const pairs = new Map(rows.map((r) => [text(r)[0], text(r)[1]]));
    expect(pairs.get('Run failed in stage')).toBe('sync.exchange');
    expect(pairs.get('Why')).toBe(failedRun().error);
    expect(pairs.get('What was kept')).toBe(
      'what each stage committed before the failure is kept; the next run resumes from it',
    );
    expect(pairs.get('What to do')).toBe(
      "`ramp-recon runs` shows the run's stages and its error; fix the cause the error names, then run the period " +
        'again: `ramp-recon run --from 2026-11-01 --to 2026-11-02`',
    );
    const sections = rows.filter((r) => r.tone === 'section').map((r) => text(r)[0]);
    expect(sections).toContain(
      'Open breaks (as last known: left open by earlier runs, not judged by this run (it failed before its reconcile))',
    );
    expect(sections).toContain('Counts (records the database holds for the period; this run did not count them)');
    expect(pairs.get('Partner orders (created in period)')).toBe('12');
    expect(pairs.get('Quarantined records (unresolved)')).toBe('1');
    expect(pairs.get('Status')).toBe(`failed in sync.exchange: ${failedRun().error}`);
  });

  it('an account of a multi-account config is told to re-run with --account', () => {
    const rows = summaryRows({
      run: failedRun({ account: 'initech' }),
      openBreaks: [],
      counts: openBreakCounts([]),
      changes: { previous: null, opened: [], reopened: [], resolved: [], stillOpen: 0 },
      totals: { partner: [], fills: [], deposits: [], withdrawals: [] },
      assumptions: [],
      precision: Precision.empty(),
      now: NOW,
    });
    expect(rows.find((r) => r.cells[0] === 'What to do')?.cells[1]).toMatch(
      /`ramp-recon run --from 2026-11-01 --to 2026-11-02 --account initech`$/,
    );
  });

  it('the digest keeps the failure, and the stored counts only when the run did not count the period itself', () => {
    const { digest } = mailOf(failedRun(), [openBreak()], STORED);
    expect(digest.failure).toEqual({
      stage: 'sync.exchange',
      error: failedRun().error,
      judged: false,
      stored: STORED,
    });
    const judged = failedRun({
      failedStage: 'run',
      ruleResults: [
        { code: 'P_FEE_USD', severity: 'medium', description: 'd', status: 'passed', checked: 1, breaks: 0 },
      ],
      counts: { partnerOrders: 3 },
    });
    expect(mailOf(judged, [], STORED).digest.failure).toMatchObject({ stage: 'run', judged: true, stored: null });
    expect(mailOf(failedRun({ status: 'succeeded', failedStage: null }), []).digest.failure).toBeUndefined();
  });

  it('the subject says FAILED, the stage and the open breaks as last known', () => {
    const { digest, counts } = mailOf(failedRun(), [openBreak(), openBreak({ key: 'o2' })], STORED);
    expect(messageSubject(digest, counts)).toBe(
      'ramp-recon 2026-11-01: FAILED in sync.exchange, not reconciled (last known: 2 open breaks)',
    );
    expect(
      messageSubject(mailOf(failedRun({ failedStage: 'reconcile' }), [], STORED).digest, openBreakCounts([])),
    ).toBe('ramp-recon 2026-11-01: FAILED in reconcile, not reconciled (last known: 0 open breaks)');
  });

  it('the body says what failed, what was kept, what the breaks are and what to do, with the stored counts; html alike', () => {
    const { message } = mailOf(failedRun(), [openBreak()], STORED);
    const lines = message.text.split('\n');
    expect(lines.slice(0, 7)).toEqual([
      'FAILED in sync.exchange: 2026-11-01 not reconciled',
      'Period 2026-11-01; open breaks as last known (not judged by this run): 1 open break (0 of this period, 1 carried over)',
      '',
      `What failed: run r20261102T020000 failed in stage sync.exchange: ${failedRun().error}`,
      'What was kept: what each stage committed before the failure is kept; the next run resumes from it.',
      'Open breaks: as last known: left open by earlier runs, not judged by this run (it failed before its reconcile).',
      "What to do: `ramp-recon runs` shows the run's stages and its error; fix the cause the error names, then run " +
        'the period again: `ramp-recon run --from 2026-11-01 --to 2026-11-02`.',
    ]);
    expect(message.text).toContain('Open breaks as last known: 1 (high 0, medium 1, low 0)');
    expect(message.text).toContain('The open break as last known to look at first');
    expect(message.text).toContain(
      'Counts (records the database holds for the period; this run did not count them):\nPartner orders (created in period): 12\n',
    );
    expect(message.text).toContain('The workbook w.xlsx is attached;');
    expect(message.html).toContain(
      `<p style="font-weight:bold">What failed: run r20261102T020000 failed in stage sync.exchange: ${failedRun().error}</p>`,
    );
    expect(message.html).toContain(
      '<tr><td>Partner orders (created in period)</td><td style="text-align:right">12</td></tr>',
    );
  });

  it('the short notice (no workbook): the failure, why there is no workbook, what to do; nothing about breaks', () => {
    const notice = failureNotice({
      run: { id: 'r1', account: 'default', periodFrom: '2026-11-01', periodTo: '2026-11-03' },
      failure: { stage: 'sync.exchange', error: 'Exchange API: connection refused' },
      noWorkbook: 'database: cannot use PostgreSQL at db:5432/recon: the connection was refused',
      host: 'batch-1',
    });
    expect(notice.subject).toBe(
      'ramp-recon 2026-11-01 to 2026-11-02: FAILED in sync.exchange, not reconciled (no workbook)',
    );
    expect(notice.text).toBe(
      [
        'FAILED in sync.exchange: 2026-11-01 to 2026-11-02 not reconciled',
        '',
        'What failed: run r1 failed in stage sync.exchange: Exchange API: connection refused',
        'What was kept: what each stage committed before the failure is kept; the next run resumes from it.',
        "What to do: `ramp-recon runs` shows the run's stages and its error; fix the cause the error names, then run " +
          'the period again: `ramp-recon run --from 2026-11-01 --to 2026-11-03`.',
        '',
        'No workbook: the failure report could not be written either on batch-1: database: cannot use PostgreSQL at ' +
          'db:5432/recon: the connection was refused',
        'The open breaks and the counts are in the database once it is back (`ramp-recon breaks list`, `ramp-recon runs`).',
        '',
      ].join('\n'),
    );
    expect(notice.html).toContain('FAILED in sync.exchange: 2026-11-01 to 2026-11-02 not reconciled</p>');
    expect(notice.html).toContain(
      '<p>What failed: run r1 failed in stage sync.exchange: Exchange API: connection refused</p>',
    );
  });
});
