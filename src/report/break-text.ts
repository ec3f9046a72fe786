/** A break in words: the rule's plain-English title and a one-sentence explanation of the break, for the workbook and the e-mail. */
import { findRule } from '../rules/catalog.js';
import type { Break } from '../domain/index.js';

/** The fields of a break its words are made from. */
export type BreakForWords = Pick<Break, 'code' | 'key' | 'currency' | 'expected' | 'actual' | 'difference' | 'message'>;

/** The rule's name in plain English ("Partner fee USD twin"), or the code itself for a code the catalog does not know. */
export function ruleTitle(code: string): string {
  return findRule(code)?.description ?? code;
}

/** One sentence a reader without the rule codes understands ("Partner fee USD twin off by 0.50 EUR on order X"). */
export function breakSentence(b: BreakForWords): string {
  const off = b.difference ? ` off by ${b.difference}${b.currency ? ` ${b.currency}` : ''}` : '';
  return `${ruleTitle(b.code)}${off} on ${b.key}${b.message ? `: ${b.message}` : ''}.`;
}
