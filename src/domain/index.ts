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
export {
  breakId,
  SEVERITY_RANK,
  openBreakCounts,
  NO_WORKFLOW,
  lateCounts,
  sortLate,
  figureText,
  figureValue,
  amountsAsReported,
} from './break.js';
export type { Figure, FigureUnit } from './break.js';
export type { RecordKindName, RecordKind, DataSheet } from './record-kinds.js';
export { RECORD_KINDS, DATED_KINDS } from './record-kinds.js';
export type { ExchangeOrderAgg, Fill, Deposit, Withdrawal, BalanceLine, BalanceSnapshot } from './exchange.js';
export type { PartnerOrder, WebhookEventLite } from './partner.js';
export type { Period } from './period.js';
export type { PartnerCurrency, FeeRates, FeeSchedule, SymbolRules } from './reference.js';
export type { CoverageRow, QuarantinedRecord, StreamReach } from './sync.js';
export type {
  ApiName,
  EndpointRequests,
  RunRequests,
  RuleStatus,
  RuleResult,
  StoredRuleResult,
  StageInfo,
  RunInfo,
  DigestBreak,
  DigestFailure,
  DigestFigures,
  MoneyAtStakeFigures,
  ReportDigest,
  BreakRef,
  Changes,
  ClosedPeriodDigest,
} from './run.js';
export type {
  FeeDayRec,
  PartnerOrderRec,
  PartnerDailyRec,
  ExchangeDailyFillRec,
  ExchangeDailyDepositRec,
  ExchangeDailyWithdrawalRec,
  ExchangeDailyAgg,
  OrderVsFillsRec,
  FillRec,
  DepositRec,
  WithdrawalRec,
  BalanceRollRec,
  BalanceRec,
  CoverageRec,
  Totals,
  WebhookStats,
} from './report-rows.js';
export type { DayFlows, DerivedDay, EdgeFill, RollFigures, PaymentHistory } from './balance.js';
export type { Condition, FillField, FillPrefilter, Operand, OrderField, OrderPrefilter, RefRow } from './prefilter.js';
export type { Amounts, Actor, WorkflowRecord, WorkflowWrite, ReturnedRow } from './workflow.js';
