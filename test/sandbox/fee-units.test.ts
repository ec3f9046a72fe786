import { expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import { SYMBOLS, MAKER_RATE, TAKER_RATE } from '../../sandbox/catalog.js';
import { feeUnits } from '../../sandbox/generate/exchange.js';
import { parseFx } from '../../sandbox/fixed.js';
import { createRng } from '../../sandbox/prng.js';

it('integer fee arithmetic equals Decimal half-up rounding of qty x price x rate', () => {
  const rng = createRng(1, 'fee-test');
  for (const def of SYMBOLS) {
    for (const rate of [MAKER_RATE, TAKER_RATE]) {
      for (let i = 0; i < 2000; i++) {
        const lots = rng.int(1, i % 2 ? 1e9 : 1e4);
        const ticks = rng.int(1, i % 3 ? 1e6 : 100);
        const qty = new Decimal(lots * def.lot[0]).times(new Decimal(10).pow(-def.lot[1]));
        const price = new Decimal(ticks * def.priceInc[0]).times(new Decimal(10).pow(-def.priceInc[1]));
        const expected = qty.times(price).times(rate).toDecimalPlaces(def.counterScale, Decimal.ROUND_HALF_UP);
        const got = new Decimal(feeUnits(def, lots, ticks, parseFx(rate))).times(
          new Decimal(10).pow(-def.counterScale),
        );
        expect(got.toString(), `${def.symbol} ${lots} ${ticks} ${rate}`).toBe(expected.toString());
      }
    }
  }
});
