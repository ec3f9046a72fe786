/** What SQL needs to pre-select the fills and exchange orders a rule could fail: data built by the rule engine, read by the store. */

/**
 * What SQL needs to pre-select the fills that could fail a per-fill rule (E_FILL_ORPHAN,
 * E_FEE_RATE, the fill part of E_SYMBOL_RULES), built from the very reference data and config
 * the pure rules use. The filter is conservative: it may pass extra fills to the rules, never
 * drop one they would flag; the fills it leaves out passed all three rules (addPassedFills).
 */
export interface FillPrefilter {
  /** Symbols of the latest snapshot; a fill whose symbol is not listed is always loaded. */
  symbols: { symbol: string; priceIncrement: string | null; lotSize: string | null; feeTolerance: string }[];
  /** E_FEE_RATE rates of each UTC day of the span (`YYYY-MM-DD`); null: the rule is not checked. */
  rates: { day: string; makerRate: string; takerRate: string }[] | null;
  /** feeCurrency counter: expected fee = qty x price x rate; base: qty x rate. */
  feeBasis: 'notional' | 'qty';
  /** Order types whose fills E_FEE_RATE judges on the taker rate alone (fill-rules TAKER_ONLY_ORDER_TYPES). */
  takerOnlyTypes: readonly string[];
}

/**
 * An order a status rule could flag: its ordStatus is one of `statuses` and each quantity of
 * `nonZero` is not zero (fillQty: the sum of its stored fills). The rules say these as data, so a
 * new rule over an order's status and quantities needs no new SQL.
 */
export interface OrderSuspect {
  statuses: readonly string[];
  nonZero: readonly ('cumQty' | 'leavesQty' | 'fillQty')[];
}

/**
 * What SQL needs to pre-select the exchange orders that could fail an order rule: E_FILL_QTY,
 * E_FILL_AVGPX, the order-size part of E_SYMBOL_RULES, and whatever the `suspects` describe
 * (conservative, like FillPrefilter). Symbols without a price increment are not listed: their
 * orders are loaded (E_FILL_AVGPX counts them skipped).
 */
export interface OrderPrefilter {
  symbols: { symbol: string; halfIncrement: string; minOrderSize: string | null; maxOrderSize: string | null }[];
  suspects: readonly OrderSuspect[];
}
