/** The USD impact of a prior-period adjustment (docs/closing.md "Late data against a closed period"): what a change to a
 * signed record moves in money, valued at the rates breaks are valued at.
 */
import { Decimal, ZERO } from '../decimal/decimal.js';
import { parseJsonLossless } from '../decimal/json.js';
import { flatten, type EvidenceStream, type RecordChange } from '../domain/evidence.js';
import type { UsdRates } from './usd-rates.js';

/**
 * A record's money: the product of its factor fields (a fill's qty x price, an order's cum_qty x avg_px, an amount),
 * in the currency its currency field names (a symbol's counter currency). The other fields move no money.
 */
interface MoneyOf {
  factors: readonly string[];
  currencyField: string;
  currency: (value: string | null) => string | null;
}

const itself = (v: string | null) => v;
const counterOf = (symbol: string | null) => symbol?.split('-')[1] ?? null;

export const RECORD_MONEY: Readonly<Record<EvidenceStream, MoneyOf>> = {
  partnerOrder: { factors: ['input_amount'], currencyField: 'input_currency', currency: itself },
  exchangeOrder: { factors: ['cum_qty', 'avg_px'], currencyField: 'symbol', currency: counterOf },
  fill: { factors: ['qty', 'price'], currencyField: 'symbol', currency: counterOf },
  deposit: { factors: ['amount'], currencyField: 'currency', currency: itself },
  withdrawal: { factors: ['amount'], currencyField: 'currency', currency: itself },
};

type Fields = ReadonlyMap<string, string | null>;

/** A record's money in USD (exact); null when its currency has no rate. An absent record or amount is 0. */
function usdOf(stream: EvidenceStream, fields: Fields | null, rates: UsdRates): Decimal | null {
  if (!fields) return ZERO;
  const money = RECORD_MONEY[stream];
  const rate = rates.rateOf(money.currency(fields.get(money.currencyField) ?? null));
  if (!rate) return null;
  return money.factors.reduce((p, f) => p.times(new Decimal(fields.get(f) ?? 0)), new Decimal(1)).times(rate.rate);
}

/**
 * Each change with its USD impact, after - before. A record added or gone (field `*`) moves its whole money. Within a
 * record, the money fields take their share in turn (qty at the old price, then the price at the new qty), so a
 * record's impacts add up to its money after minus before, never twice; a field that moves no money (a state, a
 * raw payload member: its column carries the figure) has none (null), nor has one whose currency has no rate.
 */
export function withUsdImpact<C extends RecordChange>(
  stream: EvidenceStream,
  before: string | null,
  after: string | null,
  changes: readonly C[],
  rates: UsdRates,
): Array<C & { usdImpact: Decimal | null }> {
  const was = before === null ? null : flatten(parseJsonLossless(before));
  const now = after === null ? null : flatten(parseJsonLossless(after));
  const impacts = new Map<string, Decimal | null>();
  if (!was || !now) impacts.set('*', difference(usdOf(stream, now, rates), usdOf(stream, was, rates)));
  else {
    const money = RECORD_MONEY[stream];
    const step = new Map(was);
    let previous = usdOf(stream, step, rates);
    for (const field of [...money.factors, money.currencyField]) {
      if (was.get(field) === now.get(field)) continue;
      step.set(field, now.get(field) ?? null);
      const next = usdOf(stream, step, rates);
      impacts.set(field, difference(next, previous));
      previous = next;
    }
  }
  return changes.map((c) => ({ ...c, usdImpact: impacts.get(c.field) ?? null }));
}

const difference = (a: Decimal | null, b: Decimal | null) => (a === null || b === null ? null : a.minus(b));
