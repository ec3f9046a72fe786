/** The sync stage: every source (src/sources/registry.ts) in its order, each run the same way and recorded as its own
 * stage `sync.<source>`.
 */
import type { StageContext, StageRunner } from './context.js';
import {
  SOURCES,
  type Source,
  type SourceClient,
  type SourceEnv,
  type SourceName,
  type SyncRequest,
  type SyncResult,
} from '../sources/index.js';

export { SyncAbortedError } from '../sources/index.js';
export type { SyncRequest, SyncResult } from '../sources/index.js';

/** One source's sync: syncSource, or a stand-in (tests make one slow or failing). */
export type SyncOne = (ctx: StageContext, source: Source, request: SyncRequest) => Promise<SyncResult>;

/**
 * Syncs the sources the request names (default: all) one after another, in the order of SOURCES, each as the stage
 * `sync.<source>` of the run: its time, its recorded figures, its failure tagged with its name. A failed source stops
 * the sync: what it committed is kept, and the next sync resumes from its cursors.
 */
export async function syncSources(
  ctx: StageContext,
  request: SyncRequest,
  stage: StageRunner,
  sync: SyncOne = syncSource,
): Promise<void> {
  for (const source of SOURCES) {
    if (request.sources && !request.sources.includes(source.name)) continue;
    await stage(
      syncStageName(source.name),
      () => sync(ctx, source, request),
      (r) => r.recorded,
    );
  }
}

export function syncStageName(source: SourceName): string {
  return `sync.${source}`;
}

/**
 * One source's sync: the environment from the stage context, the client (built, and closed at the end, unless the
 * caller injects one), then the source's plan step by step. Every write is an idempotent upsert stored with its
 * cursor, so a re-run changes nothing; ctx.signal stops it between pages (SyncAbortedError).
 */
export async function syncSource<Client extends SourceClient, State, Figures extends object>(
  ctx: StageContext,
  source: Source<Client, State, Figures>,
  request: SyncRequest,
  deps: { client?: Client; progressMode?: 'log' | 'off' } = {},
): Promise<SyncResult<Figures>> {
  const env: SourceEnv = {
    db: ctx.store.db,
    account: ctx.config.account,
    runId: ctx.runId,
    now: ctx.now,
    signal: ctx.signal,
    config: ctx.config,
    logger: ctx.logger.child({ source: source.name }),
    meter: ctx.meter,
    parallelWrites: ctx.store.kind === 'postgres',
    progressMode: deps.progressMode,
  };
  const client = deps.client ?? source.connect(env);
  try {
    const state = await source.open(env, client, request);
    try {
      for (const step of source.plan(state, request)) await step.run(state);
      return await source.finish(state);
    } catch (err) {
      throw source.failed(state, err);
    }
  } finally {
    if (!deps.client) await client.close();
  }
}
