/** Work run side by side that never leaves a part running behind a failure. */

/**
 * Awaits every promise, then throws the first failure (in the order given) or returns the values in order. Unlike
 * Promise.all, nothing of the work is still running (still writing) when the caller sees the failure and records it.
 */
export async function allSettledOrThrow<T>(work: Array<Promise<T>>): Promise<T[]> {
  const outcomes = await Promise.allSettled(work);
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) throw failed.reason;
  return outcomes.map((o) => (o as PromiseFulfilledResult<T>).value);
}
