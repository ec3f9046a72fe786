/** A break in words: the rule's plain-English title, a one-sentence explanation, the unit of its figures, its readable
 * detail and its amounts as reported.
 */
import { Decimal } from '../decimal/decimal.js';
import { findRule } from '../rules/catalog.js';
import type { Break } from '../domain/index.js';

/** The fields of a break its words are made from. */
export type BreakForWords = Pick<
  Break,
  'code' | 'key' | 'currency' | 'expected' | 'actual' | 'difference' | 'message'
> & { detail?: unknown };

/**
 * The unit of a break's expected / actual / difference: a currency code (an amount or a quantity
 * of that currency), 'hours' (P_STALE, E_STALE: ages, whatever the record's currency), 'number' (a
 * figure whose currency is unknown), or 'text' (states, hashes, timestamps, or no figure at all).
 * 'count' and 'days' are reserved for rules that report such figures (none today).
 */
export type BreakUnit = string;

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

export function isNumericText(text: string | null | undefined): text is string {
  return typeof text === 'string' && NUMERIC.test(text.trim());
}

/**
 * The rule's name in plain English ("Partner fee USD twin"), or the code itself for a code the catalog does not know.
 */
export function ruleTitle(code: string): string {
  return findRule(code)?.title ?? code;
}

/** Units that are not a currency. */
export const NON_CURRENCY_UNITS: readonly string[] = ['hours', 'count', 'days', 'number', 'text'];

/**
 * E_BALANCE_SANITY's balance_local check reports figures in the exchange's local currency (assumed
 * USD, as the Balances sheet's USD value: see the Summary's assumptions), not in the line's currency.
 */
function isLocalCurrencyCheck(b: Pick<BreakForWords, 'code' | 'message'>): boolean {
  return b.code === 'E_BALANCE_SANITY' && /^balance_local/.test(b.message ?? '');
}

/** E_SYMBOL_RULES's price-increment check: its figures are prices, not amounts. */
function isPriceCheck(b: Pick<BreakForWords, 'code' | 'message'>): boolean {
  return b.code === 'E_FILL_AVGPX' || (b.code === 'E_SYMBOL_RULES' && /^price /.test(b.message ?? ''));
}

/** The unit of expected / actual / difference (see BreakUnit). */
export function unitOf(
  b: Pick<BreakForWords, 'code' | 'currency' | 'expected' | 'actual' | 'difference' | 'message'>,
): BreakUnit {
  if (b.code === 'E_STALE' || b.code === 'P_STALE') return 'hours';
  const numeric = [b.expected, b.actual, b.difference].some(isNumericText);
  if (!numeric) return 'text';
  if (isLocalCurrencyCheck(b)) return 'USD';
  return b.currency ?? 'number';
}

/** Whether the unit is a currency code (the figures are amounts or quantities of it). */
export function isCurrencyUnit(unit: BreakUnit): boolean {
  return !NON_CURRENCY_UNITS.includes(unit);
}

/**
 * The amount whose USD value is the break's impact, in `unit`: |difference|; for X_DEPOSIT_MISSING
 * (no deposit, so no difference) the whole expected deposit. null when the figures are not money:
 * ages, text, prices (E_FILL_AVGPX, E_SYMBOL_RULES price checks), or no amount at all.
 */
export function impactAmount(
  b: Pick<BreakForWords, 'code' | 'currency' | 'expected' | 'actual' | 'difference' | 'message'>,
): { value: Decimal; currency: string } | null {
  const unit = unitOf(b);
  if (!isCurrencyUnit(unit) || isPriceCheck(b)) return null;
  if (isNumericText(b.difference)) return { value: new Decimal(b.difference.trim()).abs(), currency: unit };
  if (b.code === 'X_DEPOSIT_MISSING' && isNumericText(b.expected) && b.actual === null)
    return { value: new Decimal(b.expected.trim()).abs(), currency: unit };
  return null;
}

/**
 * The break's figures as the store holds them, `expected | actual | difference | currency` (each
 * empty when null): the Breaks sheet's hidden "Amounts as reported" column, which the workbook
 * import compares to tell whether a break's amounts changed since the workbook was written.
 */
export function amountsAsReported(b: Pick<Break, 'expected' | 'actual' | 'difference' | 'currency'>): string {
  return [b.expected, b.actual, b.difference, b.currency].map((x) => x ?? '').join(' | ');
}

