import { describe, expect, it } from 'vitest';
import {
  applyFillsPage,
  fullAt,
  learnPage,
  nextFillsRequest,
  splitPoint,
  WindowPlan,
  type FillsPlanState,
  type FillsRequest,
  type PageCap,
  type WalkState,
} from '../../src/sources/exchange/plan.js';

type Order = 'newest-first' | 'oldest-first';

/** A fake /fills: ids sorted, bounds inclusive or exclusive, pages oldest- or newest-first. */
function fakeFills(ids: bigint[], order: Order, inclusive: boolean, limit: number) {
  return (req: FillsRequest): string[] => {
    let set = ids.filter((id) => {
      if (req.fromExecId !== undefined && (inclusive ? id < BigInt(req.fromExecId) : id <= BigInt(req.fromExecId)))
        return false;
      if (req.toExecId !== undefined && (inclusive ? id > BigInt(req.toExecId) : id >= BigInt(req.toExecId)))
        return false;
      return true;
    });
    set = order === 'oldest-first' ? set.slice(0, limit) : set.slice(-limit).reverse();
    return set.map(String);
  };
}

function makeIds(n: number, seed = 7): bigint[] {
  const out: bigint[] = [];
  let x = 1_000_000_000_000n;
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    x += BigInt(1 + (s % 5));
    out.push(x);
  }
  return out;
}

function run(
  ids: bigint[],
  order: Order,
  inclusive: boolean,
  limit: number,
  start: FillsPlanState,
  stopAfter = Infinity,
) {
  const server = fakeFills(ids, order, inclusive, limit);
  let state = start;
  const seen = new Set<string>();
  let requests = 0;
  for (;;) {
    if (requests >= stopAfter) return { state, seen, requests, done: false };
    const req = nextFillsRequest(state);
    const page = server(req);
    requests++;
    page.forEach((id) => seen.add(id));
    const out = applyFillsPage(state, req, page, page.length >= limit);
    if (out.kind === 'stuck') throw new Error(out.reason);
    state = out.state;
    if (out.done) return { state, seen, requests, done: true };
    if (requests > 10_000) throw new Error('loop');
  }
}

describe('fills paging plan', () => {
  const ids = makeIds(2_345);
  for (const order of ['newest-first', 'oldest-first'] as const) {
    for (const inclusive of [true, false]) {
      it(`gets every fill exactly once: ${order}, ${inclusive ? 'inclusive' : 'exclusive'} bounds`, () => {
        const r = run(ids, order, inclusive, 100, { watermark: null, blocks: [] });
        expect(r.seen.size).toBe(ids.length);
        expect(r.state).toEqual({ watermark: String(ids[ids.length - 1]), blocks: [] });
        // At most about two requests per page, plus the closing short page.
        expect(r.requests).toBeLessThanOrEqual(2 * Math.ceil(ids.length / 100) + 2);
      });

      it(`resumes from any interruption: ${order}, ${inclusive ? 'inclusive' : 'exclusive'} bounds`, () => {
        for (const cut of [1, 2, 5, 13]) {
          const first = run(ids.slice(0, 1500), order, inclusive, 100, { watermark: null, blocks: [] }, cut);
          // More fills arrive between the runs.
          const second = run(ids, order, inclusive, 100, JSON.parse(JSON.stringify(first.state)) as FillsPlanState);
          const union = new Set([...first.seen, ...second.seen]);
          expect(union.size).toBe(ids.length);
          expect(second.state.watermark).toBe(String(ids[ids.length - 1]));
        }
      });
    }
  }

  it('an incremental run from the cursor asks only for what is new', () => {
    const r = run(ids, 'newest-first', true, 1000, { watermark: String(ids[2000]), blocks: [] });
    expect(r.requests).toBe(1);
    expect(r.seen.size).toBe(ids.length - 2000);
  });

  it('reports a full page that moves nothing instead of looping', () => {
    const state: FillsPlanState = { watermark: '10', blocks: [] };
    const out = applyFillsPage(state, { kind: 'top', fromExecId: '10' }, ['10'], true);
    expect(out.kind).toBe('stuck');
  });
});

