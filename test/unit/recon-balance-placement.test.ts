import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal, ZERO } from '../../src/decimal/decimal.js';
import type { BalanceSnapshot } from '../../src/domain/index.js';
import { pairOf, paymentMoves, placePayments, type PaymentHistory } from '../../src/rules/balance-placement.js';
import { rollForward, type DayFlows } from '../../src/rules/balance-roll.js';

/**
 * The roll-forward against an exchange simulated by its own semantics (docs/apis.md "Balance flows"):
 * a fill moves the balance at its time, a deposit is credited when it turns COMPLETED, a withdrawal
 * debited while in a debit state and credited back when it leaves them. Each sync takes its balance
 * snapshot first and then reads every record's state, stamping the observation with the sync's
 * start, just before the snapshot (src/sources/exchange/source.ts). Whatever the flows and the state changes
 * between whatever snapshots, closing minus opening equals the placed flows exactly.
 */
const DEBIT_STATES = ['PENDING', 'COMPLETED'];
const CURRENCIES = ['BTC', 'USD', 'EUR'];
const T0 = Date.parse('2026-11-01T00:00:00Z');

const amount = fc
  .integer({ min: 1, max: 10 ** 12 })
  .chain((n) => fc.integer({ min: 0, max: 18 }).map((s) => new Decimal(n).div(new Decimal(10).pow(s))));

interface Payment {
  kind: 'deposit' | 'withdrawal';
  currency: string;
  amount: Decimal;
  created: number;
  /** states after creation with their change times (ms after created) */
  path: Array<{ state: string; after: number }>;
}

const depositPaths = fc.constantFrom<string[]>(
  ['COMPLETED'],
  ['REJECTED'],
  ['UNCONFIRMED'],
  ['UNCONFIRMED', 'COMPLETED'],
  ['UNCONFIRMED', 'REJECTED'],
);
const withdrawalPaths = fc.constantFrom<string[]>(
  ['PENDING'],
  ['PENDING', 'COMPLETED'],
  ['PENDING', 'REFUNDED'],
  ['PENDING', 'FAILED'],
  ['PENDING', 'REJECTED'],
  ['REJECTED'],
  ['COMPLETED'],
);
const span = 12 * 86_400_000;
const payment = fc
  .record({
    kind: fc.constantFrom<'deposit' | 'withdrawal'>('deposit', 'withdrawal'),
    currency: fc.constantFrom(...CURRENCIES),
    amount,
    created: fc.integer({ min: 0, max: span }),
    delays: fc.array(fc.integer({ min: 1, max: 4 * 86_400_000 }), { minLength: 2, maxLength: 2 }),
    dp: depositPaths,
    wp: withdrawalPaths,
  })
  .map((r): Payment => {
    const states = r.kind === 'deposit' ? r.dp : r.wp;
    let at = 0;
    return {
      kind: r.kind,
      currency: r.currency,
      amount: r.amount,
      created: T0 + r.created,
      path: states.map((state, i) => ({ state, after: i === 0 ? 0 : (at += r.delays[i - 1]!) })),
    };
  });
const fill = fc.record({
  currency: fc.constantFrom(...CURRENCIES),
  delta: amount,
  sell: fc.boolean(),
  at: fc.integer({ min: 0, max: span }),
});
const snapshotTimes = fc
  .uniqueArray(fc.integer({ min: 0, max: span }), { minLength: 2, maxLength: 7 })
  .map((xs) => xs.sort((a, b) => a - b))
  // a sync starts (and stamps its observations) 1 ms before its snapshot: keep them 2 ms apart
  .filter((xs) => xs.every((x, i) => i === 0 || x - xs[i - 1]! >= 2))
  .map((xs) => xs.map((x) => T0 + x));

function stateAt(p: Payment, t: number): string | null {
  if (t < p.created) return null;
  let s: string | null = null;
  for (const step of p.path) if (p.created + step.after <= t) s = step.state;
  return s;
}

function effect(p: Payment, state: string | null): Decimal {
  if (state === null) return ZERO;
  if (p.kind === 'deposit') return state === 'COMPLETED' ? p.amount : ZERO;
  return DEBIT_STATES.includes(state) ? p.amount.negated() : ZERO;
}

