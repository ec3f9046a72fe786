/** Simulator: every fill in columns of typed arrays, served page by page. */
import type { SymbolDef } from './catalog.js';
import type { FillRecord } from './model.js';
import { toPlain } from './fixed.js';

export interface FillInput {
  execId: number;
  exOrdId: number;
  tradeId: number;
  timestamp: number;
  /** Quantity in lots of the symbol, price in increments, fee in units of the counter scale. */
  lots: number;
  ticks: number;
  feeUnits: number;
  symbol: number;
  side: 'BUY' | 'SELL';
}

/**
 * Every fill, in columns of typed arrays (about 60 bytes a fill instead of ~300 for an object
 * with strings), in execId order = time order. Texts are made when a fill is served. A planted
 * case that leaves the grid (a price off the increment, a wrong fee) is an override.
 */
export class FillStore {
  length = 0;
  private cap = 0;
  execId = new Float64Array(0);
  exOrdId = new Float64Array(0);
  tradeId = new Float64Array(0);
  timestamp = new Float64Array(0);
  lots = new Float64Array(0);
  ticks = new Float64Array(0);
  feeUnits = new Float64Array(0);
  symbol = new Uint8Array(0);
  side = new Uint8Array(0);
  readonly overrides = new Map<number, { price?: string; fee?: string }>();
  /** Fills the exchange has not published yet (late event `publish-fill`): never served, though they moved the balance. */
  readonly withheld = new Set<number>();
  /**
   * Fills published late: appended with a new execId and their old time, so they sit out of time
   * order; served by time windows (timeWindow) but never moving the balance again.
   */
  readonly republished = new Set<number>();
  /** Bumped on every change, so materialized copies know when they are stale. */
  version = 0;

  constructor(readonly symbols: readonly SymbolDef[]) {}

  push(f: FillInput): number {
    if (this.length === this.cap) this.grow();
    const i = this.length++;
    this.execId[i] = f.execId;
    this.exOrdId[i] = f.exOrdId;
    this.tradeId[i] = f.tradeId;
    this.timestamp[i] = f.timestamp;
    this.lots[i] = f.lots;
    this.ticks[i] = f.ticks;
    this.feeUnits[i] = f.feeUnits;
    this.symbol[i] = f.symbol;
    this.side[i] = f.side === 'BUY' ? 0 : 1;
    this.version++;
    return i;
  }

  /** Sizes the columns once for an expected count (no doubling copies on the way to a million). */
  reserve(n: number): void {
    if (n > this.cap) this.grow(n);
  }

  private grow(min = 0): void {
    const cap = Math.max(1024, this.cap * 2, min);
    const g = <T extends Float64Array | Uint8Array>(a: T, C: new (n: number) => T): T => {
      const b = new C(cap);
      b.set(a);
      return b;
    };
    this.execId = g(this.execId, Float64Array);
    this.exOrdId = g(this.exOrdId, Float64Array);
    this.tradeId = g(this.tradeId, Float64Array);
    this.timestamp = g(this.timestamp, Float64Array);
    this.lots = g(this.lots, Float64Array);
    this.ticks = g(this.ticks, Float64Array);
    this.feeUnits = g(this.feeUnits, Float64Array);
    this.symbol = g(this.symbol, Uint8Array);
    this.side = g(this.side, Uint8Array);
    this.cap = cap;
  }

  def(i: number): SymbolDef {
    return this.symbols[this.symbol[i]!]!;
  }

  qtyText(i: number): string {
    const d = this.def(i);
    return plainOf(this.lots[i]!, d.lot[0], d.lot[1]);
  }

  priceText(i: number): string {
    const o = this.overrides.get(i)?.price;
    if (o !== undefined) return o;
    const d = this.def(i);
    return plainOf(this.ticks[i]!, d.priceInc[0], d.priceInc[1]);
  }

  feeText(i: number): string {
    const o = this.overrides.get(i)?.fee;
    if (o !== undefined) return o;
    return plainOf(this.feeUnits[i]!, 1, this.def(i).counterScale);
  }

  setOverride(i: number, o: { price?: string; fee?: string }): void {
    this.overrides.set(i, { ...this.overrides.get(i), ...o });
    this.version++;
  }

  clearOverride(i: number): void {
    this.overrides.delete(i);
    this.version++;
  }

  at(i: number): FillRecord {
    const d = this.def(i);
    return {
      exOrdId: String(this.exOrdId[i]),
      tradeId: String(this.tradeId[i]),
      execId: String(this.execId[i]),
      side: this.side[i] === 0 ? 'BUY' : 'SELL',
      symbol: d.symbol,
      price: this.priceText(i),
      qty: this.qtyText(i),
      fee: this.feeText(i),
      timestamp: this.timestamp[i]!,
    };
  }

  /** First index with execId >= id (or > id when `after`). */
  indexOfExec(id: number, after: boolean): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const v = this.execId[mid]!;
      if (after ? v <= id : v < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * First index with timestamp >= t (or > t when `after`), over the fills in time order: a fill
   * published late (out of time order) is searched as if at the time of the fill before it.
   */
  indexOfTime(t: number, after: boolean): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const v = this.searchTime(mid);
      if (after ? v <= t : v < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private searchTime(i: number): number {
    let j = i;
    while (j > 0 && this.republished.has(j)) j--;
    return this.timestamp[j]!;
  }

  /**
   * A copy of fill `index` published now under `execId` (higher than every execId so far) at the
   * fill's own old time: what an exchange does with a fill it publishes late. Returns its index.
   */
  republish(index: number, execId: number): number {
    const i = this.push({
      execId,
      exOrdId: this.exOrdId[index]!,
      tradeId: this.tradeId[index]!,
      timestamp: this.timestamp[index]!,
      lots: this.lots[index]!,
      ticks: this.ticks[index]!,
      feeUnits: this.feeUnits[index]!,
      symbol: this.symbol[index]!,
      side: this.side[index] === 0 ? 'BUY' : 'SELL',
    });
    const o = this.overrides.get(index);
    if (o) this.overrides.set(i, { ...o });
    this.republished.add(i);
    return i;
  }

  /** Whether fill i is served by the API (not withheld). */
  served(i: number): boolean {
    return !this.withheld.has(i);
  }
}

/**
 * toPlain({ v: a x b, s }) for integer a and b, on doubles when the product is exact (a safe
 * integer, the case of every generated fill) and on BigInt otherwise: same text either way.
 */
export function plainOf(a: number, b: number, s: number): string {
  const v = a * b;
  if (!Number.isSafeInteger(v) || !Number.isInteger(a) || !Number.isInteger(b))
    return toPlain({ v: BigInt(a) * BigInt(b), s });
  if (s === 0) return v === 0 ? '0' : String(v);
  const neg = v < 0;
  let digits = String(neg ? -v : v);
  if (digits.length <= s) digits = '0'.repeat(s - digits.length + 1) + digits;
  let end = digits.length;
  const cut = end - s;
  while (end > cut && digits.charCodeAt(end - 1) === 48) end--;
  const text = end === cut ? digits.slice(0, cut) : `${digits.slice(0, cut)}.${digits.slice(cut, end)}`;
  return neg && text !== '0' ? `-${text}` : text;
}
