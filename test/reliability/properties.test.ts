import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal, ZERO, toDecimal } from '../../src/decimal/decimal.js';
import { parseJsonLossless, stringifyJsonLossless } from '../../src/decimal/json.js';
import { readDecimal } from '../../src/sources/common/wire-decimal.js';
import { parseJsonMarked, stringifyMarked } from '../../src/sources/exchange/wire.js';
import { rollForward, type DayFlows } from '../../src/rules/balance-roll.js';
import type { BalanceSnapshot } from '../../src/domain/index.js';

/**
 * Property tests (fast-check, fixed seed so a failure replays): the decimal decoder never loses a
 * digit of any JSON decimal text, and the roll-forward's expected closing is exactly opening plus
 * the flows, for random flows of random precision.
 */
const SEED = Number(process.env.RELIABILITY_SEED ?? 17);
const RUNS = 2000;

const digits = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789'.split('')), minLength: min, maxLength: max });

/** JSON number text: sign, integer part without leading zeros, optional fraction (up to 40 digits), optional exponent. */
const jsonDecimalText = fc
  .record({
    neg: fc.boolean(),
    int: fc.oneof(
      fc.constant('0'),
      fc.tuple(fc.constantFrom(...'123456789'.split('')), digits(0, 30)).map(([a, b]) => a + b),
    ),
    frac: fc.option(digits(1, 40), { nil: undefined }),
    exp: fc.option(
      fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.integer({ min: 0, max: 400 })),
      { nil: undefined },
    ),
  })
  .map(
    ({ neg, int, frac, exp }) =>
      `${neg ? '-' : ''}${int}${frac !== undefined ? `.${frac}` : ''}${exp ? `${exp[0]}${exp[1]}${exp[2]}` : ''}`,
  );

/** The exact rational value of decimal text, as a canonical (digits, scale) pair compared as strings. */
function exact(text: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) throw new Error(`not decimal text: ${text}`);
  const sign = m[1] ?? '';
  let mantissa = (m[2] ?? '') + (m[3] ?? '');
  let scale = (m[3] ?? '').length - Number(m[4] ?? 0);
  mantissa = mantissa.replace(/^0+/, '');
  if (mantissa === '') return '0';
  while (mantissa.endsWith('0')) {
    mantissa = mantissa.slice(0, -1);
    scale -= 1;
  }
  return `${sign}${mantissa}e${-scale}`;
}