describe('roll-forward placement (property)', () => {
  it('for random flows and state changes between random snapshots, closing - opening = placed flows, exactly', () => {
    fc.assert(
      fc.property(
        snapshotTimes,
        fc.array(payment, { maxLength: 25 }),
        fc.array(fill, { maxLength: 25 }),
        fc.dictionary(fc.constantFrom(...CURRENCIES), amount),
        (times, payments, fills, opening) => {
          // The exchange: each snapshot's balances from its own semantics.
          const snapshots: BalanceSnapshot[] = times.map((t, k) => {
            const bal = new Map(CURRENCIES.map((c) => [c, new Decimal(opening[c] ?? 0)]));
            for (const f of fills)
              if (T0 + f.at <= t) bal.set(f.currency, bal.get(f.currency)!.plus(f.sell ? f.delta.negated() : f.delta));
            for (const p of payments) bal.set(p.currency, bal.get(p.currency)!.plus(effect(p, stateAt(p, t))));
            return {
              id: String(k + 1),
              fetchedAt: new Date(t),
              balances: [...bal].map(([currency, balance]) => ({
                currency,
                balance,
                available: balance,
                balanceLocal: ZERO,
                rate: ZERO,
              })),
            };
          });
          // What the syncs stored: each state's first observation, stamped at the sync's start.
          const histories: PaymentHistory[] = payments.map((p, i) => {
            const states: Array<{ state: string; observedAt: Date }> = [];
            for (const t of times) {
              const s = stateAt(p, t);
              if (s !== null && !states.some((x) => x.state === s))
                states.push({ state: s, observedAt: new Date(t - 1) });
            }
            return {
              kind: p.kind,
              id: String(i),
              currency: p.currency,
              amount: p.amount,
              timestamp: new Date(p.created),
              current: states[states.length - 1]?.state ?? null,
              states,
            };
          });
          const bounds = times.map((t) => new Date(t));
          const placed = placePayments(bounds, histories, DEBIT_STATES);
          for (let k = 0; k + 1 < times.length; k++) {
            const fillFlows: DayFlows[] = fills
              .filter((f) => T0 + f.at > times[k]! && T0 + f.at <= times[k + 1]!)
              .map((f) => ({
                currency: f.currency,
                day: new Date(T0 + f.at).toISOString().slice(0, 10),
                deposits: ZERO,
                withdrawals: ZERO,
                bought: f.sell ? ZERO : f.delta,
                sold: f.sell ? f.delta : ZERO,
                fees: ZERO,
              }));
            const figures = rollForward(snapshots[k]!, snapshots[k + 1]!, [...fillFlows, ...placed[k]!], ZERO);
            for (const f of figures)
              expect(f.residual.isZero(), `${f.currency} pair ${k}: residual ${f.residual.toString()}`).toBe(true);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the moves of a payment add up to its current state effect, whatever the order of its observations', () => {
    fc.assert(
      fc.property(payment, fc.array(fc.integer({ min: 0, max: 10 }), { minLength: 3, maxLength: 3 }), (p, gaps) => {
        let t = p.created;
        const states = p.path.map((s, i) => ({ state: s.state, observedAt: new Date((t += gaps[i]!)) }));
        const history: PaymentHistory = {
          kind: p.kind,
          id: 'x',
          currency: p.currency,
          amount: p.amount,
          timestamp: new Date(p.created),
          current: p.path[p.path.length - 1]!.state,
          states: [...states].reverse(),
        };
        const total = paymentMoves(history, DEBIT_STATES).reduce((a, m) => a.plus(m.delta), ZERO);
        expect(total.eq(effect(p, history.current))).toBe(true);
      }),
    );
  });
});

describe('roll-forward placement (cases)', () => {
  const at = (h: number) => new Date(T0 + h * 3_600_000);
  const bounds = [at(0), at(24), at(48)];

  it('a deposit UNCONFIRMED at one snapshot and COMPLETED before the next is credited between them, by state change', () => {
    const d: PaymentHistory = {
      kind: 'deposit',
      id: 'D1',
      currency: 'BTC',
      amount: new Decimal('0.042'),
      timestamp: at(20),
      current: 'COMPLETED',
      states: [
        { state: 'UNCONFIRMED', observedAt: at(23) },
        { state: 'COMPLETED', observedAt: at(47) },
      ],
    };
    const placed = placePayments(bounds, [d], DEBIT_STATES);
    expect(placed[0]).toEqual([]);
    expect(placed[1]!.map((f) => [f.currency, f.deposits.toString(), f.depositsByState?.toString()])).toEqual([
      ['BTC', '0.042', '0.042'],
    ]);
  });

  it('a withdrawal PENDING at one snapshot (debited) and REFUNDED at the next is credited back between them', () => {
    const w: PaymentHistory = {
      kind: 'withdrawal',
      id: 'W1',
      currency: 'USD',
      amount: new Decimal('1525'),
      timestamp: at(20),
      current: 'REFUNDED',
      states: [
        { state: 'PENDING', observedAt: at(23) },
        { state: 'REFUNDED', observedAt: at(47) },
      ],
    };
    const placed = placePayments(bounds, [w], DEBIT_STATES);
    expect(placed[0]!.map((f) => [f.withdrawals.toString(), f.withdrawalsByState?.toString()])).toEqual([
      ['1525', '0'],
    ]);
    expect(placed[1]!.map((f) => [f.withdrawals.toString(), f.withdrawalsByState?.toString()])).toEqual([
      ['-1525', '-1525'],
    ]);
  });

  it('a record first seen already final is placed by its timestamp; without one, by its first observation', () => {
    const d: PaymentHistory = {
      kind: 'deposit',
      id: 'D2',
      currency: 'BTC',
      amount: new Decimal('1'),
      timestamp: at(10),
      current: 'COMPLETED',
      states: [{ state: 'COMPLETED', observedAt: at(30) }],
    };
    const placed = placePayments(bounds, [d, { ...d, id: 'D3', timestamp: null }], DEBIT_STATES);
    expect(placed[0]!.map((f) => [f.deposits.toString(), f.depositsByState?.toString()])).toEqual([['1', '0']]);
    expect(placed[1]!.map((f) => [f.deposits.toString(), f.depositsByState?.toString()])).toEqual([['1', '0']]);
  });

  it('a state first observed before the record exists (created and refunded during one sync) is placed at its timestamp', () => {
    const w: PaymentHistory = {
      kind: 'withdrawal',
      id: 'W2',
      currency: 'USD',
      amount: new Decimal('10'),
      timestamp: at(25),
      current: 'REFUNDED',
      states: [
        { state: 'PENDING', observedAt: at(23) },
        { state: 'REFUNDED', observedAt: at(23) },
      ],
    };
    const placed = placePayments(bounds, [w], DEBIT_STATES);
    expect(placed[0]).toEqual([]);
    expect(placed[1]!.map((f) => [f.withdrawals.toString(), f.withdrawalsByState?.toString()])).toEqual([['0', '-10']]);
  });

  it('pairOf: (bounds[i], bounds[i + 1]]', () => {
    expect([at(0), at(1), at(24), at(25), at(48), at(49)].map((t) => pairOf(bounds, t))).toEqual([-1, 0, 0, 1, 1, -1]);
  });
});
