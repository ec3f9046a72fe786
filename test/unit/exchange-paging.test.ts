import { describe, expect, it } from 'vitest';
import { applyFillsPage, nextFillsRequest, splitPoint, WindowPlan, type FillsPlanState, type FillsRequest, type Window } from '../../src/sources/exchange/paging.js';

type Order = 'newest-first' | 'oldest-first';

/** A fake /fills: ids sorted, bounds inclusive or exclusive, pages oldest- or newest-first. */
function fakeFills(ids: bigint[], order: Order, inclusive: boolean, limit: number) {
  return (req: FillsRequest): string[] => {
    let set = ids.filter((id) => {
      if (req.fromExecId !== undefined && (inclusive ? id < BigInt(req.fromExecId) : id <= BigInt(req.fromExecId))) return false;
      if (req.toExecId !== undefined && (inclusive ? id > BigInt(req.toExecId) : id >= BigInt(req.toExecId))) return false;
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

function run(ids: bigint[], order: Order, inclusive: boolean, limit: number, start: FillsPlanState, stopAfter = Infinity) {
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

/** Drives a WindowPlan as syncWindows does (padded bounds; only pages below the limit are kept). */
function runWindows(times: number[], order: Order, inclusive: boolean, limit: number, start: number, end: number) {
  const server = fakeWindows(times, order, inclusive, limit);
  const plan = new WindowPlan(start, end);
  const seen = new Set<number>();
  const covered: Window[] = [];
  let requests = 0;
  for (let w = plan.next(); w; w = plan.next()) {
    const page = server(Math.max(0, w.start - 1), w.end + 1);
    requests++;
    if (requests > 100_000) throw new Error('loop');
    if (page.length >= limit) {
      expect(plan.full(w, page.map((i) => times[i]!))).toBe(true);
      continue;
    }
    page.forEach((i) => seen.add(i));
    covered.push(w);
  }
  return { seen, covered, requests };
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
          // Consecutive windows share their end points and finish in time order (the cursor follows them).
          expect(r.covered[0]!.start).toBe(start);
          expect(r.covered[r.covered.length - 1]!.end).toBe(end);
          for (let i = 1; i < r.covered.length; i++) expect(r.covered[i]!.start).toBe(r.covered[i - 1]!.end);
          // About two requests per page (a full window, then its piece below the limit).
          expect(r.requests).toBeLessThan((2.4 * times.length) / 100 + 10);
        }
      });
    }
  }

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
