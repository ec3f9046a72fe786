/** E_FILL_ORDER_MISMATCH: a fill whose side or symbol differs from its order's. The balances move by the fill, the
 * order sheet and the order rules read the order: one of the two is booked wrong.
 */
import type { Fill } from '../../domain/index.js';
import { defineRule, noMoney } from '../define.js';
import type { Verdict } from '../types.js';
import type { Failure } from '../types.js';
import { FILLS } from './fills.js';

export const E_FILL_ORDER_MISMATCH = defineRule({
  code: 'E_FILL_ORDER_MISMATCH',
  family: 'exchange',
  title: 'Fill differs from its order',
  severity: 'high',
  description: "A fill's side and symbol equal its order's",
  scope: FILLS,
  entity: 'fill',
  unit: 'text',
  stake: noMoney('a side or a symbol, not an amount (the fill moves the balances as it is)'),
  check: { fill: checkFillAgainstOrder },
  prefilter: {
    fill: {
      // An orphan is kept too: the check does not judge it (E_FILL_ORPHAN does), so it is never counted as passed.
      couldFail: {
        any: [
          { unknown: { field: 'order' } },
          {
            all: [
              { known: { field: 'order.side' } },
              { compare: { field: 'side' }, is: '<>', to: { field: 'order.side' } },
            ],
          },
          {
            all: [
              { known: { field: 'order.symbol' } },
              { compare: { field: 'symbol' }, is: '<>', to: { field: 'order.symbol' } },
            ],
          },
        ],
      },
    },
  },
});

export function checkFillAgainstOrder(f: Fill): Verdict {
  if (!f.orderFound) return 'n/a';
  const failures: Failure[] = [];
  if (f.orderSide !== null && f.side !== f.orderSide)
    failures.push({
      check: `fill ${f.side} on a ${f.orderSide} order`,
      expected: f.orderSide,
      actual: f.side,
      difference: null,
    });
  if (f.orderSymbol !== null && f.symbol !== f.orderSymbol)
    failures.push({
      check: `fill of ${f.symbol} on a ${f.orderSymbol} order`,
      expected: f.orderSymbol,
      actual: f.symbol,
      difference: null,
    });
  return failures;
}
