/** Simulator: exact fixed-point decimals on BigInt for the generator's hot paths. */
/**
 * Exact fixed-point decimals on BigInt for the generator's hot paths: a value is an integer
 * count of 10^-scale. decimal.js at 60 digits costs microseconds per operation, which a
 * million fills cannot afford; these are exact too, and the consistency test re-checks every
 * result with Decimal.
 */
import { flat } from './prng.js';

export interface Fx {
  v: bigint;
  s: number;
}

const POW: bigint[] = [];
export function pow10(n: number): bigint {
  if (n < 0) throw new RangeError(`negative power ${n}`);
  return (POW[n] ??= 10n ** BigInt(n));
}

export function fx(v: bigint | number, s = 0): Fx {
  return { v: typeof v === 'bigint' ? v : BigInt(v), s };
}

/** Parses a plain decimal text ("-12.3400") exactly. */
export function parseFx(text: string): Fx {
  const neg = text.startsWith('-');
  const body = neg || text.startsWith('+') ? text.slice(1) : text;
  const dot = body.indexOf('.');
  const digits = dot < 0 ? body : body.slice(0, dot) + body.slice(dot + 1);
  const v = BigInt(digits === '' ? '0' : digits);
  return { v: neg ? -v : v, s: dot < 0 ? 0 : body.length - dot - 1 };
}

export function rescale(a: Fx, s: number): bigint {
  return s >= a.s ? a.v * pow10(s - a.s) : a.v / pow10(a.s - s);
}

export function add(a: Fx, b: Fx): Fx {
  const s = Math.max(a.s, b.s);
  return { v: rescale(a, s) + rescale(b, s), s };
}

export function sub(a: Fx, b: Fx): Fx {
  const s = Math.max(a.s, b.s);
  return { v: rescale(a, s) - rescale(b, s), s };
}

export function mul(a: Fx, b: Fx): Fx {
  return { v: a.v * b.v, s: a.s + b.s };
}

export type Mode = 'half-up' | 'down';

/** Integer division with decimal.js semantics: half-up = ties away from zero; down = toward zero. */
function divRound(n: bigint, d: bigint, mode: Mode): bigint {
  if (d < 0n) {
    n = -n;
    d = -d;
  }
  const q = n / d; // truncates toward zero
  if (mode === 'down') return q;
  const r = n - q * d;
  const twice = (r < 0n ? -r : r) * 2n;
  if (twice >= d) return n < 0n ? q - 1n : q + 1n;
  return q;
}

/** Rounds to `s` decimals. */
export function round(a: Fx, s: number, mode: Mode = 'half-up'): Fx {
  if (s >= a.s) return { v: a.v * pow10(s - a.s), s };
  return { v: divRound(a.v, pow10(a.s - s), mode), s };
}

/** a / b rounded to `s` decimals. */
export function div(a: Fx, b: Fx, s: number, mode: Mode = 'half-up'): Fx {
  // a.v/10^a.s / (b.v/10^b.s) * 10^s = a.v * 10^(s + b.s - a.s) / b.v
  const k = s + b.s - a.s;
  const n = k >= 0 ? a.v * pow10(k) : a.v;
  const d = k >= 0 ? b.v : b.v * pow10(-k);
  return { v: divRound(n, d, mode), s };
}

/** Rounds to the nearest multiple of `inc` (half-up), result at inc's scale or finer. */
export function toNearest(a: Fx, inc: Fx): Fx {
  const s = Math.max(a.s, inc.s);
  const q = divRound(rescale(a, s), rescale(inc, s), 'half-up');
  return { v: q * rescale(inc, s), s };
}

export function cmp(a: Fx, b: Fx): number {
  const s = Math.max(a.s, b.s);
  const x = rescale(a, s);
  const y = rescale(b, s);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Fixed text with exactly `a.s` decimals ("12.50"). */
export function toFixed(a: Fx): string {
  const neg = a.v < 0n;
  let digits = (neg ? -a.v : a.v).toString();
  if (a.s === 0) return (neg ? '-' : '') + digits;
  if (digits.length <= a.s) digits = '0'.repeat(a.s - digits.length + 1) + digits;
  const cut = digits.length - a.s;
  return flat(`${neg ? '-' : ''}${digits.slice(0, cut)}.${digits.slice(cut)}`);
}

/** Shortest plain text (trailing zeros removed), like Decimal#toString without exponent. */
export function toPlain(a: Fx): string {
  const t = toFixed(a);
  if (a.s === 0) return t;
  let end = t.length;
  while (t.charCodeAt(end - 1) === 48) end--;
  if (t.charCodeAt(end - 1) === 46) end--;
  const out = end === t.length ? t : flat(t.slice(0, end));
  return out === '-0' ? '0' : out;
}
