/** The last line of defence of a page write: a page the database refuses is written again record by record, each
 * refused record quarantined with the database's reason.
 */
import { inTransaction, type Db } from '../../store/db/database.js';
import { inSavepoint } from '../../store/sync/savepoints.js';
import { markSnapshotIncomplete, saveReferenceSnapshot, type SnapshotResult } from '../../store/sync/snapshots.js';

type SnapshotInput = Parameters<typeof saveReferenceSnapshot>[1];

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

export interface Split<T> {
  kept: T[];
  refused: Array<Refused<T>>;
  /**
   * The database's reason for refusing the head (savepoints mode): then no item was written and all are in `refused`.
   */
  headRefused: string | null;
}

export interface SplitOptions {
  /**
   * Write the items again in ONE transaction, each inside a savepoint of its own, after `head`
   * (a snapshot's header row, which the items refer to), then `finish` in that same transaction:
   * header, kept items and quarantine commit together or not at all, as the whole write would
   * have. For snapshots: a reference snapshot whose header committed without its rows would read
   * "unchanged" at the next fetch and never be written again. Without it each item gets a
   * transaction of its own (pages whose records stand alone and whose cursor finish moves).
   */
  savepoints?: { head?: (trx: Db) => Promise<void> };
}

/**
 * Writes a page with `whole` (its usual statement or transaction). If the database refuses it
 * for a record's content (isRecordRefusal), each item is written again with `one`, in a
 * transaction of its own or inside a savepoint (options.savepoints); the items refused again are
 * returned with the database's reason, and `finish` runs with what was kept and what was refused
 * (quarantine, coverage, cursors) in one last transaction. The caller quarantines the refused
 * ones there, so the sync goes on. Anything else (a lost database) is thrown as it is. Returns
 * null when the whole page was written at once.
 */
export async function writeOrSplit<T>(
  db: Db,
  items: T[],
  whole: () => Promise<unknown>,
  one: (trx: Db, item: T) => Promise<unknown>,
  finish: (trx: Db, kept: T[], refused: Array<Refused<T>>, headRefused: string | null) => Promise<void>,
  options: SplitOptions = {},
): Promise<Split<T> | null> {
  try {
    await whole();
    return null;
  } catch (err) {
    if (!isRecordRefusal(err)) throw err;
  }
  if (options.savepoints) {
    const { head } = options.savepoints;
    return inTransaction(db, async (trx) => {
      const headReason = head ? await refusedInSavepoint(trx, () => head(trx)) : null;
      const kept: T[] = [];
      const refused: Array<Refused<T>> = [];
      for (const item of items) {
        // Without its header no item can be written: each is refused with the header's reason.
        const reason = headReason ?? (await refusedInSavepoint(trx, () => one(trx, item)));
        if (reason === null) kept.push(item);
        else refused.push({ item, reason });
      }
      await finish(trx, kept, refused, headReason);
      return { kept, refused, headRefused: headReason };
    });
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
  await inTransaction(db, (trx) => finish(trx, kept, refused, null));
  return { kept, refused, headRefused: null };
}

/**
 * Runs `write` inside a savepoint of the transaction: null when it was written, the database's
 * reason when it refused it (rolled back to the savepoint, the transaction goes on). Anything
 * but a refusal is thrown, and fails the transaction.
 */
async function refusedInSavepoint(trx: Db, write: () => Promise<unknown>): Promise<string | null> {
  try {
    await inSavepoint(trx, write);
    return null;
  } catch (err) {
    if (!isRecordRefusal(err)) throw err;
    return refusalReason(err);
  }
}

/**
 * Writes a snapshot's header with its body as received; if the database refuses that body (a
 * record that failed validation may hold what jsonb cannot, such as \u0000) and `storable` is
 * given (the body without those records, each kept in quarantine as received), with that one
 * instead: the valid rows then still have their header.
 */
export async function headWithStorableBody<R>(
  trx: Db,
  body: string,
  storable: string | undefined,
  write: (bodyText: string) => Promise<R>,
): Promise<R> {
  if (storable === undefined || storable === body) return write(body);
  try {
    return await inSavepoint(trx, () => write(body));
  } catch (err) {
    if (!isRecordRefusal(err)) throw err;
    return write(storable);
  }
}

/**
 * A reference snapshot (saveReferenceSnapshot: stored only when its content changed) with its
 * detail rows, through writeOrSplit in savepoints mode: a row the database refuses is left out
 * and handed to `quarantine` with the database's reason, the others commit with the snapshot,
 * which is marked incomplete (markSnapshotIncomplete) so that the next fetch tries the refused
 * rows again. When the database refuses the snapshot itself (its body), `quarantine` gets that
 * reason as `headRefused` and no row is written. `quarantine` runs last in the snapshot's
 * transaction, once, with no refusals when everything was written at once.
 */
export async function writeSnapshot<T>(
  db: Db,
  input: {
    snapshot: SnapshotInput;
    /** The body without the records validation refused, when there were some (headWithStorableBody). */
    storableBodyText?: string;
    items: T[];
    insert: (trx: Db, snapshotId: string, items: T[]) => Promise<unknown>;
    quarantine: (trx: Db, refused: Array<Refused<T>>, headRefused: string | null) => Promise<void>;
  },
): Promise<{ changed: boolean; refused: Array<Refused<T>>; headRefused: string | null }> {
  let snap: SnapshotResult | null = null;
  const head = async (trx: Db) => {
    snap = null;
    snap = await headWithStorableBody(trx, input.snapshot.bodyText, input.storableBodyText, (bodyText) =>
      saveReferenceSnapshot(trx, { ...input.snapshot, bodyText }),
    );
  };
  const split = await writeOrSplit(
    db,
    input.items,
    () =>
      inTransaction(db, async (trx) => {
        await head(trx);
        if (snap!.changed) await input.insert(trx, snap!.id, input.items);
        await input.quarantine(trx, [], null);
      }),
    async (trx, item) => {
      if (snap!.changed) await input.insert(trx, snap!.id, [item]);
    },
    async (trx, _kept, refused, headRefused) => {
      if (snap && refused.length && headRefused === null)
        await markSnapshotIncomplete(trx, (snap as SnapshotResult).id);
      await input.quarantine(trx, refused, headRefused);
    },
    { savepoints: { head } },
  );
  const written = snap as SnapshotResult | null;
  return { changed: written?.changed ?? false, refused: split?.refused ?? [], headRefused: split?.headRefused ?? null };
}
