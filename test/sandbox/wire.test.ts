import { it, expect } from 'vitest';
import { exponentText } from '../../sandbox/wire.js';
import { Decimal } from '../../src/decimal/decimal.js';
it('exp', () => {
  for (const t of ['0.00054044', '0.0009', '0.000000001', '0.00012300', '-0.0005']) {
    const e = exponentText(t);
    expect(new Decimal(e).eq(t), `${t} ${e}`).toBe(true);
  }
  expect(exponentText('0.00054044')).toBe('5.4044E-4');
  expect(exponentText('0.0009')).toBe('9.0E-4');
});