describe('window split point', () => {
  it('splits a newest-first page just above its oldest timestamp', () => {
    expect(splitPoint({ start: 0, end: 1000 }, [900, 800, 700])).toBe(702);
  });
  it('splits an oldest-first page at its newest timestamp', () => {
    expect(splitPoint({ start: 0, end: 1000 }, [100, 200, 300])).toBe(298);
  });
  it('falls back to the middle, and cannot split one millisecond', () => {
    expect(splitPoint({ start: 0, end: 1000 }, [500, 500])).toBe(500);
    expect(splitPoint({ start: 0, end: 1000 }, [0, 0, 0])).toBe(500);
    expect(splitPoint({ start: 5, end: 6 }, [5, 5])).toBeNull();
  });
});

/**
 * A fake time-window list (/orders, /trades): timestamps sorted, page cut at `limit` oldest-first
 * from the lower bound or newest-first from the upper bound, bounds inclusive or exclusive.
 * Returns the page's records (their indexes) in the order the page lists them.
 */
function fakeWindows(times: number[], order: Order, inclusive: boolean, limit: number) {
  return (from: number, to: number): number[] => {
    const inside: number[] = [];
    times.forEach((t, i) => {
      if (inclusive ? t >= from && t <= to : t > from && t < to) inside.push(i);
    });
    return order === 'oldest-first' ? inside.slice(0, limit) : inside.slice(-limit).reverse();
  };
}

interface RunOptions {
  /** The limit asked (walkWindows asks ORDERS_PAGE_LIMIT, 1000). */
  asked?: number;
  /** The contract's floor of the cap. */
  floor?: number;
  /** Largest page learned by earlier syncs. */
  learned?: number;
  /** Stop after this many requests (a killed sync), returning the persisted cursor and walk. */
  stopAfter?: number;
  resume?: WalkState | null;
  /** Records stored by an earlier (killed) sync. */
  stored?: Set<number>;
}

/**
 * Drives a WindowPlan as walkWindows does (padded bounds; a page is full at fullAt(cap), the cap
 * learned from every page; full pages are kept unless the plan splits them). Checks at every
 * cursor move that every record before the cursor was seen.
 */
function runWindows(
  times: number[],
  order: Order,
  inclusive: boolean,
  serverCap: number,
  start: number,
  end: number,
  o: RunOptions = {},
) {
  const asked = o.asked ?? serverCap;
  const server = fakeWindows(times, order, inclusive, Math.min(asked, serverCap));
  const cap: PageCap = { asked, floor: o.floor ?? Math.min(asked, 100), learned: o.learned ?? 0 };
  const plan = new WindowPlan(start, end, o.resume);
  const seen = new Set<number>(o.stored);
  const cursors: number[] = [];
  let requests = 0;
  const moveCursor = (c: number | null) => {
    if (c === null) return;
    if (cursors.length) expect(c).toBeGreaterThanOrEqual(cursors[cursors.length - 1]!);
    cursors.push(c);
    times.forEach((t, i) => {
      if (t >= start && t < c && !seen.has(i)) throw new Error(`cursor ${c} moved past unseen record ${i} at ${t}`);
    });
  };
  for (let w = plan.next(); w; w = plan.next()) {
    if (o.stopAfter !== undefined && requests >= o.stopAfter)
      return { seen, cursors, requests, walk: plan.walk, done: false };
    const page = server(Math.max(0, w.start - 1), w.end + 1);
    requests++;
    if (requests > 100_000) throw new Error('loop');
    const full = page.length >= fullAt(cap);
    learnPage(cap, page.length);
    if (full) {
      const verdict = plan.full(
        w,
        page.map((i) => times[i]!),
      );
      expect(verdict).not.toBe(false);
      if (verdict && verdict.kind === 'split') continue;
      page.forEach((i) => seen.add(i));
      if (verdict) moveCursor(verdict.cursor);
      continue;
    }
    page.forEach((i) => seen.add(i));
    moveCursor(plan.complete(w));
  }
  return { seen, cursors, requests, walk: plan.walk, done: true, learned: cap.learned };
}

