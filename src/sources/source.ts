/** The one shape of every API the product syncs: what the sync stage sees of the partner, the exchange, a third. */
import type { Config } from '../config/load.js';
import type { Db } from '../store/db/database.js';
import type { Logger } from '../log/logger.js';
import type { RequestMeter } from '../http/meter.js';
import type { Period, StreamReach } from '../domain/index.js';

export type SourceName = 'exchange' | 'partner';

/** What the sync stage hands every source: the run's I/O handles and clock, built once from the stage context. */
export interface SourceEnv {
  db: Db;
  account: string;
  /** The run the rows point at; null outside a run. */
  runId: string | null;
  /** The run's start: "up to now" of every listing, the time every pass of this run begins after. */
  now: Date;
  signal?: AbortSignal;
  /** The account's settings. */
  config: Config;
  /** The run's logger, with `source` set. */
  logger: Logger;
  /** Counts the run's API requests per endpoint. */
  meter?: RequestMeter;
  /** Two page transactions may write at once (a pooled server; PGlite has one session). */
  parallelWrites: boolean;
  /** Progress lines; default: log lines, more often on a terminal ('off': silent, for tests). */
  progressMode?: 'log' | 'off';
}

/** What a command asks of the sync. Each source reads its part and ignores the others'. */
export interface SyncRequest {
  /** The sources to sync, in the sync's order whatever the order here; default: all. */
  sources?: readonly SourceName[];
  /** The days of the partner's order listings (`run`: the period and its look-back); null: no day listed. */
  period: Period | null;
  /** Exchange: also read this time range again (no cursor moves). */
  backfill?: { from: Date; to: Date };
  /** Partner: fetch only the orders with these external references (no day or wallet listing). */
  externalReferences?: readonly string[];
  /** Partner: only the wallet listings, each over the wallet's whole history. */
  walletsOnly?: boolean;
  /** Partner: list every day of the period, also a day whose stored listing is final (`sync --relist`). */
  relist?: boolean;
  /** Partner: read every wallet's whole history again (`sync --wallet-history`). */
  walletHistory?: boolean;
}

/** What one source's sync returns, whichever the source. */
export interface SyncResult<Figures extends object = object> {
  source: SourceName;
  /** The few figures run.stages keeps for the source's stage (the partner's orders, the exchange's counts). */
  recorded: Record<string, unknown>;
  /** Everything the sync counted, in the source's own terms (pages, rows, coverage per stream, cursors). */
  figures: Figures;
}

/** A source's HTTP client: whatever its calls, the sync stage closes it when it built it. */
export interface SourceClient {
  close(): Promise<void>;
}

/**
 * One step of a sync: it pages one stream (or a few read side by side) through the client, validates each page
 * (schemas.ts), transforms its records to rows (transform.ts) and stores them with the stream's cursor and coverage in
 * one transaction, so an interrupted sync resumes where it stopped.
 */
export interface SyncStep<State> {
  /** What the step reads ('fills', 'days and wallets'): its progress and timing are named so. */
  name: string;
  run(state: State): Promise<void>;
}

/**
 * An API as the sync stage sees it (src/stages/sync.ts runs each the same way): connect, open a sync, run the steps of
 * its plan in order, finish; and, for reconcile, how far each of its coverage streams is read.
 * `State` is what the steps of one sync share (the environment plus the source's counters and bookkeeping).
 */
export interface Source<Client extends SourceClient = SourceClient, State = unknown, Figures extends object = object> {
  /** Its stage in the run table, the logs and the failure report is `sync.<name>`. */
  readonly name: SourceName;
  /** Its coverage streams, as domain/record-kinds.ts names them after `<name>:` ('fills', 'orders'). */
  readonly streams: readonly string[];
  /** Its HTTP client, built from the account's settings (auth, rate limits, the run's meter). */
  connect(env: SourceEnv): Client;
  /** Begins one sync: the state its steps share (logs that it started, reads what it needs first). */
  open(env: SourceEnv, client: Client, request: SyncRequest): Promise<State>;
  /** Plan: the steps of this sync, in the order they run; a step may read what an earlier one left in the state. */
  plan(state: State, request: SyncRequest): Array<SyncStep<State>>;
  /** After the last step: its result (and its closing log line); what it throws goes through `failed` too. */
  finish(state: State): Promise<SyncResult<Figures>>;
  /** A step failed: the error to record (the progress stopped, an abort named as such). */
  failed(state: State, error: unknown): unknown;
  /** How far each stream is read, for reconcile's S_COVERAGE of the days no coverage row settles. */
  reach(db: Db, account: string, period: Period): Promise<StreamReach[]>;
}
