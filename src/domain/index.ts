/** The domain: records, reference data, the Break and the Period, re-exported from their files. */
export type {
  Severity,
  BreakStatus,
  Break,
  DetectedBreak,
  BreakEventKind,
  BreakEvent,
  LateBreak,
  LateCounts,
  ReportedBreak,
  PeriodSplit,
  OpenBreakCounts,
  WorkflowStatus,
  BreakWorkflow,
  WorkflowEventKind,
  WorkflowEvent,
} from './break.js';
export { breakId, SEVERITY_RANK, openBreakCounts, NO_WORKFLOW, lateCounts, sortLate } from './break.js';
export type { ExchangeOrderAgg, Fill, Deposit, Withdrawal, BalanceLine, BalanceSnapshot } from './exchange.js';
export type { PartnerOrder, WebhookEventLite } from './partner.js';
export type { Period } from './period.js';
export type { PartnerCurrency, FeeRates, FeeSchedule, SymbolRules } from './reference.js';
export type { CoverageRow, QuarantinedRecord } from './sync.js';
