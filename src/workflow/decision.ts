/** What a decision of the workflow returns: the change as the commands report it, and what to write (null: the break
 * already stood so, nothing is recorded).
 */
import type { Break, WorkflowRecord, WorkflowStatus, WorkflowWrite } from '../domain/index.js';

/** What a change did: false when the break already stood so (nothing recorded). */
export interface Change {
  changed: boolean;
  code: string;
  key: string;
  workflow: { status: WorkflowStatus; owner: string | null; explanation: string | null };
}

export interface Decision {
  change: Change;
  write: WorkflowWrite | null;
}

/** The change reported for break `b`, standing as `w` (no row: nobody worked on it). */
export const changeOf = (
  b: Pick<Break, 'code' | 'key'>,
  changed: boolean,
  w: Pick<WorkflowRecord, 'status' | 'owner' | 'explanation'> | undefined,
): Change => ({
  changed,
  code: b.code,
  key: b.key,
  workflow: {
    status: w?.status === 'explained' ? 'explained' : 'unexplained',
    owner: w?.owner ?? null,
    explanation: w?.explanation ?? null,
  },
});
