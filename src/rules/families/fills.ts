/** The fill rules: a fill against its order, the fee schedule and its symbol's grid (E_FILL_ORPHAN, E_FEE_RATE,
 * E_SYMBOL_RULES, which also checks its orders' sizes).
 */
import { decimalText, type Decimal } from '../../decimal/decimal.js';
import type { Condition, FillField, Operand } from '../../domain/index.js';
import { defineRule } from '../define.js';
import {
  checkFeeRate,
  checkFillOrphan,
  checkFillSymbolRules,
  checkOrderSize,
  feeTolerance,
  ratesForDay,
  TAKER_ONLY_ORDER_TYPES,
} from '../fill-rules.js';
import { needs, type RuleInputs } from '../inputs.js';
import { orphanSentence } from '../sentences.js';
import { ORDERS_WITH_FILLS } from './exchange-orders.js';

export const FILLS = 'fills in the period';

const text = (d: Decimal | null) => (d === null ? null : decimalText(d));

export const E_FILL_ORPHAN = defineRule({
  code: 'E_FILL_ORPHAN',
  family: 'exchange',
  title: 'Fill without its order',
  severity: 'high',
  description: 'Fill whose exchange order cannot be found',
  scope: FILLS,
  entity: 'fill',
  unit: 'text',
  sentence: orphanSentence,
  stake: {
    basis: 'recorded',
    how:
      "the fill's notional (qty x price) in the symbol's counter currency: minus for a BUY (paid out), plus for a " +
      "SELL (received); no figure when the symbol's rules are unknown",
  },
  check: { fill: (f, x) => checkFillOrphan(f, x.symbol?.counterCurrency) },
  prefilter: { fill: { couldFail: { unknown: { field: 'order' } } } },
});

const feeConfig = (x: RuleInputs) => ({ feeCurrency: x.cfg.feeCurrency, tolerance: x.cfg.exchangeFeeTolerance });

/** |fee - basis x rate| beyond the symbol's tolerance. */
const feeOff = (basis: Operand<FillField>, rate: string): Condition<FillField> => ({
  distance: [{ field: 'fee' }, { times: [basis, { day: rate }] }],
  over: { symbol: 'tolerance' },
});

export const E_FEE_RATE = defineRule({
  code: 'E_FEE_RATE',
  family: 'exchange',
  title: 'Exchange fee off the fee schedule',
  severity: 'medium',
  description:
    'Fill fee equals notional x the rate of its day that applies, within tolerance (MARKET/STOP: taker only)',
  scope: FILLS,
  entity: 'fill',
  subject: 'Fill fee',
  requires: [needs.fees],
  check: { fill: (f, x) => checkFeeRate(f, x.rates!, x.symbol, feeConfig(x)) },
  prefilter: {
    fill: {
      symbol: (s, x) => ({ tolerance: decimalText(feeTolerance(s, feeConfig(x))) }),
      day: (day, x) => {
        const r = ratesForDay(x.ref.fees!, day)!;
        return { maker: decimalText(r.makerRate), taker: decimalText(r.takerRate) };
      },
      // Off the taker rate, and off the maker rate too unless the order's type takes liquidity.
      couldFail: (x) => {
        const basis: Operand<FillField> =
          x.cfg.feeCurrency === 'counter' ? { times: [{ field: 'qty' }, { field: 'price' }] } : { field: 'qty' };
        return {
          all: [
            feeOff(basis, 'taker'),
            { any: [{ oneOf: { field: 'order.ordType' }, values: TAKER_ONLY_ORDER_TYPES }, feeOff(basis, 'maker')] },
          ],
        };
      },
    },
  },
});

export const E_SYMBOL_RULES = defineRule({
  code: 'E_SYMBOL_RULES',
  family: 'exchange',
  title: 'Price or quantity off the symbol rules',
  severity: 'low',
  description: "Fill price/quantity on the symbol's increments; order quantity within the symbol's size limits",
  scope: `${FILLS}; ${ORDERS_WITH_FILLS}`,
  entity: 'fill',
  requires: [needs.symbols],
  check: {
    exchangeOrder: (o, x) => ({ verdict: checkOrderSize(o, x.symbol), currency: x.symbol?.baseCurrency ?? null }),
    fill: (f, x) => ({ verdict: checkFillSymbolRules(f, x.symbol), currency: x.symbol?.counterCurrency ?? null }),
  },
  prefilter: {
    exchangeOrder: {
      symbol: (s) => ({ min: text(s.minOrderSize), max: text(s.maxOrderSize) }),
      couldFail: {
        any: [
          { unlisted: true },
          {
            all: [
              { known: { symbol: 'min' } },
              { compare: { field: 'size' }, is: '<', to: { symbol: 'min' }, margin: true },
            ],
          },
          {
            all: [
              { known: { symbol: 'max' } },
              { compare: { symbol: 'max' }, is: '<>', to: { value: '0' } },
              { compare: { field: 'size' }, is: '>', to: { symbol: 'max' }, margin: true },
            ],
          },
        ],
      },
    },
    fill: {
      symbol: (s) => ({ increment: text(s.priceIncrement), lot: text(s.lotSize) }),
      // A market fill's price 0 is not on any grid and is not checked.
      couldFail: {
        any: [
          { unlisted: true },
          {
            all: [
              { known: { symbol: 'increment' } },
              { compare: { field: 'price' }, is: '<>', to: { value: '0' } },
              { offStep: { field: 'price' }, step: { symbol: 'increment' } },
            ],
          },
          { all: [{ known: { symbol: 'lot' } }, { offStep: { field: 'qty' }, step: { symbol: 'lot' } }] },
        ],
      },
    },
  },
});
