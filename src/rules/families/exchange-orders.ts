/** The exchange order rules: an order against the sum of its fills and its own status (E_FILL_QTY, E_FILL_AVGPX,
 * E_ORDER_STATUS).
 */
import { decimalText } from '../../decimal/decimal.js';
import { defineRule, noMoney } from '../define.js';
import { checkFillAvgPx, checkFillQty } from '../fill-rules.js';
import { needs } from '../inputs.js';
import { checkOrderStatus, ORDER_STATUS_COULD_FAIL } from '../order-status-rules.js';

export const ORDERS_WITH_FILLS =
  'exchange orders with at least one fill in the period, or created in it with cumQty > 0';

export const E_FILL_QTY = defineRule({
  code: 'E_FILL_QTY',
  family: 'exchange',
  title: 'Fills do not add up to the order quantity',
  severity: 'high',
  description: "Sum of an order's fill quantities equals its cumQty (an order with cumQty > 0 and no fill: sum 0)",
  scope: ORDERS_WITH_FILLS,
  entity: 'exchangeOrder',
  subject: 'Sum of fill quantities',
  check: {
    exchangeOrder: (o, x) => ({ verdict: checkFillQty(o), currency: x.symbol?.baseCurrency ?? null }),
  },
  prefilter: {
    exchangeOrder: { couldFail: { compare: { field: 'fillQty' }, is: '<>', to: { orZero: { field: 'cumQty' } } } },
  },
});

/** An order with an average price and a filled quantity: the orders E_FILL_AVGPX judges. */
const WITH_AVG_PX = {
  all: [{ known: { field: 'avgPx' } }, { compare: { field: 'fillQty' }, is: '<>', to: { value: '0' } }],
} as const;

export const E_FILL_AVGPX = defineRule({
  code: 'E_FILL_AVGPX',
  family: 'exchange',
  title: 'Fill prices do not match the order average price',
  severity: 'medium',
  description: "Volume-weighted fill price equals the order's avgPx within half a price increment",
  scope: ORDERS_WITH_FILLS,
  entity: 'exchangeOrder',
  unit: 'price',
  subject: 'Fill average price',
  stake: noMoney("a price (the quantities are E_FILL_QTY's)"),
  requires: [needs.symbols],
  check: {
    exchangeOrder: (o, x) => ({
      verdict: checkFillAvgPx(o, x.symbol),
      currency: x.symbol?.counterCurrency ?? null,
    }),
  },
  prefilter: {
    // VWAP = notional / qty beyond half an increment of avgPx, compared without the division.
    exchangeOrder: {
      symbol: (s) => ({
        halfIncrement: s.priceIncrement && !s.priceIncrement.isZero() ? decimalText(s.priceIncrement.div(2)) : null,
      }),
      couldFail: {
        all: [
          ...WITH_AVG_PX.all,
          {
            distance: [{ field: 'fillNotional' }, { times: [{ field: 'avgPx' }, { field: 'fillQty' }] }],
            over: { times: [{ symbol: 'halfIncrement' }, { abs: { field: 'fillQty' } }] },
          },
        ],
      },
      counts: WITH_AVG_PX,
    },
  },
});

export const E_ORDER_STATUS = defineRule({
  code: 'E_ORDER_STATUS',
  family: 'exchange',
  title: 'Order status contradicts its quantities',
  severity: 'medium',
  description: 'A REJECTED order has no filled quantity and no fill; a FILLED order has no quantity left open',
  scope: ORDERS_WITH_FILLS,
  entity: 'exchangeOrder',
  check: {
    exchangeOrder: (o, x) => ({ verdict: checkOrderStatus(o), currency: x.symbol?.baseCurrency ?? null }),
  },
  prefilter: { exchangeOrder: { couldFail: ORDER_STATUS_COULD_FAIL } },
});
