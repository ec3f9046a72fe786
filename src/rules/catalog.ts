/** The rule catalog: every rule's descriptor (code, title, severity, what its key names, the unit of its figures, what
 * an acknowledgement holds, its scope and its sentence) and the ruleset version.
 */
import type { FigureUnit, RecordKindName, Severity } from '../domain/index.js';
import {
  balanceRollSentence,
  coverageSentence,
  depositMissingSentence,
  orphanSentence,
  staleSentence,
} from './sentences.js';
import type { BreakWords } from './words.js';

/**
 * Bump when a rule's semantics change, so a run's results can be told apart from runs
 * made under other semantics (stored in run.ruleset_version).
 */
export const RULESET_VERSION = '2026-11-25.2';

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

export interface RuleDef {
  code: string;
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
}

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

const BY_DIFFERENCE: StakeRule = {
  basis: 'difference',
  how: 'the difference (actual - expected) in its currency; a check of a price, an age or text: no money',
};
const noMoney = (why: string): StakeRule => ({ basis: 'none', how: `no money: ${why}` });

const ALL_FIGURES: readonly HeldFigure[] = ['expected', 'actual', 'difference', 'currency'];
/** The limit and the currency: the age (actual, difference) grows at every run. */
const LIMIT_ONLY: readonly HeldFigure[] = ['expected', 'currency'];

/** The fields most rules share: override what differs. */
const base = { reach: 'records', unit: 'amount', holds: ALL_FIGURES, stake: BY_DIFFERENCE } as const;

const PERIOD_ORDERS = 'partner orders created in the period';
const ORDERS_WITH_FILLS = 'exchange orders with at least one fill in the period, or created in it with cumQty > 0';
const FILLS = 'fills in the period';

