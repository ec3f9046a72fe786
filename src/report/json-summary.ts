/** The `--json` run summary (docs/apis.md "JSON summary") built from what the store read back: the run's counts and
 * requests, every open break as a projection of Break, and their counts.
 */
import { isPartial } from '../util/dates.js';
import {
  lateCounts,
  openBreakCounts,
  sortLate,
  type BreakWorkflow,
  type LateBreak,
  type LateCounts,
  type MoneyAtStakeFigures,
  type OpenBreakCounts,
  type ReportedBreak,
  type WebhookStats,
} from '../domain/index.js';
import { parseRunRequests, type RunRequests } from '../http/meter.js';
import { jsonNumber } from '../decimal/json.js';
import type { ClosedPeriodChanges } from '../domain/evidence.js';

/** The fields of a Break the summary shows, in the documented order (the JSON keys keep it; inPeriod came last). */
const SUMMARY_FIELDS = [
  'code',
  'key',
  'severity',
  'currency',
  'expected',
  'actual',
  'difference',
  'status',
  'firstSeenRun',
  'lastSeenRun',
  'inPeriod',
] as const satisfies readonly (keyof ReportedBreak)[];

/** Where people stand on the break (docs/working-breaks.md); lastNote: the newest note or acknowledgement reason. */
export type JsonSummaryWorkflow = Pick<BreakWorkflow, 'status' | 'owner' | 'explanation' | 'lastNote'>;

/** `account`: whose break it is (added after the documented keys; every `--json` output names it). */
export type JsonSummaryBreak = Pick<ReportedBreak, (typeof SUMMARY_FIELDS)[number]> & {
  workflow: JsonSummaryWorkflow;
  account: string;
};

const summaryBreak = (b: ReportedBreak, account: string): JsonSummaryBreak => ({
  ...(Object.fromEntries(SUMMARY_FIELDS.map((k) => [k, b[k]])) as Pick<ReportedBreak, (typeof SUMMARY_FIELDS)[number]>),
  workflow: {
    status: b.workflow.status,
    owner: b.workflow.owner,
    explanation: b.workflow.explanation,
    lastNote: b.workflow.lastNote,
  },
  account,
});

/** The `--json` document (docs/apis.md "JSON summary"). */
export interface JsonSummary {
  runId: string;
  /** The account the run belongs to ("default" for a single-account config). */
  account: string;
  status: string;
  period: { from: string | null; to: string | null };
  /** The period was not over when the run started (it includes that day, UTC): its records were still arriving. */
  partial: boolean;
  counts: SummaryCounts;
  /** The API requests the run made, per API and endpoint (run.requests, src/http/meter.ts). */
  requests: RunRequests;
  /**
   * Every open break of the account, whatever run found it first; inPeriod: its record belongs to the period; workflow:
   * explained or not, owner, explanation, last note.
   */
  breaks: JsonSummaryBreak[];
  report: string | null;
  /** The run's detail folder (every record of the period, one gzip CSV per data sheet); null without a report. */
  detail: string | null;
  /**
   * openBreakCounts(breaks): the counts the workbook's Summary and the e-mail show (added after the documented keys);
   * `explained`: open breaks acknowledged with a reason.
   */
  breakCounts: OpenBreakCounts;
  /**
   * The period's webhook figures, as the workbook's Summary shows them (webhookStatsIn): events
   * received, duplicates acknowledged, conflicts (an eventId repeated with another body),
   * events with schema drift and their extra fields. null for a run without a period.
   */
  webhooks: WebhookStats | null;
  /**
   * What late data changed about earlier days (docs/rules.md "What a run judges"): the breaks of days
   * before the period this run opened, reopened or resolved because their records changed after those
   * days were reconciled, each with the day of its record; the counts of each.
   */
  lateData: LateCounts & { breaks: Array<Pick<LateBreak, 'code' | 'key' | 'day' | 'event' | 'severity'>> };
  /**
   * The money at stake as the workbook's Summary and the e-mail show it (stored with the workbook; docs/reports.md
   * "Money at stake"), exact decimal text: shortfalls, surpluses, noFigure, noMoney, beside the earlier keys (total,
   * inPeriod, carriedOver: absolute impacts; unvalued). null for a run without a workbook.
   */
  moneyAtStake: MoneyAtStakeFigures | null;
  /**
   * The account's signed closes (docs/closing.md "Late data against a closed period"), each with how many of its
   * records' fields changed since sign-off (prior-period adjustments) and their USD impact summed, exact decimal text.
   */
  closedPeriods: JsonClosedPeriod[];
}

