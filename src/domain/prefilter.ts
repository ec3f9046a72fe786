/** The rules' SQL pre-filters as data: each rule with one says, in the terms below, when a record could fail it; the
 * store turns the description into SQL (store/recon/prefilter-sql.ts), so no rule's condition is written twice.
 *
 * A description is conservative: it may keep records the rule passes, never leave out one it flags or skips. Any
 * unknown (NULL) input keeps the record.
 */

/** A fill's own fields, and its order's (`order`: the order's id, null when it is not stored). */
export type FillField =
  | 'price'
  | 'qty'
  | 'fee'
  | 'timestamp'
  | 'side'
  | 'symbol'
  | 'order'
  | 'order.ordType'
  | 'order.side'
  | 'order.symbol'
  | 'order.timestamp';

/** A stored exchange order's fields and the sums of all its stored fills; `size` is cumQty + leavesQty (NULL as 0). */
export type OrderField =
  'ordStatus' | 'cumQty' | 'leavesQty' | 'avgPx' | 'size' | 'fillCount' | 'fillQty' | 'fillNotional';

/**
 * A value SQL reads: a field of the record, a reference value of its symbol or of its UTC day (named by the rule,
 * supplied with the prefilter), a decimal constant, or arithmetic on those.
 */
export type Operand<F extends string> =
  | { field: F }
  | { symbol: string }
  | { day: string }
  | { value: string }
  | { times: readonly [Operand<F>, Operand<F>] }
  | { abs: Operand<F> }
  | { orZero: Operand<F> };

/**
 * When a record could fail a rule:
 * - `compare`: `margin` widens `<` and `>` by |left| x 1e-50 on the keeping side, far more than the error of the rules'
 *   60-digit Decimal arithmetic, so a record the rules could flag is never left out;
 * - `distance`: |a - b| > over, with the same margin on (|a| + |b|);
 * - `offStep`: a non-zero step of which the value is not a whole multiple;
 * - `oneOf`: the value is one of the texts (NULL is in none);
 * - `unlisted`: the record's symbol has no reference values (not in the latest symbols snapshot).
 */
export type Condition<F extends string> =
  | { compare: Operand<F>; is: '<' | '<=' | '>' | '>=' | '=' | '<>'; to: Operand<F>; margin?: true }
  | { distance: readonly [Operand<F>, Operand<F>]; over: Operand<F> }
  | { offStep: Operand<F>; step: Operand<F> }
  | { known: Operand<F> }
  | { unknown: Operand<F> }
  | { oneOf: Operand<F>; values: readonly string[] }
  | { unlisted: true }
  | { always: true }
  | { all: readonly Condition<F>[] }
  | { any: readonly Condition<F>[] };

/** Reference values of one symbol or one UTC day (`YYYY-MM-DD`), by the names the conditions use; decimal text. */
export interface RefRow {
  key: string;
  values: Readonly<Record<string, string | null>>;
}

/**
 * The fills that could fail a per-fill rule: those meeting any of `couldFail` (one per rule checked). The fills it
 * leaves out are judged and passed by every one of those rules (engine addPassedFills counts them).
 */
export interface FillPrefilter {
  couldFail: readonly Condition<FillField>[];
  /** The latest snapshot's symbols; a symbol not listed reads NULL (and `unlisted`). */
  symbols: readonly RefRow[];
  /** Each UTC day of the judged fills. */
  days: readonly RefRow[];
}

/**
 * The stored exchange orders in the order rules' scope that could fail one: those meeting any of `couldFail`. Each
 * rule says which of the orders left out it counts as judged and passed (`when`; null: all of them).
 */
export interface OrderPrefilter {
  couldFail: readonly Condition<OrderField>[];
  counted: readonly { code: string; when: Condition<OrderField> | null }[];
  symbols: readonly RefRow[];
}