describe('decimal decoder (property)', () => {
  it('lossless JSON: any decimal text round-trips exactly, and decodes to exactly its value', () => {
    fc.assert(
      fc.property(jsonDecimalText, (text) => {
        const body = `{"amount":${text},"list":[${text}]}`;
        const parsed = parseJsonLossless(body) as { amount: unknown; list: unknown[] };
        expect(stringifyJsonLossless(parsed)).toBe(body);
        const d = toDecimal(parsed.amount);
        expect(exact(d.toString())).toBe(exact(text));
        expect(toDecimal(parsed.list[0]).eq(d)).toBe(true);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it("the exchange's marked parser keeps every digit too, and readDecimal's canonical text has the same value", () => {
    fc.assert(
      fc.property(jsonDecimalText, fc.boolean(), (text, asString) => {
        const body = asString ? `{"qty":"${text}"}` : `{"qty":${text}}`;
        const parsed = parseJsonMarked(body) as { qty: unknown };
        expect(stringifyMarked(parsed)).toBe(body);
        const canonical = readDecimal(parsed.qty);
        expect(canonical).not.toBeNull();
        expect(exact(canonical!)).toBe(exact(text));
        // Plain notation only: what Postgres numeric is given.
        expect(canonical).toMatch(/^-?\d+(\.\d+)?$/);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('a decimal printed and read back is the same decimal (toString is lossless)', () => {
    fc.assert(
      fc.property(jsonDecimalText, (text) => {
        const d = new Decimal(text);
        expect(new Decimal(d.toString()).eq(d)).toBe(true);
        expect(exact(d.toString())).toBe(exact(text));
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

/** Amounts with up to 18 decimals and 12 integer digits: what balances and flows carry. */
const amount = fc
  .tuple(fc.bigInt({ min: 0n, max: 10n ** 30n - 1n }), fc.integer({ min: 0, max: 18 }))
  .map(([units, scale]) => new Decimal(units.toString()).div(new Decimal(10).pow(scale)));

const currency = fc.constantFrom('BTC', 'ETH', 'USDT', 'EUR');
const DAYS = ['2026-03-01', '2026-03-02', '2026-03-03'];
const flow: fc.Arbitrary<DayFlows> = fc.record({
  currency,
  day: fc.constantFrom(...DAYS),
  deposits: amount,
  withdrawals: amount,
  bought: amount,
  sold: amount,
  fees: amount,
});

describe('roll-forward (property)', () => {
  it('opening + deposits - withdrawals + bought - sold - fees = expected closing, exactly, for random flows', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(currency, amount), { maxLength: 4 }),
        fc.array(flow, { maxLength: 25 }),
        (openings, flows) => {
          const open = new Map<string, Decimal>(openings);
          const s1: BalanceSnapshot = {
            id: 's1',
            fetchedAt: new Date(`${DAYS[0]}T00:00:00Z`),
            balances: [...open].map(([c, b]) => line(c, b)),
          };
          // A closing snapshot that holds exactly the true result: the residual must be 0 everywhere.
          const truth = new Map<string, Decimal>();
          for (const [c, b] of open) truth.set(c, b);
          for (const f of flows)
            truth.set(
              f.currency,
              (truth.get(f.currency) ?? ZERO)
                .plus(f.deposits)
                .minus(f.withdrawals)
                .plus(f.bought)
                .minus(f.sold)
                .minus(f.fees),
            );
          const s2: BalanceSnapshot = {
            id: 's2',
            fetchedAt: new Date(`${DAYS[2]}T23:00:00Z`),
            balances: [...truth].map(([c, b]) => line(c, b)),
          };
          const figures = rollForward(s1, s2, flows, ZERO);
          expect(figures.map((f) => f.currency)).toEqual(
            [...new Set([...open.keys(), ...flows.map((f) => f.currency)])].sort(),
          );
          for (const f of figures) {
            const mine = flows.filter((x) => x.currency === f.currency);
            const sum = (k: 'deposits' | 'withdrawals' | 'bought' | 'sold' | 'fees') =>
              mine.reduce((a, x) => a.plus(x[k]), ZERO);
            const opening = open.get(f.currency) ?? ZERO;
            expect(f.opening.eq(opening)).toBe(true);
            expect(
              f.expectedClosing.eq(
                opening
                  .plus(sum('deposits'))
                  .minus(sum('withdrawals'))
                  .plus(sum('bought'))
                  .minus(sum('sold'))
                  .minus(sum('fees')),
              ),
            ).toBe(true);
            expect(f.residual.isZero(), `${f.currency} residual ${f.residual.toString()}`).toBe(true);
            expect(f.firstDivergentDay).toBeNull();
            // Derived backwards from the closing, the day before the first is the opening again.
            const firstNet = new Decimal(f.days[0]!.net);
            expect(new Decimal(f.days[0]!.derivedClosing).minus(firstNet).eq(opening)).toBe(true);
          }
        },
      ),
      { seed: SEED, numRuns: 500 },
    );
  });

  it('a closing off by any amount shows exactly that amount as the residual', () => {
    fc.assert(
      fc.property(
        amount,
        fc.array(flow, { maxLength: 10 }),
        amount.filter((d) => !d.isZero()),
        fc.boolean(),
        (opening, flows, off, up) => {
          const btc = flows.map((f) => ({ ...f, currency: 'BTC' }));
          let closing = opening;
          for (const f of btc)
            closing = closing.plus(f.deposits).minus(f.withdrawals).plus(f.bought).minus(f.sold).minus(f.fees);
          const delta = up ? off : off.neg();
          const s1: BalanceSnapshot = {
            id: 'a',
            fetchedAt: new Date(`${DAYS[0]}T00:00:00Z`),
            balances: [line('BTC', opening)],
          };
          const s2: BalanceSnapshot = {
            id: 'b',
            fetchedAt: new Date(`${DAYS[2]}T23:00:00Z`),
            balances: [line('BTC', closing.plus(delta))],
          };
          const [f] = rollForward(s1, s2, btc, ZERO);
          expect(f!.residual.eq(delta)).toBe(true);
          expect(f!.firstDivergentDay).not.toBeNull();
        },
      ),
      { seed: SEED, numRuns: 500 },
    );
  });
});

function line(currency: string, balance: Decimal): BalanceSnapshot['balances'][number] {
  return {
    currency,
    balance,
    available: balance,
    rate: new Decimal(1),
    balanceLocal: balance,
  } as BalanceSnapshot['balances'][number];
}
