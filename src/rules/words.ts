/** A break in words: the facts a sentence is made of, the generic sentence, and the helpers the rules' own sentences
 * share. Every word comes from the break's fields and its structured detail, never from parsing its message.
 */
import { Decimal } from '../decimal/decimal.js';
import { RECORD_KINDS, type Break } from '../domain/index.js';

/** What a sentence is made of: the stored break (figures as exact text), its first check and how many there are. */
export interface BreakWords {
  code: string;
  key: string;
  entity: Break['entity'];
  unit: Break['unit'];
  currency: string | null;
  expected: string | null;
  actual: string | null;
  difference: string | null;
  /** The first failing check's words (with its note), without "(+N more)". */
  check: string;
  /** The facts the rule recorded with its first check (a state, a hash). */
  facts: Readonly<Record<string, string>>;
  /** How many checks failed on the entity. */
  checks: number;
  /** The break's structured detail (a roll-forward's first divergent day, a coverage row's source and day). */
  detail: Readonly<Record<string, unknown>>;
}

type StoredWords = Pick<
  Break,
  'code' | 'key' | 'entity' | 'unit' | 'currency' | 'expected' | 'actual' | 'difference'
> & {
  message: string | null;
  detail?: unknown;
};

interface StoredCheck {
  check?: unknown;
  note?: unknown;
  facts?: unknown;
}

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i;

/**
 * A figure's text at `dp` decimals (half-up), or, where that would show a figure that is not zero as 0, at its first
 * significant digit: a sentence reads at the currency's precision and never hides a difference. Text that is not a
 * number stays as it is.
 */
export function atPrecision(text: string | null, dp: number): string | null {
  if (text === null || !NUMBER.test(text.trim())) return text;
  const value = new Decimal(text.trim());
  const rounded = value.toDecimalPlaces(dp, Decimal.ROUND_HALF_UP);
  if (!rounded.isZero() || value.isZero()) return rounded.toFixed(dp);
  return value.toDecimalPlaces(-value.e, Decimal.ROUND_HALF_UP).toFixed();
}

/** Decimals `text` needs so that it does not show as 0 when it is not: `dp`, or its first significant digit's. */
function decimalsToShow(text: string | null, dp: number): number {
  if (text === null || !NUMBER.test(text.trim())) return dp;
  const value = new Decimal(text.trim());
  return value.isZero() || !value.toDecimalPlaces(dp, Decimal.ROUND_HALF_UP).isZero() ? dp : -value.e;
}

/**
 * The words of a stored break: its checks are read from its detail (the message is only their summary). With `dp`,
 * money and price figures are put at that many decimals (atPrecision).
 */
export function wordsOf(b: StoredWords, dp?: number | null): BreakWords {
  // The three figures share their decimals, so "expected 1.2300, actual 1.2297" shows the difference of -0.0003.
  const shared = dp === undefined || dp === null ? null : Math.max(dp, decimalsToShow(b.difference, dp));
  const at = (text: string | null) =>
    shared === null || (b.unit !== 'amount' && b.unit !== 'price') ? text : atPrecision(text, shared);
  const detail =
    b.detail && typeof b.detail === 'object' && !Array.isArray(b.detail) ? (b.detail as Record<string, unknown>) : {};
  const checks = Array.isArray(detail.checks) ? (detail.checks as StoredCheck[]) : [];
  const first = checks[0];
  const check =
    first && typeof first.check === 'string'
      ? `${first.check}${typeof first.note === 'string' && first.note ? ` (${first.note})` : ''}`
      : (b.message ?? '');
  const facts: Record<string, string> = {};
  if (first?.facts && typeof first.facts === 'object')
    for (const [k, v] of Object.entries(first.facts)) if (v !== null && v !== undefined) facts[k] = String(v);
  return {
    code: b.code,
    key: b.key,
    entity: b.entity,
    unit: b.unit,
    currency: b.currency,
    expected: at(b.expected),
    actual: at(b.actual),
    difference: at(b.difference),
    check,
    facts,
    checks: Math.max(1, checks.length),
    detail,
  };
}

/** The unit of the figures as a reader sees it: a currency code (amounts, quantities, prices), 'hours', or 'text'. */
export function unitWord(b: Pick<BreakWords, 'unit' | 'currency'>): string {
  if (b.unit === 'hours' || b.unit === 'text') return b.unit;
  return b.currency ?? 'number';
}

/** "0.50 USD": a figure with its unit; text and unknown units stand alone. */
export function withUnit(value: string, unit: string): string {
  return unit === 'text' || unit === 'number' ? value : `${value} ${unit}`;
}

/** An age in hours to one decimal ("50.9"), or the text as it is. */
export function hours(text: string | null): string {
  if (text === null) return '?';
  try {
    return new Decimal(text.trim()).toDecimalPlaces(1, Decimal.ROUND_HALF_UP).toFixed();
  } catch {
    return text;
  }
}

/** " (and 2 more checks, see Detail)" after a sentence about the first of several checks. */
export function more(b: Pick<BreakWords, 'checks'>): string {
  const n = b.checks - 1;
  return n > 0 ? ` (and ${n} more ${n === 1 ? 'check' : 'checks'}, see Detail)` : '';
}

/** "order ord_123": the record the key names, in words (a currency or a coverage key stands alone). */
export function recordWords(b: Pick<BreakWords, 'entity' | 'key'>): string {
  const kind = RECORD_KINDS[b.entity];
  return kind && kind.table ? `${kind.noun} ${b.key}` : b.key;
}

/**
 * The sentence of a rule without words of its own: "<subject> off by <difference> on <record>: expected ..., actual
 * ..." when it names a subject and its figures are numbers; else "<title> on <record>: <check> (<figures>)".
 */
export function genericSentence(b: BreakWords, rule: { title: string; subject?: string }): string {
  const unit = unitWord(b);
  const on = recordWords(b);
  const msg = b.check;
  const tail = more(b);
  if (rule.subject && b.unit !== 'text' && b.difference !== null) {
    const figures = b.expected !== null && b.actual !== null ? `: expected ${b.expected}, actual ${b.actual}` : '';
    const off = withUnit(b.difference.trim(), unit);
    return `${rule.subject} off by ${off} on ${on}${figures}${msg ? ` (${msg})` : ''}${tail}.`;
  }
  const parts = [
    b.expected !== null ? `expected ${b.expected}` : null,
    b.actual !== null ? `actual ${b.actual}` : null,
  ];
  if (b.difference !== null) parts.push(`difference ${withUnit(b.difference, unit)}`);
  else if (b.unit !== 'text' && b.unit !== 'hours' && b.currency && parts.some(Boolean)) parts.push(b.currency);
  const figures = parts.filter(Boolean).join(', ');
  return `${rule.title} on ${on}${msg ? `: ${msg}` : ''}${figures && b.unit !== 'text' ? ` (${figures})` : ''}${tail}.`;
}
