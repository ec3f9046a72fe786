/** The rule catalog: every rule's code, plain-English title, severity, description and scope, and the ruleset version.
 *
 */
import type { Severity } from '../domain/index.js';

/**
 * Bump when a rule's semantics change, so a run's results can be told apart from runs
 * made under other semantics (stored in run.ruleset_version).
 */
export const RULESET_VERSION = '2026-11-23.1';

export interface RuleDef {
  code: string;
  /** The rule's name in plain English, for readers who do not know the codes (Breaks sheet, e-mail). */
  title: string;
  severity: Severity;
  /** One line, printed by the report. */
  description: string;
  /** Which records the rule looks at (docs/rules.md "Keys, severities, scopes"). */
  scope: string;
  /**
   * true: the rule looks at everything still relevant (stale, balances, quarantine, coverage),
   * so a run that checked it may resolve any of its breaks. false: only breaks whose entity is
   * in this run's scope can be resolved.
   */
  scopeIndependent: boolean;
}

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
    scopeIndependent: false,
  },
  {
    code: 'P_AMOUNT_USD',
    title: 'Partner order USD amount',
    severity: 'medium',
    description: 'amountUsd equals inputAmount on USD orders and is present on the others',
    scope: PERIOD_ORDERS,
    scopeIndependent: false,
  },
  {
    code: 'P_PARTNER_FEE_RATE',
    title: 'Partner fee rate',
    severity: 'medium',
    description: 'partnerFee equals inputAmount x the contract partner fee rate, rounded to the currency precision',
    scope: PERIOD_ORDERS,
    scopeIndependent: false,
  },
  {
    code: 'P_FEE_BOUNDS',
    title: 'Partner fees out of bounds',
    severity: 'high',
    description: 'Fees are non-negative and their sum is below inputAmount',
    scope: PERIOD_ORDERS,
    scopeIndependent: false,
  },
  {
    code: 'P_PRECISION',
    title: 'Partner amount precision or limits',
    severity: 'low',
    description:
      "Amounts have no more decimals than their currency's precision; BUY amounts within the currency's min/max",
    scope: PERIOD_ORDERS,
    scopeIndependent: false,
  },
  {
    code: 'P_STATE',
    title: 'Partner order state inconsistent',
    severity: 'medium',
    description: 'COMPLETED orders have a transaction hash, other states none; state time not before creation',
    scope: PERIOD_ORDERS,
    scopeIndependent: false,
  },
  {
    code: 'P_STALE',
    title: 'Partner order stuck',
    severity: 'low',
    description: 'Order PENDING or WITHDRAWING longer than the configured age (or no longer found)',
    scope: 'every stored partner order still PENDING / WITHDRAWING',
    scopeIndependent: true,
  },
  {
    code: 'P_WEBHOOK_GAP',
    title: 'Partner webhook missing or different',
    severity: 'low',
    description: "Settled order's polled state has no matching webhook event, or the latest event's state differs",
    scope:
      'settled partner orders whose last state change just passed the 3-day retry window (any creation day), and ' +
      'those with an open break',
    scopeIndependent: false,
  },
  {
    code: 'X_DEPOSIT_MISSING',
    title: 'Exchange deposit missing for a paid order',
    severity: 'high',
    description:
      'COMPLETED BUY order paid to our deposit address has no non-REJECTED exchange deposit with its transaction ' +
      'hash (one deposit settles one order)',
    scope: PERIOD_ORDERS,
    scopeIndependent: false,
  },
  {
    code: 'X_DEPOSIT_AMOUNT',
    title: 'Exchange deposit differs from the order',
    severity: 'high',
    description: "Matched exchange deposit's amount or currency differs from the order's output",
    scope: PERIOD_ORDERS,
    scopeIndependent: false,
  },
  {
    code: 'E_FILL_QTY',
    title: 'Fills do not add up to the order quantity',
    severity: 'high',
    description: "Sum of an order's fill quantities equals its cumQty (an order with cumQty > 0 and no fill: sum 0)",
    scope: ORDERS_WITH_FILLS,
    scopeIndependent: false,
  },
  {
    code: 'E_FILL_AVGPX',
    title: 'Fill prices do not match the order average price',
    severity: 'medium',
    description: "Volume-weighted fill price equals the order's avgPx within half a price increment",
    scope: ORDERS_WITH_FILLS,
    scopeIndependent: false,
  },
  {
    code: 'E_FILL_ORPHAN',
    title: 'Fill without its order',
    severity: 'high',
    description: 'Fill whose exchange order cannot be found',
    scope: FILLS,
    scopeIndependent: false,
  },
  {
    code: 'E_FEE_RATE',
    title: 'Exchange fee off the fee schedule',
    severity: 'medium',
    description:
      'Fill fee equals notional x the rate of its day that applies, within tolerance (MARKET/STOP: taker only)',
    scope: FILLS,
    scopeIndependent: false,
  },
  {
    code: 'E_SYMBOL_RULES',
    title: 'Price or quantity off the symbol rules',
    severity: 'low',
    description: "Fill price/quantity on the symbol's increments; order quantity within the symbol's size limits",
    scope: `${FILLS}; ${ORDERS_WITH_FILLS}`,
    scopeIndependent: false,
  },
  {
    code: 'E_BALANCE_ROLL',
    title: 'Balance does not roll forward',
    severity: 'high',
    description: 'Closing balance equals opening balance plus deposits, fills, minus fees and withdrawals',
    scope: 'consecutive balance-snapshot pairs whose closing snapshot is after the period start',
    scopeIndependent: true,
  },
  {
    code: 'E_BALANCE_SANITY',
    title: 'Balance snapshot inconsistent',
    severity: 'medium',
    description: 'Available not above balance; balance_local equals balance x rate within tolerance',
    scope: 'the latest balance snapshot',
    scopeIndependent: true,
  },
  {
    code: 'E_STALE',
    title: 'Deposit or withdrawal stuck',
    severity: 'low',
    description: 'Deposit UNCONFIRMED or withdrawal PENDING longer than the configured age',
    scope: 'every stored deposit UNCONFIRMED / withdrawal PENDING',
    scopeIndependent: true,
  },
  {
    code: 'E_WITHDRAWAL_BENEFICIARY',
    title: 'Withdrawal to a beneficiary not whitelisted',
    severity: 'high',
    description: 'Withdrawal to a beneficiary not on the whitelist snapshot',
    scope: 'withdrawals in the period',
    scopeIndependent: false,
  },
  {
    code: 'S_COVERAGE',
    title: 'Data not fully synced',
    severity: 'high',
    description:
      'A day and stream of the period no sync covered or settled, or a cursor that did not advance while the API had ' +
      'newer records',
    scope: 'stored sync coverage and cursor checks; every day and stream of the period',
    scopeIndependent: true,
  },
  {
    code: 'S_QUARANTINE',
    title: 'Record quarantined as invalid',
    severity: 'medium',
    description: 'Record that failed validation is in quarantine and not yet fetched valid',
    scope: 'every unresolved quarantined record',
    scopeIndependent: true,
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
