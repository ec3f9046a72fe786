import { describe, expect, it } from 'vitest';
import type { DayFlows, EdgeFill } from '../../src/domain/index.js';
import { MAX_EDGE_FILLS, placeEdgeFills, type EdgePair } from '../../src/rules/snapshot-edges.js';
import { rollForward } from '../../src/rules/balance-roll.js';
import { d as D, makeSnapshot as snap } from './recon-factories.js';

const TOL = D('0.00000001');

const flow = (currency: string, f: Partial<Record<'deposits' | 'bought' | 'sold' | 'fees', string>>): DayFlows => ({
  currency,
  day: '2026-11-15',
  deposits: D(f.deposits ?? 0),
  withdrawals: D(0),
  bought: D(f.bought ?? 0),
  sold: D(f.sold ?? 0),
  fees: D(f.fees ?? 0),
});

/** A BUY of `qty` ETH at `price` USD with a USD fee. */
const buy = (execId: string, qty: string, price: string, fee = '0'): EdgeFill => ({
  execId,
  moves: [flow('ETH', { bought: qty }), flow('USD', { sold: D(qty).times(price).toString(), fees: fee })],
});

/** Each pair's residual per currency once its flows are placed. */
function residuals(pairs: EdgePair[], flows: DayFlows[][]): Array<Record<string, string>> {
  return pairs.map((p, i) =>
    Object.fromEntries(
      rollForward(p.opening, p.closing, flows[i]!, TOL)
        .filter((f) => !f.residual.isZero())
        .map((f) => [f.currency, f.residual.toString()]),
    ),
  );
}

