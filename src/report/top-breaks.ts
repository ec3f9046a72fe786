/** The one order of the open breaks the Summary's "largest five" and the e-mail's breaks to look at first both name. */
import type { Decimal } from '../decimal/decimal.js';
import { SEVERITY_RANK, type ReportedBreak } from '../domain/index.js';
import { breakValuation, type UsdRates, type Valuation } from './usd-rates.js';

/** An open break with its USD valuation (as the Breaks sheet and the money at stake value it). */
export interface ValuedBreak<B extends ReportedBreak = ReportedBreak> {
  b: B;
  v: Valuation;
  /** The absolute USD impact; null without one (no money, no USD figure). */
  size: Decimal | null;
}

export function valueBreaks<B extends ReportedBreak>(breaks: readonly B[], rates: UsdRates): Array<ValuedBreak<B>> {
  return breaks.map((b) => {
    const v = breakValuation(b, rates);
    return { b, v, size: v.kind === 'usd' ? v.usd.abs() : null };
  });
}

/** The oldest first (first seen earliest), then by severity, code and key: a total order, the same on every run. */
export function byAge(x: ReportedBreak, y: ReportedBreak): number {
  return (
    x.firstSeenAt.getTime() - y.firstSeenAt.getTime() ||
    (SEVERITY_RANK[x.severity] ?? 9) - (SEVERITY_RANK[y.severity] ?? 9) ||
    x.code.localeCompare(y.code) ||
    x.key.localeCompare(y.key)
  );
}

/**
 * The open breaks with a USD impact above zero, the largest absolute impact first, explained or not; ties by byAge.
 * The Summary lists the first five; the e-mail's list starts with the same five in the same order.
 */
export function rankByUsdImpact<B extends ReportedBreak>(valued: ReadonlyArray<ValuedBreak<B>>): Array<ValuedBreak<B>> {
  return valued.filter((x) => x.size?.gt(0)).sort((x, y) => y.size!.comparedTo(x.size!) || byAge(x.b, y.b));
}
