/** Stopping a sync between pages: the abort error both APIs throw, its check and its recognition. */
import { AppError } from '../../errors.js';

export class SyncAbortedError extends AppError {
  constructor(cause?: unknown, source = 'exchange') {
    super('SYNC_ABORTED', `${source} sync aborted; committed pages are kept and the next sync resumes from them`, 1, {
      cause,
    });
  }
}

/** Aborts only between pages: the page being written is committed first. */
export function checkAbort(signal: AbortSignal | undefined, source?: string): void {
  if (signal?.aborted) throw new SyncAbortedError(signal.reason, source);
}

/** An error that an abort caused (the signal fired, or the HTTP layer gave up on an aborted request). */
export function isAbort(err: unknown, signal?: AbortSignal): boolean {
  return Boolean(signal?.aborted) || (err as Error)?.name === 'AbortError';
}
