/** Group report accounts for the pure group model's tests: open-break counts, a digest's money figures, an account. */
import { openBreakCounts, type OpenBreakCounts, type ReportDigest, type Severity } from '../../src/domain/index.js';
import { accountState, type GroupAccount } from '../../src/report/group.js';

/** Open-break counts of `n` breaks per severity, the first `explained` of each severity explained. */
export function counts(spec: Partial<Record<Severity, { n: number; explained?: number }>>) {
  const breaks = Object.entries(spec).flatMap(([severity, s]) =>
    Array.from({ length: s.n }, (_, i) => ({
      code: `R_${severity.toUpperCase()}`,
      key: `${severity}-${i}`,
      severity: severity as Severity,
      inPeriod: true,
      workflow: { status: i < (s.explained ?? 0) ? ('explained' as const) : ('unexplained' as const) },
    })),
  );
  return openBreakCounts(breaks);
}

export function digestWith(moneyAtStake: string, closingUsd: string | null): ReportDigest {
  return {
    period: '2026-11-20',
    attachmentName: 'x.xlsx',
    headline: { tone: 'bad', text: '', detail: '', status: '' },
    topBreaks: [],
    figures: {
      // all of it a shortfall of this period, as a run writes it (report/money-at-stake.ts stakeFigures)
      moneyAtStake: {
        total: moneyAtStake,
        inPeriod: moneyAtStake,
        carriedOver: '0',
        unvalued: 0,
        shortfalls: { total: `-${moneyAtStake}`, inPeriod: `-${moneyAtStake}`, carriedOver: '0' },
        surpluses: { total: '0', inPeriod: '0', carriedOver: '0' },
        noFigure: { total: 0, inPeriod: 0, carriedOver: 0 },
        noMoney: { total: 0, inPeriod: 0, carriedOver: 0 },
      },
      closingUsd,
      closingUnvalued: [],
    },
    writtenAt: '2026-11-21T02:00:00.000Z',
  };
}

/** An account as group-report.ts builds it: the state from its batch status and counts, as there. */
export function account(
  name: string,
  status: GroupAccount['status'],
  c: OpenBreakCounts | null,
  digest: ReportDigest | null,
): GroupAccount {
  return {
    account: name,
    state: accountState(status, status === 'succeeded' ? c : null),
    status,
    runId: `r-${name}`,
    failedStage: status === 'failed' ? 'sync.exchange' : null,
    error: status === 'failed' ? 'Exchange API unreachable' : status === 'running' ? 'still running on h:1' : null,
    counts: c,
    digest,
    reportPath: null,
  };
}
