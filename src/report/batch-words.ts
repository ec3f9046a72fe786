/** A batch's printed lines (`run` on a multi-account config, the demo), in words that cannot contradict each other: a
 * run "completed" when it ran to its end, whatever its breaks; an account is "reconciled" when it also has no
 * unexplained open break. The JSON keeps its statuses (succeeded / failed); these are the sentences around them.
 */
import type { OpenBreakCounts } from '../domain/index.js';
import { accountState, accountStatusText } from './group.js';

/** What the words need of an account's run result (a PipelineResult). */
export interface RunOutcome {
  runId: string;
  status: 'succeeded' | 'failed';
  failedStage?: string;
  error?: string;
  summary: { breakCounts: OpenBreakCounts };
}

/** What "reconciled" counts, said where a count of it could be read as "ran" (docs/accounts.md). */
export const RECONCILED_MEANING = 'reconciled: no unexplained open break';

/**
 * "batch B completed: both accounts ran to the end; 0 of 2 accounts reconciled, 2 with open breaks (reconciled: no
 * unexplained open break)"; "batch B failed: 1 of 3 accounts did not complete (initech); 0 of 3 accounts reconciled, 2
 * with open breaks, 1 failed (...)": whether the runs ended, then the group verdict with what it counts.
 */
export function batchSentence(batch: {
  batchId: string;
  /** completed: the account's run ran to its end (its batch status succeeded). */
  accounts: ReadonlyArray<{ account: string; completed: boolean }>;
  verdict: string | null;
  reportError?: string;
}): string {
  const missing = batch.accounts.filter((a) => !a.completed).map((a) => a.account);
  const all = batch.accounts.length;
  const every = all === 1 ? 'its account' : all === 2 ? 'both accounts' : `all ${all} accounts`;
  const ran = missing.length
    ? `failed: ${missing.length} of ${all} account${all === 1 ? '' : 's'} did not complete (${missing.join(', ')})`
    : `completed: ${every} ran to the end`;
  const verdict = batch.verdict
    ? `${batch.verdict} (${RECONCILED_MEANING})`
    : `no group report${batch.reportError ? ` (${batch.reportError})` : ''}`;
  return `batch ${batch.batchId} ${ran}; ${verdict}`;
}

/**
 * "run R completed: not reconciled: 3 open breaks (2 unexplained)"; "run R completed: reconciled";
 * "run R failed in stage sync.exchange: ...": an account's line, in the group report's words.
 */
export function runOutcomeText(r: RunOutcome): string {
  if (r.status === 'failed') return `run ${r.runId} failed in stage ${r.failedStage}: ${r.error}`;
  const counts = r.summary.breakCounts;
  const text = accountStatusText({ state: accountState('succeeded', counts), counts, failedStage: null, error: null });
  return `run ${r.runId} completed: ${text}`;
}
