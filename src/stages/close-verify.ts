/** `ramp-recon verify <closeId>` (docs/closing.md "Verify"): the digest recomputed from the records as they stand,
 * every record changed since the sign-off field by field, and whether the signed workbook's bytes are the ones signed.
 */
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Store } from '../store/db/database.js';
import { inTransaction } from '../store/db/database.js';
import { spanOf } from '../store/db/keyset.js';
import { cursorPages, differingRecords, evidenceDigest, inUtc } from '../store/workflow/close-records.js';
import { getClose, type CloseRecord } from '../store/workflow/closes.js';
import { EVIDENCE_STREAMS, recordChanges, type RecordChange } from '../domain/evidence.js';
import { ConfigError } from '../errors.js';
import { sha256File } from '../report/sign-off.js';
import { placeIfSigned } from './close.js';

export interface Verification {
  close: CloseRecord;
  /** The digest of the records as they stand, under the close's ruleset version and config hash. */
  digest: string;
  unchanged: boolean;
  changes: RecordChange[];
  /** The signed workbook: its bytes as signed, changed, or gone. */
  workbook: 'unchanged' | 'changed' | 'missing';
}

export async function verifyClose(store: Store, closeId: string): Promise<Verification> {
  const close = await getClose(store.db, closeId);
  if (!close)
    throw new ConfigError([`close id ${JSON.stringify(closeId)}: no such close (\`ramp-recon closes\` lists them)`]);
  const span = spanOf(close.period);
  const context = { rulesetVersion: close.rulesetVersion, configHash: close.configHash };
  const { digest, changes } = await inTransaction(store.db, async (trx) => {
    await inUtc(trx);
    const now = await evidenceDigest(trx, { account: close.account, span }, context);
    const found: RecordChange[] = [];
    if (now.digest !== close.digest)
      for (const stream of EVIDENCE_STREAMS)
        for await (const page of cursorPages(trx, differingRecords(close.id, stream, close.account, span)))
          for (const r of page) found.push(...recordChanges(stream, r.id, r.before, r.after));
    return { digest: now.digest, changes: found };
  });
  await placeInterruptedWorkbook(close);
  const sha = await sha256File(close.workbook).catch(() => null);
  return {
    close,
    digest,
    unchanged: digest === close.digest,
    changes,
    workbook: sha === null ? 'missing' : sha === close.workbookSha256 ? 'unchanged' : 'changed',
  };
}

/**
 * A close killed after its commit left its workbook under its temporary name (stages/close.ts), linked into place or
 * not yet: put it in place when its bytes are the ones signed and remove the temporary name, so the close stands whole
 * without waiting for the account's next `close`. Anything else is left to that close's clean-up.
 */
async function placeInterruptedWorkbook(close: CloseRecord): Promise<void> {
  const dir = dirname(close.workbook);
  const prefix = `${basename(close.workbook)}.`;
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.startsWith(prefix) && n.endsWith('.partial')))
    await placeIfSigned(join(dir, name), close.workbook, close.workbookSha256);
}
