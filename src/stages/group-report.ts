/** The group report of a batch: the group workbook (Group summary, then every account's open breaks and balances with
 * an Account column) and the one e-mail per batch to the group's recipients.
 */
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import type { Group } from '../config/load.js';
import type { Store } from '../store/db/database.js';
import type { Logger } from '../log/logger.js';
import {
  loadBatch,
  recordBatchDelivery,
  setBatchReport,
  type AccountStates,
  type BatchInfo,
} from '../store/runs/batches.js';
import { getRun, loadRun } from '../store/runs/runs.js';
import { openBreaksOfRun } from '../store/recon/breaks.js';
import { balanceRollOfRun } from '../store/recon/balance-flows.js';
import { latestBalances } from '../store/report/exchange-sheets.js';
import { usdRateInputs } from '../store/report/usd-rates.js';
import { spanOf } from '../store/db/keyset.js';
import { UsdRates } from '../report/usd-rates.js';
import { BreakIndex, balanceRows, balancesSpec } from '../report/sheets.js';
import { breakRow, breaksSpec, sortBreaks } from '../report/breaks-sheet.js';
import type { Row, SheetSpec } from '../report/cells.js';
import { reportFileMode, writeWorkbook } from '../report/write-workbook.js';
import { partialRun, periodLabel } from '../report/summary.js';
import { groupMessage } from '../report/group-mail.js';
import {
  accountState,
  groupDigest,
  groupSummaryRows,
  groupSummarySpec,
  type GroupAccount,
  type GroupDigest,
} from '../report/group.js';
import { loadPrecision } from './report-reads.js';
import { sendReportMail, type DeliveryResult } from './deliver.js';

export interface GroupDeps {
  store: Store;
  /** The group: its shared settings (reports folder, e-mail) and its accounts. */
  group: Group;
  logger: Logger;
  now: Date;
}

export interface GroupReportWritten {
  path: string;
  digest: GroupDigest;
  sheets: Record<string, number>;
  /** The accounts' statuses the report shows. */
  states: AccountStates;
}

/** `ramp-recon-group_<period label>_<batchId>.xlsx`, beside the accounts' own workbooks. */
export function groupReportFileName(batch: Pick<BatchInfo, 'id' | 'periodFrom' | 'periodTo'>, version = 1): string {
  const amended = version > 1 ? `_v${version}` : '';
  return `ramp-recon-group_${periodLabel(batch.periodFrom, batch.periodTo).replace(' to ', '_to_')}_${batch.id}${amended}.xlsx`;
}

/** The group workbook of the batch as it stands (every account's outcome so far), recorded on the batch row. */
export async function writeGroupReport(
  deps: GroupDeps,
  batchId: string,
  amends?: { version: number; previous: AccountStates | null },
): Promise<GroupReportWritten> {
  const { db } = deps.store;
  const batch = await loadBatch(db, batchId);
  // Each account's exchange balance account; one no longer in the config keeps the default for its Balances rows.
  const exchangeAccounts = new Map(deps.group.accounts.map((a) => [a.name, a.config.exchange.account]));
  const accounts: GroupAccount[] = [];
  const breakRows: Row[] = [];
  const balanceRowList: Row[] = [];
  for (const a of batch.accounts) {
    const row = a.runId ? await getRun(db, a.runId) : undefined;
    const run = row?.period_from ? await loadRun(db, row.id) : null;
    const counts = a.status === 'succeeded' ? (run?.breakCounts ?? null) : null;
    accounts.push({
      account: a.account,
      state: accountState(a.status, counts),
      status: a.status,
      runId: a.runId,
      failedStage: a.failedStage,
      // an account not ended yet (a report sent at the deadline): where it stands
      error:
        a.status === 'running'
          ? `still running${a.worker ? ` on ${a.worker}` : ''} (attempt ${a.attempts})`
          : a.status === 'pending'
            ? `not started${a.error ? `; its last attempt failed: ${a.error}` : ''}`
            : a.error,
      counts,
      digest: a.status === 'succeeded' ? (run?.reportDigest ?? null) : null,
      reportPath: row?.report_path ?? null,
    });
    if (a.status !== 'succeeded' || !run) continue;
    // The account's own Breaks and Balances rows, as its workbook shows them, behind an Account column.
    const span = spanOf({ from: run.periodFrom, to: run.periodTo });
    const exchangeAccount = exchangeAccounts.get(a.account) ?? 'primary';
    const [open, precision, rateInputs, rolls, latest] = await Promise.all([
      openBreaksOfRun(db, run),
      loadPrecision(db, a.account),
      usdRateInputs(db, a.account, exchangeAccount, span),
      balanceRollOfRun(db, run.id),
      latestBalances(db, a.account, exchangeAccount),
    ]);
    const rates = new UsdRates(rateInputs);
    for (const b of sortBreaks(open))
      breakRows.push(withAccount(a.account, breakRow(b, { now: deps.now, precision, usd: rates, late: new Map() })));
    for (const r of balanceRows(rolls, latest, precision, new BreakIndex(open)))
      balanceRowList.push(withAccount(a.account, r));
  }

  const path = join(deps.group.settings.reportsDir, groupReportFileName(batch, amends?.version));
  const digest = groupDigest({
    batchId: batch.id,
    periodFrom: batch.periodFrom,
    periodTo: batch.periodTo,
    partial: partialRun({ periodFrom: batch.periodFrom, periodTo: batch.periodTo, startedAt: batch.startedAt }),
    accounts,
    attachmentName: basename(path),
    now: deps.now,
    version: amends?.version ?? 1,
    changes: amends?.previous ? stateChanges(amends.previous, batch) : [],
  });
  const sheets = await writeWorkbook(
    path,
    [
      { spec: groupSummarySpec, rows: groupSummaryRows(digest, accounts) },
      { spec: accountSheet(breaksSpec, true), rows: breakRows },
      { spec: accountSheet(balancesSpec, false), rows: balanceRowList },
    ],
    { fileMode: reportFileMode(deps.group.settings.reports.fileMode) },
  );
  await setBatchReport(db, batch.id, path, digest);
  deps.logger.info({ batchId, path, verdict: digest.verdict }, 'group report written');
  return { path, digest, sheets, states: Object.fromEntries(batch.accounts.map((a) => [a.account, a.status])) };
}

