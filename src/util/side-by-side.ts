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

/**
 * The pages of several scans read side by side (each can run on a database session of its own) and handed over in the
 * scans' order: the first scan's pages as they come, a later scan's pages held until every scan before it is done, so
 * the consumer sees exactly what one scan after the other would give it. A scan stops reading ahead while the pages it
 * holds weigh `maxHeld` or more (`weight`: what a page costs to hold), so memory stays bounded whatever the scans find.
 * The first failure of any scan is thrown at once; when the consumer stops, the scans stop at their next page and
 * nothing is still reading when the generator returns.
 */
export async function* sideBySideInOrder<T>(
  scans: Array<AsyncIterable<T>>,
  weight: (page: T) => number,
  maxHeld: number,
): AsyncGenerator<T> {
  const lanes = scans.map(() => ({
    pages: [] as T[],
    held: 0,
    done: false,
    failure: null as { error: unknown } | null,
  }));
  const room: Array<(() => void) | null> = scans.map(() => null);
  let current = 0;
  let stopped = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const readers = scans.map(async (scan, i) => {
    const lane = lanes[i]!;
    try {
      for await (const page of scan) {
        lane.pages.push(page);
        lane.held += weight(page);
        notify();
        while (!stopped && lane.held >= maxHeld) await new Promise<void>((resolve) => (room[i] = resolve));
        if (stopped) return;
      }
    } catch (error) {
      lane.failure = { error };
    } finally {
      lane.done = true;
      notify();
    }
  });
  try {
    while (current < lanes.length) {
      const lane = lanes[current]!;
      const page = lane.pages.shift();
      if (page !== undefined) {
        lane.held -= weight(page);
        room[current]?.();
        room[current] = null;
        yield page;
        continue;
      }
      const failed = lanes.find((l) => l.failure !== null);
      if (failed) throw failed.failure!.error;
      if (lane.done) {
        current++;
        continue;
      }
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    stopped = true;
    for (const release of room) release?.();
    await Promise.allSettled(readers);
  }
}
