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

/**
 * "batch B completed: every account ran; 0 of 2 accounts reconciled, 2 with open breaks";
 * "batch B failed: 1 of 3 accounts did not complete (initech); 0 of 3 accounts reconciled, 2 with open breaks, 1 failed".
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
  const ran = missing.length
    ? `failed: ${missing.length} of ${all} account${all === 1 ? '' : 's'} did not complete (${missing.join(', ')})`
    : `completed: ${all === 1 ? 'its account' : 'every account'} ran`;
  const verdict = batch.verdict ?? `no group report${batch.reportError ? ` (${batch.reportError})` : ''}`;
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
