/** The stage contract: the I/O handles every stage (sync, reconcile, report, deliver) receives. */
import type { Config } from '../config/load.js';
import type { Store } from '../store/db/database.js';
import type { Logger } from '../log/logger.js';
import type { RequestMeter } from '../http/meter.js';

/**
 * What every stage (sync, reconcile, report, deliver) receives. IO handles are passed in,
 * never global, so the CLI, the scheduler and the tests call the same functions.
 */
export interface StageContext {
  store: Store;
  config: Config;
  logger: Logger;
  /** The run this stage belongs to (rows it writes can point at it); null outside a run. */
  runId: string | null;
  /** The run's start time: staleness and "up to now" are measured from it. */
  now: Date;
  signal?: AbortSignal;
  /** Counts the run's API requests per endpoint; the sync stages hand it to the clients they build. */
  meter?: RequestMeter;
  /**
   * Every secret of the account's group (`Group.secrets`), masked in whatever the stage records or sends: one
   * account's run may quote another's key (a shared gateway's answer). Absent: the account's own (runSecrets()).
   */
  secrets?: readonly string[];
}

/** A stage over one stored run (report, deliver): the context, the run's id and the stage's options. */
export type RunStage<O, R> = (ctx: StageContext, runId: string, options?: O) => Promise<R>;

/**
 * How the orchestrator runs one named part of a run (pipeline/execute.ts): timing recorded in run.stages with the
 * small `detail` of its result, failure tagged with the part's name. The sync stage records each source so.
 */
export type StageRunner = <R>(name: string, fn: () => Promise<R>, detail?: (result: R) => unknown) => Promise<R>;
