/** What every step of the exchange sync shares: its state, counters, coverage, quarantine and concurrency. */
import { setMaxListeners } from 'node:events';
import type { Db } from '../../store/db/database.js';
import { quarantineResponse } from '../common/quarantine.js';
import type { Progress } from '../../util/progress.js';
import type { ExchangeClient } from './client.js';
import type { Rejected } from './schemas.js';
import { stringifyMarked } from './wire.js';
import type { CoverageDelta } from '../../store/sync/exchange-records.js';
import type { SourceEnv } from '../source.js';

export const SOURCE = 'exchange' as const;

/** Per-stream figures of one sync, for the result and the logs. */
export interface StreamCoverage {
  pages: number;
  rows: number;
  quarantined: number;
  /** false when a window could not be split below the page limit, or the fills walk got stuck. */
  settled: boolean;
  /** The stream's cursor after the sync (execId or epoch ms), when it has one. */
  cursor?: string | null;
}

export interface SyncCounters {
  fills: number;
  orders: number;
  trades: number;
  ordersById: number;
  ordersNotFound: number;
  deposits: number;
  withdrawals: number;
  balances: number;
  quarantined: number;
  pages: number;
}

/** What every step of one exchange sync shares: the environment every source receives, and the exchange's own state. */
export interface ExchangeSync extends SourceEnv {
  client: ExchangeClient;
  progress: Progress;
  /** "Up to now": the end of every time window (the run's start time). */
  nowMs: number;
  /** When this sync started: records last seen before it are refreshed by id. */
  startedAt: Date;
  historyStartMs: number;
  /** When this sync's balance snapshot was fetched (epoch ms): the payments are listed up to it at least. */
  balancesFetchedAtMs?: number;
  counters: SyncCounters;
  coverage: Record<string, StreamCoverage>;
  /** Entities with unresolved quarantine entries: only those pay for resolveQuarantined. */
  openQuarantine: Set<string>;
}

export function streamCoverage(env: ExchangeSync, stream: string): StreamCoverage {
  return (env.coverage[stream] ??= { pages: 0, rows: 0, quarantined: 0, settled: true });
}

/** Quarantines a page's invalid records and resolves earlier entries of records that now validate. */
export async function handleQuarantine(
  env: ExchangeSync,
  trx: Db,
  endpoint: string,
  entity: string,
  invalid: Rejected[],
  validKeys: string[],
): Promise<void> {
  const origin = { account: env.account, source: SOURCE, endpoint, entity, runId: env.runId } as const;
  const bad = invalid.map((r) => ({
    recordKey: r.key,
    position: r.key === null ? r.index : null,
    rawText: safeRaw(r.raw),
    reason: r.reason,
  }));
  if (invalid.length) {
    env.counters.quarantined += invalid.length;
    env.openQuarantine.add(entity);
    env.logger.warn(
      { endpoint, entity, records: invalid.map((r) => ({ key: r.key, position: r.index, reason: r.reason })) },
      'exchange records quarantined',
    );
  }
  // Only an entity with open entries pays for the resolve. A key can be both valid and
  // quarantined in one page only if sent twice; it stays quarantined then.
  const stillBad = new Set(invalid.map((r) => r.key));
  const resolved = validKeys.length && env.openQuarantine.has(entity) ? validKeys.filter((k) => !stillBad.has(k)) : [];
  await quarantineResponse(trx, origin, bad, resolved);
}

function safeRaw(raw: unknown): string {
  try {
    // Records may come from either parser (fills: lossless-json; others: marked numbers).
    return stringifyMarked(raw);
  } catch {
    return String(raw);
  }
}

export function bump(byDay: Map<string, CoverageDelta>, day: string, delta: Partial<CoverageDelta>): void {
  const cur = byDay.get(day) ?? { pages: 0, rows: 0, quarantined: 0, settled: true };
  cur.pages += delta.pages ?? 0;
  cur.rows += delta.rows ?? 0;
  cur.quarantined += delta.quarantined ?? 0;
  if (delta.settled === false) cur.settled = false;
  if (delta.detail !== undefined) cur.detail = delta.detail;
  byDay.set(day, cur);
}

export const dayOfMs = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * Runs independent parts of the sync (listings with cursors of their own) side by side, at most
 * `concurrency` at once, so that one listing's round trips overlap another's. The first failure
 * stops the others at their next page (they share an abort signal) and is the one thrown.
 */
export async function runConcurrently(
  env: ExchangeSync,
  tasks: Array<(env: ExchangeSync) => Promise<void>>,
  concurrency: number,
): Promise<void> {
  if (concurrency <= 1 || tasks.length <= 1) {
    for (const task of tasks) await task(env);
    return;
  }
  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // each task's requests in flight listen to it
  const onAbort = () => stop.abort(env.signal?.reason);
  if (env.signal?.aborted) onAbort();
  env.signal?.addEventListener('abort', onAbort, { once: true });
  // Counters, coverage and progress are the same objects: only the signal differs.
  const shared: ExchangeSync = { ...env, signal: stop.signal };
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async () => {
    while (failure === null && next < tasks.length) {
      const task = tasks[next++]!;
      try {
        await task(shared);
      } catch (error) {
        if (failure === null) {
          failure = { error };
          stop.abort(error);
        }
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, tasks.length) }, worker));
  } finally {
    env.signal?.removeEventListener('abort', onAbort);
  }
  if (failure !== null) throw (failure as { error: unknown }).error;
}
