/** What a rule is: one object (defineRule) holding its descriptor (code, title, severity, wording, scope, money at
 * stake), the inputs it requires, its checks, one per kind of record the engine scans, and, where speed needs one, its
 * SQL pre-filter as a description the store executes. A new rule is its own file plus one line in catalog.ts.
 */
import type {
  BalanceLine,
  Condition,
  CoverageRow,
  Deposit,
  ExchangeOrderAgg,
  FeeRates,
  Fill,
  FillField,
  FigureUnit,
  OrderField,
  PartnerOrder,
  QuarantinedRecord,
  RecordKindName,
  RollFigures,
  Severity,
  StreamReach,
  SymbolRules,
  WebhookEventLite,
  Withdrawal,
} from '../domain/index.js';
import type { Requirement, RuleInputs } from './inputs.js';
import type { Finding, Verdict } from './types.js';
import type { BreakWords } from './words.js';

/**
 * Which of a rule's open breaks a run that checked it may resolve when it no longer detects them:
 * - 'records': those whose record is in the run's scope (the period's records and every record changed since the
 *   account was last judged: docs/rules.md "What a run judges");
 * - 'everything': any (the rule looks at everything still relevant: stale records, balances, quarantine, coverage);
 * - 'judged': only those whose record the rule judged in this run (the engine returns their keys).
 */
export type RuleReach = 'records' | 'everything' | 'judged';

/** The figures of a break an acknowledgement accepts: it is reopened when one of them changes. */
export type HeldFigure = 'expected' | 'actual' | 'difference' | 'currency';

/**
 * How a rule's break is valued in money, signed from the business's side (negative: money missing or gone; positive:
 * money extra):
 * - 'difference': the difference (actual - expected) of a break whose figures are an amount of its currency; a check
 *   of the rule whose figures are a price, an age or text moves no money of its own ("no money");
 * - 'expected': the difference, or minus the whole expected amount when nothing arrived (a missing deposit);
 * - 'recorded': an amount the rule records with the break (its detail's `stake`), as `how` says;
 * - 'none': the break moves no money (stale data, coverage, quarantine...), as `how` says.
 */
export interface StakeRule {
  basis: 'difference' | 'expected' | 'recorded' | 'none';
  /** In words, for docs/rules.md and the Breaks sheet's "USD valuation". */
  how: string;
}

/** The families, for reading the catalog: the records a family's rules judge. */
export type RuleFamily = 'partner' | 'cross' | 'exchange' | 'balance' | 'payment' | 'sync';

/** A check's verdict, with the break's currency when it is not null. */
export type Judgement = Verdict | { verdict: Verdict; currency: string | null };

type Check<R, X> = (record: R, x: X) => Judgement;

export interface PartnerOrderContext extends RuleInputs {
  ourAddresses: ReadonlySet<string>;
  /** The deposit that settles the order (one deposit settles one order: docs/rules.md X_DEPOSIT_MISSING). */
  deposit: Deposit | undefined;
}
export interface ExchangeOrderContext extends RuleInputs {
  symbol: SymbolRules | undefined;
}
export interface FillContext extends RuleInputs {
  symbol: SymbolRules | undefined;
  /** The fee rates of the fill's day; undefined without a fees snapshot. */
  rates: FeeRates | undefined;
}
export interface WebhookContext extends RuleInputs {
  events: readonly WebhookEventLite[];
}

/**
 * The checks of one record each, by the scan that reads the records (the engine names the key: orderId, exOrdId,
 * execId, depositId, withdrawalId, currency).
 */
export interface RecordChecks {
  /** Partner orders created in the period, or changed since the account was last judged. */
  partnerOrder: Check<PartnerOrder, PartnerOrderContext>;
  /** Every stored partner order still open. */
  openPartnerOrder: Check<PartnerOrder, RuleInputs>;
  /** Settled partner orders to judge for their webhooks (webhookGapCandidates). */
  settledPartnerOrder: Check<PartnerOrder, WebhookContext>;
  /** Exchange orders in the order rules' scope. */
  exchangeOrder: Check<ExchangeOrderAgg, ExchangeOrderContext>;
  /** Fills of the period, or changed. */
  fill: Check<Fill, FillContext>;
  openDeposit: Check<Deposit, RuleInputs>;
  openWithdrawal: Check<Withdrawal, RuleInputs>;
  /** Withdrawals of the period, or changed. */
  withdrawal: Check<Withdrawal, RuleInputs>;
  /** The latest balance snapshot's lines. */
  balanceLine: Check<BalanceLine, RuleInputs>;
}