/** One e-mail per batch to the group's recipients (email.to), with the group workbook when it fits. */
export async function deliverGroupReport(
  deps: GroupDeps,
  batchId: string,
  written: GroupReportWritten,
): Promise<DeliveryResult> {
  const log = deps.logger.child({ stage: 'deliver', batchId });
  const settings = deps.group.settings;
  if (!settings.smtpUrl) {
    log.info('group e-mail skipped: SMTP_URL is not set');
    return { status: 'skipped' };
  }
  const host = hostname();
  const sent = await sendReportMail({
    smtpUrl: settings.smtpUrl,
    from: settings.email.from,
    to: settings.email.to,
    limit: settings.email.maxMessageBytes,
    path: written.path,
    log,
    allowInsecure: settings.allowInsecureHttp,
    secrets: deps.group.secrets,
    mailOf: (notAttached) =>
      groupMessage(written.digest, notAttached ? { reason: notAttached, path: written.path, host } : undefined, {
        path: written.path,
        host,
      }),
  });
  await recordBatchDelivery(
    deps.store.db,
    batchId,
    sent.status === 'sent' ? { delivered: true } : { delivered: false, error: sent.error ?? 'unknown error' },
    deps.group.secrets,
  );
  if (sent.status === 'failed') log.warn({ error: sent.error, path: written.path }, 'group e-mail not sent');
  return sent;
}

/** A table sheet's spec with an Account column first; the fill-in columns stay in each account's own workbook. */
function accountSheet(spec: SheetSpec, readOnly: boolean): SheetSpec {
  return {
    ...spec,
    columns: [
      { header: 'Account', kind: 'text' },
      ...spec.columns.map((c) =>
        readOnly && c.editable ? { ...c, editable: false, choices: undefined, hidden: true } : c,
      ),
    ],
  };
}

/** The row behind an Account cell: its per-cell tones move one column right. */
function withAccount(account: string, row: Row): Row {
  return {
    ...row,
    cells: [account, ...row.cells],
    ...(row.cellTones
      ? { cellTones: Object.fromEntries(Object.entries(row.cellTones).map(([i, t]) => [Number(i) + 1, t])) }
      : {}),
  };
}

/** "initech: running -> succeeded": each account whose status changed since the previous report. */
function stateChanges(previous: AccountStates, batch: BatchInfo): string[] {
  return batch.accounts
    .filter((a) => previous[a.account] !== a.status)
    .map((a) => `${a.account}: ${previous[a.account] ?? 'not in the batch'} -> ${a.status}`);
}