/** What the key names, in words ("order", "fill", ...). */
function entityOf(b: Pick<BreakForWords, 'code' | 'message'>): string {
  const { code } = b;
  if (code.startsWith('P_') || code.startsWith('X_')) return 'order';
  if (code === 'E_FILL_QTY' || code === 'E_FILL_AVGPX') return 'exchange order';
  if (code === 'E_FILL_ORPHAN' || code === 'E_FEE_RATE') return 'fill';
  if (code === 'E_SYMBOL_RULES') return /order quantity|order size/i.test(b.message ?? '') ? 'exchange order' : 'fill';
  if (code === 'E_STALE') return /^withdrawal/i.test(b.message ?? '') ? 'withdrawal' : 'deposit';
  if (code === 'E_WITHDRAWAL_BENEFICIARY') return 'withdrawal';
  if (code === 'S_QUARANTINE') return 'record';
  return '';
}

function withUnit(value: string, unit: string): string {
  return unit === 'text' || unit === 'number' ? value : `${value} ${unit}`;
}

function hours(text: string | null): string {
  return isNumericText(text)
    ? new Decimal(text.trim()).toDecimalPlaces(1, Decimal.ROUND_HALF_UP).toFixed()
    : (text ?? '?');
}

/** "0.50" stays as reported; a difference gets its sign only when negative. */
function figure(text: string): string {
  return text.trim();
}

/** The message without its trailing "(+N more)": the detail lists every check. */
function lead(message: string | null): string {
  return (message ?? '').replace(/\s*\(\+\d+ more\)$/, '');
}

function more(message: string | null): string {
  const m = /\(\+(\d+) more\)$/.exec(message ?? '');
  return m ? ` (and ${m[1]} more ${m[1] === '1' ? 'check' : 'checks'}, see Detail)` : '';
}

/**
 * One sentence a reader without the rule codes understands, always naming the key:
 * "Partner fee USD twin off by 0.50 USD on order ord_123 (partnerFeeUsd ...)",
 * "Deposit 123 UNCONFIRMED for 50.9 hours (limit 24)".
 */
export function breakSentence(b: BreakForWords): string {
  const title = ruleTitle(b.code);
  const unit = unitOf(b);
  const entity = entityOf(b);
  const on = entity ? `${entity} ${b.key}` : b.key;
  const msg = lead(b.message);
  const tail = more(b.message);
  switch (b.code) {
    case 'E_STALE': {
      const state = /UNCONFIRMED|PENDING/.exec(msg)?.[0] ?? 'open';
      const kind = entity === 'withdrawal' ? 'Withdrawal' : 'Deposit';
      return `${kind} ${b.key}${b.currency ? ` (${b.currency})` : ''} ${state} for ${hours(b.actual)} hours (limit ${b.expected ?? '?'}).`;
    }
    case 'P_STALE': {
      const state = /^(PENDING|WITHDRAWING)/.exec(msg)?.[0] ?? 'open';
      const gone = /no longer found/.test(msg) ? ' and no longer found by the partner API' : '';
      return `Partner order ${b.key} ${state} for ${hours(b.actual)} hours (limit ${b.expected ?? '?'})${gone}.`;
    }
    case 'X_DEPOSIT_MISSING': {
      const hash = /txHash (\S+)/.exec(msg)?.[1];
      const amount = b.expected ? ` of ${withUnit(b.expected, b.currency ?? 'text')}` : '';
      return `No exchange deposit${amount} for paid order ${b.key}${hash ? ` (transaction hash ${hash})` : ''}${tail}.`;
    }
    case 'E_FILL_ORPHAN':
      return `Fill ${b.key}: ${msg || 'its exchange order is not stored'}${tail}.`;
    case 'E_BALANCE_ROLL': {
      const day = firstDivergentDay(b.detail);
      const off = isNumericText(b.difference) ? ` off by ${withUnit(figure(b.difference), unit)}` : '';
      return `${b.key} balance does not roll forward${off}: expected closing ${b.expected ?? '?'}, actual ${b.actual ?? '?'}${day ? ` (first divergent day ${day})` : ''}${tail}.`;
    }
    case 'S_COVERAGE': {
      const [source, stream, ...rest] = b.key.split(':');
      const what =
        stream === 'cursor' ? `${source} cursor ${rest.join(':')}` : `${source} ${stream ?? ''} of ${rest.join(':')}`;
      return `${what} not fully synced (${b.key}): ${msg}${tail}.`;
    }
  }
  const subject = OFF_BY[b.code];
  if (subject && isNumericText(b.difference) && unit !== 'text') {
    const figures = b.expected !== null && b.actual !== null ? `: expected ${b.expected}, actual ${b.actual}` : '';
    return `${subject} off by ${withUnit(figure(b.difference), unit)} on ${on}${figures}${msg ? ` (${msg})` : ''}${tail}.`;
  }
  const parts = [
    b.expected !== null ? `expected ${b.expected}` : null,
    b.actual !== null ? `actual ${b.actual}` : null,
  ];
  if (b.difference !== null) parts.push(`difference ${withUnit(b.difference, unit)}`);
  else if (isCurrencyUnit(unit) && parts.some(Boolean)) parts.push(unit);
  const figures = parts.filter(Boolean).join(', ');
  return `${title} on ${on}${msg ? `: ${msg}` : ''}${figures && unit !== 'text' ? ` (${figures})` : ''}${tail}.`;
}