/** What a check over a whole set found: its findings (one break each) and how many entities passed. */
export interface Found {
  findings: Finding[];
  passed: number;
}

/** The checks of a whole set, whose findings carry their own keys, figures and extras. */
export interface SetChecks {
  snapshotPairs: (figures: readonly RollFigures[][], x: RuleInputs) => Found;
  coverage: (rows: readonly CoverageRow[], total: number) => Found;
  unsyncedDays: (days: readonly string[], now: Date, streams: readonly StreamReach[]) => Found;
  quarantine: (records: readonly QuarantinedRecord[]) => Found;
}

export type RuleChecks = Partial<RecordChecks> & Partial<SetChecks>;

/** Reference values by name (decimal text; null: unknown, which keeps the record). */
export type RefValues = Readonly<Record<string, string | null>>;

/**
 * A rule's SQL pre-filter over fills: when a fill could fail it, and the reference values of each symbol and each
 * UTC day the condition names. Every fill it leaves out must be one the rule judges and passes.
 */
export interface FillPrefilterSpec {
  couldFail: Condition<FillField> | ((x: RuleInputs) => Condition<FillField>);
  symbol?: (s: SymbolRules, x: RuleInputs) => RefValues;
  day?: (day: Date, x: RuleInputs) => RefValues;
}

/**
 * A rule's SQL pre-filter over exchange orders (stored, in the order rules' scope): when one could fail it, and which
 * of the orders left out it counts as judged and passed (`counts`; absent: all of them).
 */
export interface OrderPrefilterSpec {
  couldFail: Condition<OrderField> | ((x: RuleInputs) => Condition<OrderField>);
  counts?: Condition<OrderField>;
  symbol?: (s: SymbolRules, x: RuleInputs) => RefValues;
}

export interface RulePrefilter {
  fill?: FillPrefilterSpec;
  exchangeOrder?: OrderPrefilterSpec;
}

export interface RuleDef<C extends string = string> {
  code: C;
  family: RuleFamily;
  /** The rule's name in plain English, for readers who do not know the codes (Breaks sheet, e-mail). */
  title: string;
  severity: Severity;
  /** One line, printed by the report. */
  description: string;
  /** Which records the rule looks at, in words (docs/rules.md "Keys, severities, scopes"). */
  scope: string;
  reach: RuleReach;
  /** The kind of record its key names; a rule judging two kinds says which on each check (Failure.entity). */
  entity: RecordKindName;
  /** The unit of its numeric figures (a check of text figures, a state or a hash, is 'text' whatever this says). */
  unit: FigureUnit;
  /** The figures an acknowledgement holds; ages grow at every run, so an age rule holds only its limit. */
  holds: readonly HeldFigure[];
  /** How the break's money at stake (its USD impact) is valued, or why it has none (docs/rules.md "Money at stake"). */
  stake: StakeRule;
  /** The figures read "<subject> off by <difference> on <record>" (else "<title> on <record>: <check>"). */
  subject?: string;
  /** The rule's own sentence, where the generic one would not read well. */
  sentence?: (w: BreakWords) => string;
  /** The inputs it needs; the first one missing makes it "not checked" with that reason. */
  requires: readonly Requirement[];
  check: RuleChecks;
  prefilter?: RulePrefilter;
}

export const BY_DIFFERENCE: StakeRule = {
  basis: 'difference',
  how: 'the difference (actual - expected) in its currency; a check of a price, an age or text: no money',
};
export const noMoney = (why: string): StakeRule => ({ basis: 'none', how: `no money: ${why}` });

export const ALL_FIGURES: readonly HeldFigure[] = ['expected', 'actual', 'difference', 'currency'];
/** The limit and the currency: the age (actual, difference) grows at every run. */
export const LIMIT_ONLY: readonly HeldFigure[] = ['expected', 'currency'];

type Defaulted = 'reach' | 'unit' | 'holds' | 'stake' | 'requires';

/**
 * A rule from what differs from the common case: reach 'records', figures an amount held whole, money at stake the
 * difference, no requirement.
 */
export function defineRule<const C extends string>(
  rule: Omit<RuleDef<C>, Defaulted> & Partial<Pick<RuleDef<C>, Defaulted>>,
): RuleDef<C> {
  return { reach: 'records', unit: 'amount', holds: ALL_FIGURES, stake: BY_DIFFERENCE, requires: [], ...rule };
}
