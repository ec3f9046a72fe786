/** The break workflow's shapes (docs/working-breaks.md): the figures an acknowledgement accepts, who records a change,
 * a break's workflow row and what a change writes to it, a returned workbook's row. The store reads and writes them,
 * src/workflow/ decides with them, the workbook reader fills ReturnedRow.
 */
import type { Break, WorkflowEventKind, WorkflowStatus } from './break.js';

/** The figures an acknowledgement accepts, as exact text. */
export type Amounts = Pick<Break, 'expected' | 'actual' | 'difference' | 'currency'>;

/** Who records a change and through what: `cli`, or `workbook:<run id>` for a row of a returned workbook. */
export interface Actor {
  by: string;
  source: string;
  /** When (default: now). */
  at?: Date;
}

/** A break's workflow row as stored: where people stand on it, and the figures its acknowledgement accepted. */
export interface WorkflowRecord {
  status: WorkflowStatus;
  owner: string | null;
  explanation: string | null;
  /** The figures when it was acknowledged, kept after a reopen; all null when never acknowledged or taken back. */
  acknowledged: Amounts;
}

/** What a change writes: the fields of the break's workflow row it sets (the others stay), and its event. */
export interface WorkflowWrite {
  set: Partial<WorkflowRecord>;
  /** Recorded with the break's figures of now. */
  event: { kind: WorkflowEventKind; text: string | null };
}

/** One row of a returned Breaks sheet (cells as trimmed text, null when empty). */
export interface ReturnedRow {
  /** The sheet's row number, for messages ("row 12"). */
  row: number;
  code: string;
  key: string;
  /** "Amounts as reported": `expected | actual | difference | currency` when the workbook was written. */
  amounts: string | null;
  owner: string | null;
  explanation: string | null;
  /** "Explained?": yes / no as typed (the import checks the value). */
  explained: string | null;
}