/** Rules whose figures read as "<subject> off by <difference> on <entity>". */
const OFF_BY: Readonly<Record<string, string>> = {
  P_FEE_USD: 'Partner fee USD twin',
  P_AMOUNT_USD: 'USD amount',
  P_PARTNER_FEE_RATE: 'Partner fee',
  X_DEPOSIT_AMOUNT: 'Exchange deposit',
  E_FILL_QTY: 'Sum of fill quantities',
  E_FILL_AVGPX: 'Fill average price',
  E_FEE_RATE: 'Fill fee',
};

function firstDivergentDay(detail: unknown): string | null {
  if (detail && typeof detail === 'object' && 'firstDivergentDay' in detail) {
    const d = (detail as { firstDivergentDay: unknown }).firstDivergentDay;
    return d === null || d === undefined ? null : valueText(d);
  }
  return null;
}

function isLossless(v: unknown): v is { value: string } {
  return typeof v === 'object' && v !== null && 'isLosslessNumber' in v;
}

/**
 * One value in words: exact numbers (LosslessNumber, bigint), ISO times, lists joined, objects as "name: value, ...".
 */
export function valueText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (isLossless(v)) return String(v.value);
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return v.toISOString();
  if (Decimal.isDecimal(v)) return (v as Decimal).toFixed();
  if (Array.isArray(v))
    return v
      .map((x) =>
        x && typeof x === 'object' && !isLossless(x) && !Array.isArray(x) ? `(${fieldsText(x)})` : valueText(x),
      )
      .join(', ');
  if (typeof v === 'object') return fieldsText(v as object);
  return String(v);
}

/** Fields of a rule's failing check in reading order (jsonb stores keys in its own order). */
const FIELD_ORDER = ['check', 'expected', 'actual', 'difference', 'currency', 'note'];

function fieldsText(o: object): string {
  const rank = (k: string) => (FIELD_ORDER.includes(k) ? FIELD_ORDER.indexOf(k) : FIELD_ORDER.length);
  return Object.entries(o)
    .sort(([a], [b]) => rank(a) - rank(b))
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${k}: ${valueText(v)}`)
    .join('; ');
}

/**
 * A break's detail as readable lines instead of JSON: each failing check on its own line
 * ("check 1: check: ...; expected: ...; actual: ..."), then the other fields as "name: value".
 * Numbers read through the lossless parser print their exact text.
 */
export function detailText(detail: unknown): string {
  if (detail === null || detail === undefined) return '';
  if (typeof detail === 'string') return detail;
  if (typeof detail !== 'object' || isLossless(detail) || detail instanceof Date) return valueText(detail);
  if (Array.isArray(detail)) return detail.map((d) => valueText(d)).join('\n');
  const lines: string[] = [];
  for (const [k, v] of Object.entries(detail)) {
    if (v === null || v === undefined) continue;
    if (k === 'checks' && Array.isArray(v)) {
      v.forEach((c, i) => lines.push(`check ${i + 1}: ${valueText(c)}`));
      continue;
    }
    lines.push(`${k}: ${valueText(v)}`);
  }
  return lines.join('\n');
}
