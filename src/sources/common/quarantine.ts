/** Quarantine of the records an API sent that failed validation, in the transaction that stores the rest of their
 * response.
 */
import type { Db } from '../../store/db/database.js';
import { quarantineRecords, resolveQuarantined, type QuarantineInput } from '../../store/sync/quarantine.js';

/** Where the records of one response came from: the same for each of them. */
export interface RecordOrigin {
  account: string;
  source: QuarantineInput['source'];
  endpoint: string;
  /** Kind of record (fill, exchange_order, partner_order, webhook_event, ...). */
  entity: string;
  runId?: string | null;
}

/** One record that failed validation, as received. */
export interface BadRecord {
  /** The record's natural id when it could be read (becomes the S_QUARANTINE break key). */
  recordKey: string | null;
  /** Index of the record in its response, when no id could be read. */
  position: number | null;
  rawText: string;
  reason: string;
}

/**
 * Keeps the bad records of one response (raw text and reason) and resolves the earlier entries
 * of `resolvedKeys`, records of the same entity that validate now. Call it with the transaction
 * that stores the response's valid records, so that both land together.
 */
export async function quarantineResponse(
  db: Db,
  origin: RecordOrigin,
  bad: BadRecord[],
  resolvedKeys: string[] = [],
): Promise<void> {
  await quarantineRecords(
    db,
    bad.map((r) => ({ ...origin, ...r })),
  );
  await resolveQuarantined(db, origin.account, origin.entity, resolvedKeys);
}
