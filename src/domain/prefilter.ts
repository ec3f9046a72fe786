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
 * What SQL needs to pre-select the exchange orders that could fail E_FILL_QTY, E_FILL_AVGPX or
 * the order-size part of E_SYMBOL_RULES (conservative, like FillPrefilter). Symbols without a
 * price increment are not listed: their orders are loaded (E_FILL_AVGPX counts them skipped).
 */
export interface OrderPrefilter {
  symbols: { symbol: string; halfIncrement: string; minOrderSize: string | null; maxOrderSize: string | null }[];
}
