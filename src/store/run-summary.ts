import { sql } from 'kysely';
import type { Db } from './database.js';
import { parseRunRequests, type RunRequests } from '../http/meter.js';
import { jsonNumber } from '../decimal/json.js';
import { getRun } from './runs.js';
import type { RunCounts } from './counts.js';

export interface JsonSummaryBreak {
  code: string;
  key: string;
  severity: string;
  currency: string | null;
  expected: string | null;
  actual: string | null;
  difference: string | null;
  status: string;
  firstSeenRun: string;
  lastSeenRun: string;
}

/** The `--json` document (DESIGN.md "JSON summary"). */
export interface JsonSummary {
  runId: string;
  status: string;
  period: { from: string | null; to: string | null };
  counts: RunCounts;
  /** The API requests the run made, per API and endpoint (run.requests, src/http/meter.ts). */
  requests: RunRequests;
  /** Every open break of the account, whatever run found it first. */
  breaks: JsonSummaryBreak[];
  report: string | null;
}

const COUNT_KEYS: (keyof RunCounts)[] = ['partnerOrders', 'fills', 'exchangeOrders', 'deposits', 'withdrawals', 'balanceSnapshots', 'quarantined'];

/** run.counts comes back through the lossless JSON parser: numbers are LosslessNumber objects. */
function readCounts(raw: unknown): RunCounts {
  const obj = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const counts = {} as RunCounts;
  for (const k of COUNT_KEYS) {
    counts[k] = jsonNumber(obj[k]) ?? 0;
  }
  return counts;
}

export class RunNotFoundError extends Error {
  readonly code = 'RUN_NOT_FOUND';
  constructor(runId: string) {
    super(`run ${runId} not found`);
    this.name = 'RunNotFoundError';
  }
}

export async function jsonSummary(db: Db, account: string, runId: string): Promise<JsonSummary> {
  const run = await getRun(db, runId);
  if (!run) throw new RunNotFoundError(runId);
  const rows = await db
    .selectFrom('break')
    .select(['code', 'key', 'severity', 'currency', 'expected', 'actual', 'difference', 'status', 'first_seen_run', 'last_seen_run'])
    .where('account', '=', account)
    .where('status', '=', 'open')
    // high, medium, low; then a stable order for diffs between runs
    .orderBy(sql`case severity when 'high' then 0 when 'medium' then 1 when 'low' then 2 else 3 end`)
    .orderBy('code')
    .orderBy('key')
    .execute();
  return {
    runId: run.id,
    status: run.status,
    period: { from: run.period_from, to: run.period_to },
    counts: readCounts(run.counts),
    requests: parseRunRequests(run.requests),
    breaks: rows.map((r) => ({
      code: r.code,
      key: r.key,
      severity: r.severity,
      currency: r.currency,
      expected: r.expected,
      actual: r.actual,
      difference: r.difference,
      status: r.status,
      firstSeenRun: r.first_seen_run,
      lastSeenRun: r.last_seen_run,
    })),
    report: run.report_path,
  };
}
