/** What a stored break says, read from its rule's descriptor: its title, its sentence and the amount at stake. */
import { Decimal } from '../decimal/decimal.js';
import { figureValue, type Break } from '../domain/index.js';
import { findRule } from './catalog.js';
import { genericSentence, wordsOf } from './words.js';

type Described = Pick<Break, 'code' | 'key' | 'entity' | 'unit' | 'currency' | 'expected' | 'actual' | 'difference'> & {
  message: string | null;
  detail?: unknown;
};

/** The rule's name in plain English ("Partner fee USD twin"), or the code itself for a code the catalog does not know. */
export function ruleTitle(code: string): string {
  return findRule(code)?.title ?? code;
}

/**
 * One sentence a reader without the rule codes understands, always naming the key:
 * "Partner fee USD twin off by 0.50 USD on order ord_123 (...)", "Deposit 123 UNCONFIRMED for 50.9 hours (limit 24)".
 * With `dp` (the currency's decimals) its money figures read at that precision; without, as stored (exact).
 */
export function breakSentence(b: Described, dp?: number | null): string {
  const words = wordsOf(b, dp);
  const rule = findRule(b.code);
  if (rule?.sentence) return rule.sentence(words);
  return genericSentence(words, { title: rule?.title ?? b.code, subject: rule?.subject });
}

/** The fields of a break its money at stake is read from. */
export type StakeFields = Pick<Break, 'code' | 'unit' | 'currency' | 'expected' | 'actual' | 'difference'> & {
  detail?: unknown;
};

/**
 * A break's money at stake as its rule's descriptor values it (catalog.ts StakeRule), in its currency, signed from the
 * business's side (negative: missing or gone; positive: extra): an amount; 'no money' (the rule, or this check of
 * it, moves none: an age, a price, a state); or 'unknown' (money, but no figure: no currency, a figure that is not a
 * number, a break stored before its rule recorded one).
 */
export function stakeOf(b: StakeFields): { value: Decimal; currency: string } | 'no money' | 'unknown' {
  const rule = findRule(b.code)?.stake;
  if (!rule || rule.basis === 'none') return 'no money';
  if (rule.basis === 'recorded') return recordedStake(b.detail) ?? 'unknown';
  if (b.unit !== 'amount') return 'no money';
  if (!b.currency) return 'unknown';
  const difference = figureValue(b, b.difference);
  if (difference) return { value: difference, currency: b.currency };
  const expected = figureValue(b, b.expected);
  if (rule.basis === 'expected' && expected && b.actual === null)
    return { value: expected.neg(), currency: b.currency };
  return 'unknown';
}

/** The amount a rule recorded with its break (detail.stake: { value, currency }); null when absent or not a number. */
function recordedStake(detail: unknown): { value: Decimal; currency: string } | null {
  const stake = detail && typeof detail === 'object' ? (detail as Record<string, unknown>).stake : undefined;
  if (!stake || typeof stake !== 'object') return null;
  const { value, currency } = stake as Record<string, unknown>;
  if (typeof currency !== 'string' || !currency || (typeof value !== 'string' && typeof value !== 'number'))
    return null;
  try {
    return { value: new Decimal(String(value)), currency };
  } catch {
    return null;
  }
}

/** How the break's rule values its money at stake, in words ("no money: an age ..."), from its descriptor. */
export function stakeRuleText(code: string): string {
  return findRule(code)?.stake.how ?? 'no money: a rule this version does not know';
}

/** The amount at stake (stakeOf), or null when there is none or no figure. */
export function amountAtStake(b: StakeFields): { value: Decimal; currency: string } | null {
  const s = stakeOf(b);
  return typeof s === 'string' ? null : s;
}