export const RULES: readonly RuleDef[] = [
  {
    code: 'P_FEE_USD',
    title: 'Partner fee USD twin',
    severity: 'medium',
    description: 'Fee USD amounts equal fee x amountUsd / inputAmount (exact to the cent for USD orders)',
    scope: PERIOD_ORDERS,
    ...base,
    entity: 'partnerOrder',
    subject: 'Partner fee USD twin',
  },
  {
    code: 'P_AMOUNT_USD',
    title: 'Partner order USD amount',
    severity: 'medium',
    description: 'amountUsd equals inputAmount on USD orders and is present on the others',
    scope: PERIOD_ORDERS,
    ...base,
    entity: 'partnerOrder',
    subject: 'USD amount',
  },
  {
    code: 'P_PARTNER_FEE_RATE',
    title: 'Partner fee rate',
    severity: 'medium',
    description: 'partnerFee equals inputAmount x the contract partner fee rate, rounded to the currency precision',
    scope: PERIOD_ORDERS,
    ...base,
    entity: 'partnerOrder',
    subject: 'Partner fee',
  },
  {
    code: 'P_FEE_BOUNDS',
    title: 'Partner fees out of bounds',
    severity: 'high',
    description: 'Fees are non-negative and their sum is below inputAmount',
    scope: PERIOD_ORDERS,
    ...base,
    entity: 'partnerOrder',
  },
  {
    code: 'P_PRECISION',
    title: 'Partner amount precision or limits',
    severity: 'low',
    description:
      "Amounts have no more decimals than their currency's precision; BUY amounts within the currency's min/max",
    scope: PERIOD_ORDERS,
    ...base,
    entity: 'partnerOrder',
  },
  {
    code: 'P_STATE',
    title: 'Partner order state inconsistent',
    severity: 'medium',
    description: 'COMPLETED orders have a transaction hash, other states none; state time not before creation',
    scope: PERIOD_ORDERS,
    ...base,
    entity: 'partnerOrder',
    unit: 'text',
    stake: noMoney('a state, not an amount'),
  },
  {
    code: 'P_STALE',
    title: 'Partner order stuck',
    severity: 'low',
    description: 'Order PENDING or WITHDRAWING longer than the configured age (or no longer found)',
    scope: 'every stored partner order still PENDING / WITHDRAWING',
    ...base,
    reach: 'everything',
    entity: 'partnerOrder',
    unit: 'hours',
    holds: LIMIT_ONLY,
    sentence: staleSentence,
    stake: noMoney('an age (the order is late, its amounts are judged by the other rules)'),
  },
  {
    code: 'P_WEBHOOK_GAP',
    title: 'Partner webhook missing or different',
    severity: 'low',
    description: "Settled order's polled state has no matching webhook event, or the latest event's state differs",
    scope:
      'settled partner orders whose last state change just passed the 3-day retry window (any creation day), and ' +
      'those with an open break',
    ...base,
    reach: 'judged',
    entity: 'partnerOrder',
    unit: 'text',
    stake: noMoney('a missing or different webhook event'),
  },
  {
    code: 'X_DEPOSIT_MISSING',
    title: 'Exchange deposit missing for a paid order',
    severity: 'high',
    description:
      'COMPLETED BUY order paid to our deposit address has no non-REJECTED exchange deposit with its transaction ' +
      'hash (one deposit settles one order)',
    scope: PERIOD_ORDERS,
    ...base,
    entity: 'partnerOrder',
    stake: {
      basis: 'expected',
      how: 'minus the amount the order paid to our deposit address (nothing arrived); else the difference',
    },
    sentence: depositMissingSentence,
  },
  {
    code: 'X_DEPOSIT_AMOUNT',
    title: 'Exchange deposit differs from the order',
    severity: 'high',
    description: "Matched exchange deposit's amount or currency differs from the order's output",
    scope: PERIOD_ORDERS,
    ...base,
    entity: 'partnerOrder',
    subject: 'Exchange deposit',
  },
  {
    code: 'E_FILL_QTY',
    title: 'Fills do not add up to the order quantity',
    severity: 'high',
    description: "Sum of an order's fill quantities equals its cumQty (an order with cumQty > 0 and no fill: sum 0)",
    scope: ORDERS_WITH_FILLS,
    ...base,
    entity: 'exchangeOrder',
    subject: 'Sum of fill quantities',
  },
  {
    code: 'E_FILL_AVGPX',
    title: 'Fill prices do not match the order average price',
    severity: 'medium',
    description: "Volume-weighted fill price equals the order's avgPx within half a price increment",
    scope: ORDERS_WITH_FILLS,
    ...base,
    entity: 'exchangeOrder',
    unit: 'price',
    subject: 'Fill average price',
    stake: noMoney("a price (the quantities are E_FILL_QTY's)"),
  },
  {
    code: 'E_ORDER_STATUS',
    title: 'Order status contradicts its quantities',
    severity: 'medium',
    description: 'A REJECTED order has no filled quantity and no fill; a FILLED order has no quantity left open',
    scope: ORDERS_WITH_FILLS,
    ...base,
    entity: 'exchangeOrder',
  },
  {
    code: 'E_FILL_ORPHAN',
    title: 'Fill without its order',
    severity: 'high',
    description: 'Fill whose exchange order cannot be found',
    scope: FILLS,
    ...base,
    entity: 'fill',
    unit: 'text',
    sentence: orphanSentence,
    stake: {
      basis: 'recorded',
      how:
        "the fill's notional (qty x price) in the symbol's counter currency: minus for a BUY (paid out), plus for a " +
        "SELL (received); no figure when the symbol's rules are unknown",
    },
  },
  {
    code: 'E_FEE_RATE',
    title: 'Exchange fee off the fee schedule',
    severity: 'medium',
    description:
      'Fill fee equals notional x the rate of its day that applies, within tolerance (MARKET/STOP: taker only)',
    scope: FILLS,
    ...base,
    entity: 'fill',
    subject: 'Fill fee',
  },
  {
    code: 'E_SYMBOL_RULES',
    title: 'Price or quantity off the symbol rules',
    severity: 'low',
    description: "Fill price/quantity on the symbol's increments; order quantity within the symbol's size limits",
    scope: `${FILLS}; ${ORDERS_WITH_FILLS}`,
    ...base,
    entity: 'fill',
  },
  {
    code: 'E_BALANCE_ROLL',
    title: 'Balance does not roll forward',
    severity: 'high',
    description: 'Closing balance equals opening balance plus deposits, fills, minus fees and withdrawals',
    scope: 'consecutive balance-snapshot pairs whose closing snapshot is after the period start',
    ...base,
    reach: 'everything',
    entity: 'balance',
    sentence: balanceRollSentence,
  },
  {
    code: 'E_BALANCE_SANITY',
    title: 'Balance snapshot inconsistent',
    severity: 'medium',
    description: 'Available not above balance; balance_local equals balance x rate within tolerance',
    scope: 'the latest balance snapshot',
    ...base,
    reach: 'everything',
    entity: 'balance',
  },
  {
    code: 'E_STALE',
    title: 'Deposit or withdrawal stuck',
    severity: 'low',
    description: 'Deposit UNCONFIRMED or withdrawal PENDING longer than the configured age',
    scope: 'every stored deposit UNCONFIRMED / withdrawal PENDING',
    ...base,
    reach: 'everything',
    entity: 'deposit',
    unit: 'hours',
    holds: LIMIT_ONLY,
    sentence: staleSentence,
    stake: noMoney('an age (the deposit or withdrawal is late; its amount is not in doubt)'),
  },
  {
    code: 'E_WITHDRAWAL_BENEFICIARY',
    title: 'Withdrawal to a beneficiary not whitelisted',
    severity: 'high',
    description: 'Withdrawal to a beneficiary not on the whitelist snapshot',
    scope: 'withdrawals in the period',
    ...base,
    entity: 'withdrawal',
    unit: 'text',
    stake: {
      basis: 'recorded',
      how:
        'minus (amount + fee) in its currency: gone to an address not on the whitelist; 0 when the withdrawal was ' +
        'REJECTED, FAILED or REFUNDED (nothing left the account)',
    },
  },
  {
    code: 'S_COVERAGE',
    title: 'Data not fully synced',
    severity: 'high',
    description:
      'A day and stream of the period no sync covered or settled, or a cursor that did not advance while the API had ' +
      'newer records',
    scope: 'stored sync coverage and cursor checks; every day and stream of the period',
    ...base,
    reach: 'everything',
    entity: 'coverage',
    unit: 'text',
    sentence: coverageSentence,
    stake: noMoney('data not synced (the missing records are not known)'),
  },
  {
    code: 'S_QUARANTINE',
    title: 'Record quarantined as invalid',
    severity: 'medium',
    description: 'Record that failed validation is in quarantine and not yet fetched valid',
    scope: 'every unresolved quarantined record',
    ...base,
    reach: 'everything',
    entity: 'quarantine',
    unit: 'text',
    stake: noMoney('a record that failed validation (its figures are not trusted)'),
  },
];

const BY_CODE = new Map(RULES.map((r) => [r.code, r]));

export function findRule(code: string): RuleDef | undefined {
  return BY_CODE.get(code);
}

export function ruleDef(code: string): RuleDef {
  const def = BY_CODE.get(code);
  if (!def) throw new Error(`unknown rule code ${code}`);
  return def;
}
