/** A period close (docs/closing.md), under the account's run lock (pipeline/close.ts). The signed workbook is written under a
 * temporary name first, one transaction then writes the close, its records and its audit row, and only then is the
 * workbook renamed into place: a close exists whole or not at all, and a workbook is never rewritten.
 */
import { link, mkdir, readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Config } from '../config/load.js';
import { stampedId } from '../util/ids.js';
import type { Logger } from '../log/logger.js';
import type { Store } from '../store/db/database.js';
import { inTransaction } from '../store/db/database.js';
import { spanOf } from '../store/db/keyset.js';
import { openBreaksOfRun } from '../store/recon/breaks.js';
import { evidenceDigest, inUtc, keepSignedRecords } from '../store/workflow/close-records.js';
import {
  getClose,
  insertClose,
  lastReconcileOf,
  overlappingSignedClose,
  unjudgedRecords,
  type ClosedBreak,
  type CloseRecord,
} from '../store/workflow/closes.js';
import { appendAudit } from '../store/workflow/audit-log.js';
import type { Period } from '../domain/period.js';
import { AppError, ConfigError, EXIT } from '../errors.js';
import { partialPath } from '../report/partials.js';
import { sha256File, writeSignedWorkbook } from '../report/sign-off.js';
import { reportFileMode } from '../report/write-workbook.js';
import { periodLabel } from '../report/summary.js';

export interface CloseRequest {
  period: Period;
  by: string;
  note: string | null;
}

/** What `close --json` prints for an account. */
export interface CloseResult {
  closeId: string;
  account: string;
  period: Period;
  digest: string;
  workbook: string;
  workbookSha256: string;
  by: string;
  at: string;
}

/** A close refused for its period or the data's state: one line, exit 2. */
export class CloseRefused extends ConfigError {
  constructor(account: string, reason: string) {
    super([`close of account ${account}: ${reason}`]);
  }
}

/** The sign-off folder beside the reports. */
export function signedDir(config: Config): string {
  return join(config.reportsDir, 'signed');
}

function signedName(account: string, period: Period, closeId: string): string {
  return `ramp-recon_${periodLabel(period.from, period.to).replace(' to ', '_to_')}_${account}_signed_${closeId}.xlsx`;
}

/** What a close takes: the store, the account's config, the logger, the request and the time of the sign-off. */
export interface CloseCall {
  store: Store;
  config: Config;
  logger: Logger;
  request: CloseRequest;
  now: Date;
}

