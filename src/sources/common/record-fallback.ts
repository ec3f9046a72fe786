/** The last line of defence of a page write: a page the database refuses is written again record by record, each refused record quarantined with the database's reason. */
import { inTransaction, type Db } from '../../store/database.js';

/**
 * SQLSTATE classes of a value or row the database refuses: 22 data exception (out of range,
 * overflow, bad encoding, invalid datetime), 23 integrity constraint, 54 program limit (an index
 * row too large). Anything else (a lost connection, a deadlock, a syntax error) is not a record's
 * fault and is thrown as it is.
 */
export function isRecordRefusal(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(22|23|54)[0-9A-Z]{3}$/.test(code);
}

/** The database's reason for refusing a record, in words, with its SQLSTATE. */
export function refusalReason(err: unknown): string {
  const e = err as { code?: string; message?: string; column?: string; detail?: string };
  const column = e.column ? ` (column ${e.column})` : '';
  const detail = e.detail ? `; ${e.detail}` : '';
  return `the database refused the record${column}: ${e.message ?? String(err)}${detail} (SQLSTATE ${e.code})`;
}

export interface Refused<T> {
  item: T;
  reason: string;
}

/**
 * Writes a page with `whole` (its usual statement or transaction). If the database refuses it
 * for a record's content (isRecordRefusal), each item is written again in a transaction of its
 * own with `one`; the items refused again are returned with the database's reason, and `finish`
 * runs in one last transaction with what was kept and what was refused (quarantine, coverage,
 * cursors). The caller quarantines the refused ones there, so the sync goes on. Returns null
 * when the whole page was written at once.
 */
export async function writeOrSplit<T>(
  db: Db,
  items: T[],
  whole: () => Promise<unknown>,
  one: (trx: Db, item: T) => Promise<unknown>,
  finish: (trx: Db, kept: T[], refused: Array<Refused<T>>) => Promise<void>,
): Promise<{ kept: T[]; refused: Array<Refused<T>> } | null> {
  try {
    await whole();
    return null;
  } catch (err) {
    if (!isRecordRefusal(err)) throw err;
  }
  const kept: T[] = [];
  const refused: Array<Refused<T>> = [];
  for (const item of items) {
    try {
      await inTransaction(db, (trx) => one(trx, item));
      kept.push(item);
    } catch (err) {
      if (!isRecordRefusal(err)) throw err;
      refused.push({ item, reason: refusalReason(err) });
    }
  }
  await inTransaction(db, (trx) => finish(trx, kept, refused));
  return { kept, refused };
}
