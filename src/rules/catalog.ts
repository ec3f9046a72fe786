/** The rule catalog: every rule, one line each, in the order the report lists them. A rule is one object in its
 * family's file (src/rules/families/, defineRule in define.ts); adding one is its own file and one line here.
 */
import { E_BALANCE_ROLL, E_BALANCE_SANITY } from './families/balances.js';
import { X_DEPOSIT_AMOUNT, X_DEPOSIT_MISSING } from './families/cross.js';
import { E_FILL_AVGPX, E_FILL_QTY, E_ORDER_STATUS } from './families/exchange-orders.js';
import { E_FEE_RATE, E_FILL_ORPHAN, E_SYMBOL_RULES } from './families/fills.js';
import { E_FILL_ORDER_MISMATCH } from './families/fill-order-mismatch.js';
import {
  P_AMOUNT_USD,
  P_FEE_BOUNDS,
  P_FEE_USD,
  P_PARTNER_FEE_RATE,
  P_PRECISION,
  P_STALE,
  P_STATE,
  P_WEBHOOK_GAP,
} from './families/partner.js';
import { E_STALE, E_WITHDRAWAL_BENEFICIARY } from './families/payments.js';
import { S_COVERAGE, S_QUARANTINE } from './families/sync.js';
import type { RuleDef } from './define.js';

export type { HeldFigure, RuleDef, RuleReach, StakeRule } from './define.js';

/**
 * Bump when a rule's semantics change, so a run's results can be told apart from runs
 * made under other semantics (stored in run.ruleset_version).
 */
export const RULESET_VERSION = '2026-11-28.1';

export const RULES = [
  P_FEE_USD,
  P_AMOUNT_USD,
  P_PARTNER_FEE_RATE,
  P_FEE_BOUNDS,
  P_PRECISION,
  P_STATE,
  P_STALE,
  P_WEBHOOK_GAP,
  X_DEPOSIT_MISSING,
  X_DEPOSIT_AMOUNT,
  E_FILL_QTY,
  E_FILL_AVGPX,
  E_ORDER_STATUS,
  E_FILL_ORPHAN,
  E_FEE_RATE,
  E_SYMBOL_RULES,
  E_FILL_ORDER_MISMATCH,
  E_BALANCE_ROLL,
  E_BALANCE_SANITY,
  E_STALE,
  E_WITHDRAWAL_BENEFICIARY,
  S_COVERAGE,
  S_QUARANTINE,
] as const satisfies readonly RuleDef[];

/** Every rule code: a code not in the catalog is a compile error wherever a RuleCode is asked for. */
export type RuleCode = (typeof RULES)[number]['code'];

const BY_CODE = new Map<string, RuleDef<RuleCode>>(RULES.map((r) => [r.code, r]));

/** The rule of a stored code (a code no longer in the catalog: undefined). */
export function findRule(code: string): RuleDef<RuleCode> | undefined {
  return BY_CODE.get(code);
}

export function ruleDef(code: RuleCode): RuleDef<RuleCode> {
  const def = BY_CODE.get(code);
  if (!def) throw new Error(`unknown rule code ${code}`);
  return def;
}

/** A code read back from the store or a file is a catalog code. */
export function isRuleCode(code: string): code is RuleCode {
  return BY_CODE.has(code);
}
