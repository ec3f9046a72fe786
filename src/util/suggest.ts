/** "Did you mean ...?": the closest of a few known words to a mistyped one (CLI commands and options, config keys). */

/** Edit distance with adjacent transpositions (optimal string alignment), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) =>
    Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= s.length; i++)
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[s.length]![t.length]!;
}

/**
 * The known word closest to `word`, when close enough to be a typo (at most a third of its length
 * wrong, and at least one character), or one that contains it / is contained in it; else null.
 */
export function closest(word: string, candidates: Iterable<string>): string | null {
  const known = [...candidates];
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const k of known) {
    const dist = editDistance(word, k);
    if (dist < bestDistance) [best, bestDistance] = [k, dist];
  }
  if (best === null) return null;
  const limit = Math.max(1, Math.floor(Math.max(word.length, best.length) / 3));
  if (bestDistance <= limit) return best;
  const lw = word.toLowerCase();
  for (const k of known) if (lw.length >= 3 && (k.toLowerCase().includes(lw) || lw.includes(k.toLowerCase()))) return k;
  return null;
}
