/** Exchange order status rule: an order whose reported status its own quantities contradict (E_ORDER_STATUS). */
import { ZERO } from '../decimal/decimal.js';
import type { Condition, ExchangeOrderAgg, OrderField } from '../domain/index.js';
import type { Verdict } from './types.js';
import type { Failure } from './types.js';

/** An order in `status` whose quantity `nonZero` is not zero (NULL as 0). */
const suspect = (status: string, nonZero: OrderField): Condition<OrderField> => ({
  all: [
    { oneOf: { field: 'ordStatus' }, values: [status] },
    { compare: { orZero: { field: nonZero } }, is: '<>', to: { value: '0' } },
  ],
});

/**
 * The orders this rule could flag, for the SQL prefilter (docs/rules.md E_ORDER_STATUS): a REJECTED
 * order with a filled quantity or a stored fill, a FILLED order with a quantity still open.
 */
export const ORDER_STATUS_COULD_FAIL: Condition<OrderField> = {
  any: [suspect('REJECTED', 'cumQty'), suspect('REJECTED', 'fillQty'), suspect('FILLED', 'leavesQty')],
};

/**
 * The API contract's leavesQty: "REJECTED: equals orderQty; other states [FILLED, PENDING]: zero",
 * so a rejected order never executed and a filled one has nothing left open. CANCELED and EXPIRED
 * orders may have been filled in part before they ended: nothing to contradict.
 */
export function checkOrderStatus(o: ExchangeOrderAgg): Verdict {
  if (!o.found || o.ordStatus === null) return 'n/a';
  const facts = { state: o.ordStatus };
  const failures: Failure[] = [];
  if (o.ordStatus === 'REJECTED') {
    const cum = o.cumQty ?? ZERO;
    if (!cum.isZero())
      failures.push({
        check: 'REJECTED with a filled quantity (cumQty)',
        expected: ZERO,
        actual: cum,
        difference: cum,
        facts,
      });
    if (o.fillCount > 0)
      failures.push({
        check: `REJECTED with ${o.fillCount} stored ${o.fillCount === 1 ? 'fill' : 'fills'}`,
        expected: ZERO,
        actual: o.fillQty,
        difference: o.fillQty,
        facts,
      });
  }
  const leaves = o.leavesQty ?? ZERO;
  if (o.ordStatus === 'FILLED' && !leaves.isZero())
    failures.push({
      check: 'FILLED with a quantity still open (leavesQty)',
      expected: ZERO,
      actual: leaves,
      difference: leaves,
      facts,
    });
  return failures;
}
