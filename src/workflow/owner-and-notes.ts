/** What a note and an assignment do to a break's workflow. */
import type { Break, WorkflowRecord } from '../domain/index.js';
import { changeOf, type Decision } from './decision.js';

/** A note is always recorded, on an open or a resolved break (a resolved break keeps its notes and takes new ones). */
export function addNote(b: Break, w: WorkflowRecord | undefined, text: string): Decision {
  return { change: changeOf(b, true, w), write: { set: {}, event: { kind: 'noted', text } } };
}

/** Setting (or with null clearing) the owner; the same owner records nothing. */
export function assignOwner(b: Break, w: WorkflowRecord | undefined, owner: string | null): Decision {
  if ((w?.owner ?? null) === owner) return { change: changeOf(b, false, w), write: null };
  return {
    change: changeOf(b, true, { status: w?.status ?? 'unexplained', owner, explanation: w?.explanation ?? null }),
    write: { set: { owner }, event: { kind: 'assigned', text: owner } },
  };
}