export interface JsonClosedPeriod {
  closeId: string;
  period: { from: string; to: string };
  by: string;
  at: string;
  changes: number;
  usdImpact: string | null;
}

const COUNT_KEYS = [
  'partnerOrders',
  'fills',
  'exchangeOrders',
  'deposits',
  'withdrawals',
  'balanceSnapshots',
  'quarantined',
] as const;

/** The run's counts (the store's RunCounts, src/store/recon/counts.ts, read back from run.counts). */
export type SummaryCounts = Record<(typeof COUNT_KEYS)[number], number>;

/** run.counts comes back through the lossless JSON parser: numbers are LosslessNumber objects. */
function readCounts(raw: unknown): SummaryCounts {
  const obj = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const counts = {} as SummaryCounts;
  for (const k of COUNT_KEYS) {
    counts[k] = jsonNumber(obj[k]) ?? 0;
  }
  return counts;
}

/** The run row's columns the summary reads (src/store/db/schema.ts RunTable). */
export interface SummaryRun {
  id: string;
  status: string;
  period_from: string | null;
  period_to: string | null;
  started_at: Date;
  counts: unknown;
  requests: unknown;
  report_path: string | null;
  report_digest: unknown;
}

/** What the store read for the summary besides the run row: its late breaks and money at stake decoded from the row. */
export interface SummaryReads {
  breaks: readonly ReportedBreak[];
  webhooks: WebhookStats | null;
  late: readonly LateBreak[];
  moneyAtStake: MoneyAtStakeFigures | null;
  closedPeriods: readonly ClosedPeriodChanges[];
}

export function jsonSummaryOf(run: SummaryRun, account: string, reads: SummaryReads): JsonSummary {
  return {
    runId: run.id,
    account,
    status: run.status,
    period: { from: run.period_from, to: run.period_to },
    partial:
      run.period_to !== null &&
      isPartial({ from: run.period_from ?? run.period_to, to: run.period_to }, run.started_at),
    counts: readCounts(run.counts),
    requests: parseRunRequests(run.requests),
    breaks: reads.breaks.map((b) => summaryBreak(b, account)),
    report: run.report_path,
    detail: detailDirOf(run.report_digest),
    breakCounts: openBreakCounts(reads.breaks),
    webhooks: reads.webhooks,
    lateData: lateData(reads.late),
    moneyAtStake: reads.moneyAtStake,
    closedPeriods: reads.closedPeriods.map((c) => ({
      closeId: c.closeId,
      period: c.period,
      by: c.by,
      at: c.at.toISOString(),
      changes: c.count,
      usdImpact: c.usdTotal?.toFixed() ?? null,
    })),
  };
}

/** The detail folder named in the stored digest (run.report_digest); null for a run without one. */
function detailDirOf(digest: unknown): string | null {
  const dir = digest && typeof digest === 'object' ? (digest as { detailDir?: unknown }).detailDir : undefined;
  return typeof dir === 'string' ? dir : null;
}

export function lateData(late: readonly LateBreak[]): JsonSummary['lateData'] {
  return {
    ...lateCounts(late),
    breaks: sortLate(late).map((b) => ({ code: b.code, key: b.key, day: b.day, event: b.event, severity: b.severity })),
  };
}
