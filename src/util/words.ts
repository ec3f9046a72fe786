/** Counts and lists in words, for messages: "1 attempt", "3 attempts"; "A, B and C". */

/** "1 attempt", "2 attempts": the count with its noun, singular for exactly one (a plural form for nouns not in -s). */
export function plural(n: number, word: string, words = `${word}s`): string {
  return `${n} ${n === 1 ? word : words}`;
}

/** "A", "A and B", "A, B and C". */
export function listText(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}