describe('fills stamped inside a balance snapshot fetch', () => {
  const s1 = snap('1', '2026-11-15T02:00:00.100Z', { ETH: '10', USD: '100000' });

  it('a window fill the closing snapshot holds counts before it; one it does not hold counts after it', () => {
    // Snapshot 2's window has two fills: the exchange took the balance after the first one only.
    const f1 = buy('11', '1', '3000', '1.5');
    const f2 = buy('12', '0.5', '3100');
    const s2 = snap('2', '2026-11-15T03:00:00.100Z', { ETH: '11', USD: '96998.5' });
    const s3 = snap('3', '2026-11-15T04:00:00.100Z', { ETH: '11.5', USD: '95448.5' });
    const pairs: EdgePair[] = [
      { opening: s1, closing: s2, core: [] },
      { opening: s2, closing: s3, core: [] },
    ];
    const placed = placeEdgeFills(pairs, new Map([['2', [f1, f2]]]), TOL);
    expect(residuals(pairs, placed.flows)).toEqual([{}, {}]);
    expect(placed).toMatchObject({ windowFills: 2, heldAfter: 1 });
    // Counted as the answer's time would count them (both before), each pair is out by f2, with opposite signs.
    const naive = [[...f1.moves, ...f2.moves], []];
    expect(residuals(pairs, naive)).toEqual([
      { ETH: '-0.5', USD: '1550' },
      { ETH: '0.5', USD: '-1550' },
    ]);
  });

  it('a pair out of balance in one currency still places its window fills where the others balance', () => {
    // The fleet bench's night (acct2): the opening's window holds a fill the opening does not, and the pair has a real
    // residual in EUR. Judged by whole pairs, no cut balanced the pair, so the tie put the fill before the opening and
    // added two residuals nobody planted (ETH and USD here).
    const f = buy('21', '0.5', '3000');
    const open = snap('1', '2026-11-15T02:00:00.100Z', { ETH: '10', USD: '100000', EUR: '500' });
    const close = snap('2', '2026-11-15T03:00:00.100Z', { ETH: '10.5', USD: '98500', EUR: '1734.5' });
    const pairs: EdgePair[] = [{ opening: open, closing: close, core: [] }];
    const placed = placeEdgeFills(pairs, new Map([['1', [f]]]), TOL);
    expect(residuals(pairs, placed.flows)).toEqual([{ EUR: '1234.5' }]);
    expect(placed).toMatchObject({ windowFills: 1, heldAfter: 1 });
  });

  it('the series shares each cut: a window on the opening of the first pair and on every closing', () => {
    const a = buy('1', '2', '3000');
    const b = buy('2', '1', '3000');
    const c = buy('3', '1', '3000');
    // Snapshot 1 holds a (its window: a), snapshot 2 holds b but not c (window: b, c), snapshot 3 holds c.
    const open = snap('1', '2026-11-15T02:00:00.100Z', { ETH: '12', USD: '94000' });
    const mid = snap('2', '2026-11-15T03:00:00.100Z', { ETH: '13', USD: '91000' });
    const close = snap('3', '2026-11-15T04:00:00.100Z', { ETH: '14', USD: '88000' });
    const pairs: EdgePair[] = [
      { opening: open, closing: mid, core: [] },
      { opening: mid, closing: close, core: [] },
    ];
    const placed = placeEdgeFills(
      pairs,
      new Map([
        ['1', [a]],
        ['2', [b, c]],
      ]),
      TOL,
    );
    expect(residuals(pairs, placed.flows)).toEqual([{}, {}]);
    expect(placed.flows[0]!.filter((f) => f.currency === 'ETH').map((f) => f.bought.toString())).toEqual(['1']);
    expect(placed.flows[1]!.filter((f) => f.currency === 'ETH').map((f) => f.bought.toString())).toEqual(['1']);
  });

  it('a real difference stays whole: no window fill is moved to hide part of it, and its size is the break', () => {
    // A deposit of 5 ETH is missing from the flows; the window fill is held by snapshot 2.
    const f = buy('11', '1', '3000');
    const s2 = snap('2', '2026-11-15T03:00:00.100Z', { ETH: '16', USD: '97000' });
    const s3 = snap('3', '2026-11-15T04:00:00.100Z', { ETH: '16', USD: '97000' });
    const pairs: EdgePair[] = [
      { opening: s1, closing: s2, core: [] },
      { opening: s2, closing: s3, core: [] },
    ];
    const placed = placeEdgeFills(pairs, new Map([['2', [f]]]), TOL);
    expect(residuals(pairs, placed.flows)).toEqual([{ ETH: '5' }, {}]);
    expect(placed.heldAfter).toBe(0);
  });

  it('when nothing decides, every window fill counts before its snapshot (as stamped at the answer)', () => {
    // Both pairs are out whatever the cut (a difference in BTC the fills do not touch).
    const f = buy('11', '1', '3000');
    const s2 = snap('2', '2026-11-15T03:00:00.100Z', { ETH: '11', USD: '97000', BTC: '1' });
    const s3 = snap('3', '2026-11-15T04:00:00.100Z', { ETH: '11', USD: '97000', BTC: '2' });
    const pairs: EdgePair[] = [
      { opening: s1, closing: s2, core: [] },
      { opening: s2, closing: s3, core: [] },
    ];
    const placed = placeEdgeFills(pairs, new Map([['2', [f]]]), TOL);
    expect(placed.heldAfter).toBe(0);
    expect(residuals(pairs, placed.flows)).toEqual([{ BTC: '1' }, { BTC: '1' }]);
  });

  it('pairs that do not follow each other are placed apart; the core flows are kept', () => {
    const f = buy('11', '1', '3000');
    const s2 = snap('2', '2026-11-15T03:00:00.100Z', { ETH: '10', USD: '100000' });
    const s5 = snap('5', '2026-11-16T03:00:00.100Z', { ETH: '20', USD: '100000' });
    const s6 = snap('6', '2026-11-16T04:00:00.100Z', { ETH: '21', USD: '97000' });
    const pairs: EdgePair[] = [
      { opening: s1, closing: s2, core: [] },
      { opening: s5, closing: s6, core: [flow('ETH', { deposits: '0' })] },
    ];
    // Snapshot 5's window fill is not in its balances: it counts in the pair after it.
    const placed = placeEdgeFills(pairs, new Map([['5', [f]]]), TOL);
    expect(residuals(pairs, placed.flows)).toEqual([{}, {}]);
    expect(placed.heldAfter).toBe(1);
    expect(placed.flows[1]).toHaveLength(3);
  });

  it(`a window of more than ${MAX_EDGE_FILLS} fills is not searched: its fills count before the snapshot`, () => {
    const many = Array.from({ length: MAX_EDGE_FILLS + 1 }, (_, i) => buy(String(i), '0.001', '3000'));
    const s2 = snap('2', '2026-11-15T03:00:00.100Z', { ETH: '10', USD: '100000' });
    const s3 = snap('3', '2026-11-15T04:00:00.100Z', { ETH: '10', USD: '100000' });
    const pairs: EdgePair[] = [
      { opening: s1, closing: s2, core: [] },
      { opening: s2, closing: s3, core: [] },
    ];
    const placed = placeEdgeFills(pairs, new Map([['2', many]]), TOL);
    expect(placed.flows[0]).toHaveLength(2 * many.length);
    expect(placed.flows[1]).toHaveLength(0);
    expect(placed).toMatchObject({ windowFills: many.length, heldAfter: 0 });
  });
});
