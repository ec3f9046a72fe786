import { describe, expect, it } from 'vitest';
import { applyFillsPage, nextFillsRequest, splitPoint, type FillsPlanState, type FillsRequest } from '../../src/sources/exchange/paging.js';

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