/** Years of nothing, then days of records at a rate that changes through the day, with bursts. */
function makeTimes(seed: number): { times: number[]; start: number; end: number } {
  let s = seed;
  const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  const dataStart = 1_700_000_000_000;
  const times: number[] = [];
  let t = dataStart;
  while (times.length < 6_000) {
    const hour = Math.floor((t - dataStart) / 3_600_000) % 24;
    const meanGap = hour < 8 ? 120_000 : 15_000;
    t += Math.floor(rnd() * 2 * meanGap);
    const burst = rnd() < 0.01 ? 20 + Math.floor(rnd() * 40) : 1;
    for (let k = 0; k < burst; k++) times.push(t);
  }
  return { times, start: dataStart - 3 * 365 * 86_400_000, end: t + 86_400_000 };
}

describe('window plan', () => {
  for (const order of ['newest-first', 'oldest-first'] as const) {
    for (const inclusive of [true, false]) {
      it(`covers the range left to right and gets every record: ${order}, ${inclusive ? 'inclusive' : 'exclusive'} bounds`, () => {
        for (const seed of [1, 2, 3]) {
          const { times, start, end } = makeTimes(seed);
          const r = runWindows(times, order, inclusive, 100, start, end);
          expect(r.seen.size).toBe(times.length);
          // The cursor only ever moved past records already seen (runWindows checks), and ends at the range's end.
          expect(r.cursors[r.cursors.length - 1]).toBe(end);
          // About two requests per page (a full window, then its piece below the limit).
          expect(r.requests).toBeLessThan((2.4 * times.length) / 100 + 10);
        }
      });
    }
  }

  for (const serverCap of [100, 1000]) {
    for (const order of ['newest-first', 'oldest-first'] as const) {
      for (const inclusive of [true, false]) {
        const label = `${order}, ${inclusive ? 'inclusive' : 'exclusive'} bounds, limit 1000 asked of a server capped at ${serverCap}`;
        it(`gets every record at one request per page: ${label}`, () => {
          for (const seed of [1, 2, 3]) {
            const { times, start, end } = makeTimes(seed);
            for (const learned of [0, serverCap]) {
              const r = runWindows(times, order, inclusive, serverCap, start, end, { asked: 1000, learned });
              expect(r.seen.size).toBe(times.length);
              expect(r.cursors[r.cursors.length - 1]).toBe(end);
              expect(r.learned).toBe(serverCap);
              // One request per page (a full page is kept, the window continued past it), plus
              // the closing page and, with nothing learned yet, the splits of the first pages.
              expect(r.requests).toBeLessThanOrEqual(Math.ceil((1.15 * times.length) / serverCap) + 6);
            }
          }
        });

        it(`resumes a killed walk from what it stored: ${label}`, () => {
          const { times, start, end } = makeTimes(4);
          for (const stopAfter of [1, 3, 20]) {
            const first = runWindows(times, order, inclusive, serverCap, start, end, {
              asked: 1000,
              learned: serverCap,
              stopAfter,
            });
            const from = first.cursors.length ? first.cursors[first.cursors.length - 1]! : start;
            const second = runWindows(times, order, inclusive, serverCap, from, end, {
              asked: 1000,
              learned: serverCap,
              resume: first.walk,
              stored: first.seen,
            });
            expect(second.seen.size).toBe(times.length);
            // The resumed sync does not fetch again what the killed one stored.
            expect(first.requests + second.requests).toBeLessThanOrEqual(
              Math.ceil((1.15 * times.length) / serverCap) + 8,
            );
          }
        });
      }
    }
  }

  it('trusts a page only below the largest page seen, at least the contract floor', () => {
    expect(fullAt({ asked: 1000, floor: 100, learned: 0 })).toBe(100);
    expect(fullAt({ asked: 1000, floor: 100, learned: 1000 })).toBe(1000);
    expect(fullAt({ asked: 1000, floor: 100, learned: 5000 })).toBe(1000);
    expect(fullAt({ asked: Infinity, floor: 0, learned: 0 })).toBe(1);
    expect(fullAt({ asked: Infinity, floor: 0, learned: 3000 })).toBe(3000);
  });

  it('needs one request when the range holds less than a page', () => {
    const r = runWindows([5, 6, 7], 'newest-first', true, 100, 0, 1_000_000);
    expect(r.requests).toBe(1);
    expect(r.seen.size).toBe(3);
  });

  it('cannot split a full millisecond', () => {
    const plan = new WindowPlan(10, 11);
    const w = plan.next()!;
    expect(plan.full(w, [10, 10])).toBe(false);
    expect(plan.next()).toBeNull();
  });
});
