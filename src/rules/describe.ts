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

/**
 * The amount whose USD value is the break's impact, in its currency, signed like the difference (actual - expected:
 * negative when less arrived or was charged than expected): the difference, or for a rule whose whole expected amount
 * is at stake when nothing arrived (a missing deposit) minus that amount. null when the figures are not an amount of a
 * known currency (ages, prices, text).
 */
export function amountAtStake(
  b: Pick<Break, 'code' | 'unit' | 'currency' | 'expected' | 'actual' | 'difference'>,
): { value: Decimal; currency: string } | null {
  if (b.unit !== 'amount' || !b.currency) return null;
  const difference = figureValue(b, b.difference);
  if (difference) return { value: difference, currency: b.currency };
  const expected = figureValue(b, b.expected);
  if (findRule(b.code)?.atStake === 'expected' && expected && b.actual === null)
    return { value: expected.neg(), currency: b.currency };
  return null;
}
