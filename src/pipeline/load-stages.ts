/** The stage functions the orchestrator calls, injectable for tests and loaded on first use. */
import type { Db } from '../store/db/database.js';
import type { JsonSummary } from '../stages/summary.js';
import type { RunStage, StageContext, StageRunner } from '../stages/context.js';
import type { SyncRequest } from '../stages/sync.js';
import type { DeliveryOptions, DeliveryResult } from '../stages/deliver.js';
import type { Period } from '../domain/period.js';

export type { JsonSummary } from '../stages/summary.js';

/**
 * The stage functions the orchestrator calls. Injectable so that tests can slow a stage down or
 * make one fail; the real ones are loaded on first use (loadStages), which also keeps commands
 * that need none of them (`runs`, `migrate`) from loading the HTTP, recon and Excel code.
 */
export interface Stages {
  /** The sync stage: each source the request names, in their order, recorded through `stage` as `sync.<source>`. */
  syncSources(ctx: StageContext, request: SyncRequest, stage: StageRunner): Promise<void>;
  reconcilePeriod(ctx: StageContext, period: Period): Promise<unknown>;
  jsonSummary(db: Db, account: string, runId: string): Promise<JsonSummary>;
  writeReport(
    ctx: StageContext,
    runId: string,
  ): Promise<{ path: string; sheets: Record<string, number>; detail: { dir: string } }>;
  deliverRun: RunStage<DeliveryOptions, DeliveryResult>;
  /**
   * Starts loading the modules of the stages after the sync (the report's exceljs above all) while the sync waits on
   * the APIs, so that no stage waits for its code. Optional: a test's stages have nothing to load.
   */
  prefetch?(): void;
  /** The short e-mail of a failed run whose failure report could not be written either. */
  deliverFailureNotice(
    ctx: StageContext,
    input: { period: Period; failure: { stage: string; error: string | null }; noWorkbook: string },
  ): Promise<DeliveryResult>;
}

let loaded: Promise<Stages> | undefined;

/**
 * A stage function whose module is imported when it is first called. The report's module brings exceljs, whose load
 * alone is about half a second: loaded with the sync's, it held the first stage back that long.
 */
function onFirstCall<M, A extends unknown[], R>(
  load: () => Promise<M>,
  pick: (m: M) => (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args) => pick(await load())(...args);
}

export function loadStages(): Promise<Stages> {
  loaded ??= (async () => {
    const sync = await import('../stages/sync.js');
    const deliver = () => import('../stages/deliver.js');
    return {
      syncSources: sync.syncSources,
      reconcilePeriod: onFirstCall(
        () => import('../stages/reconcile.js'),
        (m) => m.reconcilePeriod,
      ),
      jsonSummary: onFirstCall(
        () => import('../stages/summary.js'),
        (m) => m.jsonSummary,
      ),
      writeReport: onFirstCall(
        () => import('../stages/report.js'),
        (m) => m.writeReport,
      ),
      // A failed load is not reported here: the stage that needs the module loads it again and fails with the error.
      prefetch: () =>
        void Promise.all([
          import('../stages/reconcile.js'),
          import('../stages/report.js').then((m) => m.loadExcel()),
        ]).catch(() => {}),
      deliverRun: onFirstCall(deliver, (m) => m.deliverRun),
      deliverFailureNotice: onFirstCall(deliver, (m) => m.deliverFailureNotice),
    } satisfies Stages;
  })();
  return loaded;
}