/** Signs off the period; the caller holds the account's run lock (pipeline/close.ts). */
export async function closeLocked({ store, config, logger, request, now }: CloseCall): Promise<CloseResult> {
  const { db } = store;
  const account = config.account;
  const { period } = request;
  const span = spanOf(period);
  const label = periodLabel(period.from, period.to);
  await finishLeftovers(store, config, logger);

  const signed = await overlappingSignedClose(db, account, period);
  if (signed)
    throw new CloseRefused(
      account,
      `the period overlaps close ${signed.id} (${periodLabel(signed.period.from, signed.period.to)}, signed by ${signed.by}); reopen it first`,
    );
  const reconcile = await lastReconcileOf(db, account, period);
  const runFirst = `run \`ramp-recon reconcile --from ${period.from} --to ${period.to}\` first`;
  if (!reconcile)
    throw new CloseRefused(account, `the period ${label} was never reconciled as one period; ${runFirst}`);
  const unjudged = await unjudgedRecords(db, account, span);
  if (unjudged > 0)
    throw new CloseRefused(
      account,
      `${unjudged} record(s) of the period changed since its last reconcile; ${runFirst}`,
    );

  const context = { rulesetVersion: reconcile.rulesetVersion, configHash: reconcile.configHash };
  const evidence = await inTransaction(db, async (trx) => {
    await inUtc(trx);
    return evidenceDigest(trx, { account, span }, context);
  });
  const breaks: ClosedBreak[] = (
    await openBreaksOfRun(db, { id: reconcile.id, account, periodFrom: period.from, periodTo: period.to })
  )
    .filter((b) => b.inPeriod)
    .map((b) => ({
      code: b.code,
      key: b.key,
      severity: b.severity,
      firstSeenAt: b.firstSeenAt,
      explained: b.workflow.status === 'explained',
      owner: b.workflow.owner,
      lastNote: b.workflow.lastNote,
    }));

  const closeId = stampedId('c', now);
  const dir = signedDir(config);
  await mkdir(dir, { recursive: true });
  const workbook = join(dir, signedName(account, period, closeId));
  const temp = partialPath(workbook);
  const ctx = { store, config, logger: logger.child({ closeId }), runId: reconcile.id, now };
  const { writeReport } = await import('../stages/report.js');
  const report = await writeReport(ctx, reconcile.id);
  const sha = await writeSignedWorkbook(
    report.path,
    temp,
    { closeId, account, period: label, by: request.by, at: now, note: request.note, digest: evidence.digest },
    reportFileMode(config.reports.fileMode),
  );
  const close: CloseRecord = {
    id: closeId,
    account,
    period,
    by: request.by,
    at: now,
    note: request.note,
    runId: reconcile.id,
    digest: evidence.digest,
    records: evidence.records,
    ...context,
    workbook,
    workbookSha256: sha,
    state: 'signed',
    reopenedBy: null,
    reopenedAt: null,
    reopenReason: null,
  };
  try {
    await inTransaction(db, async (trx) => {
      await inUtc(trx);
      await insertClose(trx, close, breaks);
      await keepSignedRecords(trx, closeId, account, span);
      const kept = await evidenceDigest(trx, { closeId }, context);
      if (kept.digest !== evidence.digest)
        throw new AppError(
          'CLOSE_RACE',
          `close of account ${account}: records of the period changed while it was being signed; try again`,
          EXIT.failed,
        );
      await appendAudit(
        trx,
        {
          actor: request.by,
          action: 'close',
          subject: closeId,
          payload: {
            account,
            period,
            note: request.note,
            digest: evidence.digest,
            workbookSha256: sha,
            breaks: breaks.length,
          },
        },
        now,
      );
    });
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  await placeWorkbook(temp, workbook);
  logger.info({ closeId, account, digest: evidence.digest, records: evidence.records, workbook }, 'period signed off');
  return {
    closeId,
    account,
    period,
    digest: evidence.digest,
    workbook,
    workbookSha256: sha,
    by: request.by,
    at: now.toISOString(),
  };
}

/** Renames the temporary workbook to its name, never over an existing file (link fails on one). */
async function placeWorkbook(temp: string, workbook: string): Promise<void> {
  await link(temp, workbook);
  await rm(temp, { force: true });
}

const LEFTOVER = /^(.*_signed_(c[0-9TZ]+-[0-9a-f]+)\.xlsx)\.[A-Za-z0-9-]+\.partial$/;

/**
 * What a close killed after its commit or before it left in the sign-off folder: a committed close's workbook is
 * put in place (its SHA-256 checked), any other temporary workbook of the account is removed. Runs under the
 * account's run lock, so no close of the account is writing one now.
 */
export async function finishLeftovers(store: Store, config: Config, logger: Logger): Promise<void> {
  const dir = signedDir(config);
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const m = LEFTOVER.exec(name);
    if (!m || !m[1]!.includes(`_${config.account}_signed_`)) continue;
    const temp = join(dir, name);
    const close = await getClose(store.db, m[2]!);
    if (
      close &&
      close.account === config.account &&
      (await placeIfSigned(temp, join(dir, m[1]!), close.workbookSha256))
    )
      logger.info(
        { closeId: close.id, workbook: basename(m[1]!) },
        'put the signed workbook of an interrupted close in place',
      );
    else {
      await rm(temp, { force: true });
      logger.info({ removed: temp }, 'removed the temporary workbook of an interrupted close');
    }
  }
}

/**
 * Puts a temporary workbook whose bytes are the signed ones in place, unless the workbook is there already (link never
 * replaces a file), and removes the temporary name; false, touching nothing, when its bytes differ. `close` and
 * `verify` finish an interrupted close with it.
 */
export async function placeIfSigned(temp: string, workbook: string, sha256: string): Promise<boolean> {
  if ((await sha256File(temp).catch(() => null)) !== sha256) return false;
  await link(temp, workbook).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  await rm(temp, { force: true });
  return true;
}
