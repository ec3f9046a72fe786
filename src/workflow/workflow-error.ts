/** What the break workflow refuses, each in one line (exit 2): the error itself, an unknown break, an empty text. */
import { AppError, EXIT } from '../errors.js';

/** A workflow request that cannot be done (unknown break, resolved break, empty reason...): exit 2, one line. */
export class BreakWorkflowError extends AppError {
  constructor(message: string) {
    super('BREAK_WORKFLOW', message, EXIT.usage);
  }
}

export const describeBreak = (code: string, key: string) => `break ${code} ${key}`;

export function unknownBreak(account: string, code: string, key: string): BreakWorkflowError {
  return new BreakWorkflowError(
    `unknown ${describeBreak(code, key)}: no such break in account ${account} ` +
      '(`ramp-recon breaks list --status all` lists them)',
  );
}

/** The text trimmed; an empty one is refused, naming what it is ("the reason", "the note", "the owner"). */
export function required(what: string, text: string | null | undefined): string {
  const t = (text ?? '').trim();
  if (!t) throw new BreakWorkflowError(`${what} must not be empty`);
  return t;
}
