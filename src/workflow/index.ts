/** The break workflow (docs/working-breaks.md): what people's changes, a returned workbook's rows and a run's changed
 * figures do to breaks, decided by pure functions and written through the store; re-exported from their files.
 */
export { BreakWorkflowError } from './workflow-error.js';
export type { Change, Decision } from './decision.js';
export { amountsWords, parseAmountsText } from './amounts.js';
export { heldFigures, sameAmounts, acknowledge, unacknowledge, reopening } from './acknowledgement.js';
export { addNote, assignOwner } from './owner-and-notes.js';
export type { ImportAction, RowOutcome } from './returned-row.js';
export { planRow, rowOutcome, actionDecision, filledIn } from './returned-row.js';
export { ack, unack, note, assign, showBreak } from './break-changes.js';
export type { ImportResult } from './import-workbook.js';
export { importReturnedRows } from './import-workbook.js';
export { reopenChangedAcknowledgements } from './reopen.js';
