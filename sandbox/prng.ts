/** Simulator: seeded pseudo-random streams, so a seed always yields the same data. */
/**
 * Seeded pseudo-random numbers. Every random choice of the sandbox goes through one of these,
 * so a (seed, stream) pair always yields the same data; Math.random is never used.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  hex(length: number): string;
}

/** 53-bit string hash (cyrb53): turns (seed, stream name) into PRNG state. */
export function hash53(text: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** sfc32 seeded from a named stream of the sandbox seed. */
export function createRng(seed: number, stream: string): Rng {
  const h = hash53(stream, seed);
  let a = h >>> 0;
  let b = Math.floor(h / 4294967296) >>> 0;
  let c = hash53(`${stream}#c`, seed) >>> 0;
  let d = 1;
  const next = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    const r = (t + d) | 0;
    c = (c + r) | 0;
    return (r >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)] as never,
    hex: (length) => {
      const bytes = Math.ceil(length / 2);
      const buf = Buffer.allocUnsafe(bytes + 4);
      for (let i = 0; i < bytes; i += 4) buf.writeUInt32LE(Math.floor(next() * 4294967296) >>> 0, i);
      const s = buf.toString('hex', 0, bytes);
      return length % 2 ? s.slice(0, length) : s;
    },
  };
}

/** A UUID-looking id from the stream (version nibble 4, variant 8..b) for realistic ids. */
export function uuidFrom(rng: Rng): string {
  const h = rng.hex(32);
  return flat(
    `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[rng.int(0, 3)]}${h.slice(17, 20)}-${h.slice(20, 32)}`,
  );
}

/**
 * A flat copy of a string. Template literals and slices make rope and sliced strings that keep
 * their parts alive (a UUID built from slices costs ~300 bytes); 100,000 stored orders notice.
 */
export function flat(s: string): string {
  return s.length < 13 ? s : Buffer.from(s, 'latin1').toString('latin1');
}
