#!/usr/bin/env node
/** `npm run demo`: the sandbox with two accounts and two nightly batches in one process, offline. */
/**
 * `npm run demo`: the whole product on a fresh machine, offline, in one process. Starts the
 * sandbox (both APIs on localhost for two accounts of a group, acme and globex, each with its own
 * data and planted discrepancies, live activity), runs the batch of both accounts twice on the
 * embedded database in ./data/demo (so the balance roll-forward has two snapshots), writes each
 * account's workbook and the group workbook to reports/, prints where they are and the headline
 * figures, and shuts down.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
// The product through its public entry point, the simulator through its own (docs/architecture.md, "Import rules").
import {
  addDays,
  batchSentence,
  createLogger,
  installSignalHandlers,
  loadGroup,
  migrate,
  openStore,
  periodLabel,
  runBatch,
  runOutcomeText,
  stakePhrase,
  toDay,
  type BatchResult,
  type PipelineResult,
} from '../../src/index.js';
import { startSandboxAccounts } from '../index.js';

/** Small enough to finish in well under a minute on a laptop, big enough to fill every sheet. */
const DEMO = { seed: 20261122, days: 4, ordersPerDay: 16, fillsPerOrder: 2 } as const;
/** The group's two accounts: two brands, each with its own partner organisation and exchange login. */
const ACCOUNTS = ['acme', 'globex'] as const;
/** Sandbox time that passes between the two runs (new fills, deposits, state changes). */
const ADVANCE_MS = 30 * 60_000;

async function main(): Promise<number> {
  const cwd = process.cwd();
  // The demo's own database folder, wiped at each start; a user's ./data is never touched.
  const dataDir = resolve(cwd, process.env.RAMP_RECON_DEMO_DATA_DIR ?? join('data', 'demo'));
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });

  const out = (line = '') => process.stdout.write(`${line}\n`);
  out('ramp-recon demo: starting the sandbox (simulated Partner and Exchange APIs on localhost) ...');
  const sandbox = await startSandboxAccounts({
    seed: DEMO.seed,
    days: DEMO.days,
    ordersPerDay: DEMO.ordersPerDay,
    fillsPerOrder: DEMO.fillsPerOrder,
    discrepancies: true,
    live: true,
    accounts: ACCOUNTS.map((name) => ({ name })),
  });
  const planted = (name: string) => sandbox.accounts[name]!.expectedBreaks();
  out(
    `sandbox: Partner and Exchange APIs at ${sandbox.url} for two accounts of a group: ${ACCOUNTS.map((n) => `${n} (${planted(n).length} planted discrepancies)`).join(', ')}`,
  );
  const abort = new AbortController();
  try {
    const configPath = join(dataDir, 'config.json');
    // The sandbox's orders satisfy its partner fee rate exactly: configuring it turns P_PARTNER_FEE_RATE on.
    writeFileSync(
      configPath,
      `${JSON.stringify(
        { accounts: ACCOUNTS.map((name) => ({ name, partner: { feeRate: sandbox.accounts[name]!.partnerFeeRate } })) },
        null,
        2,
      )}\n`,
    );
    const group = loadGroup({
      env: {
        // each account's URLs and keys, prefixed by its name (ACME_PARTNER_API_URL, ...)
        ...sandbox.env,
        RAMP_RECON_DATA_DIR: dataDir,
        REPORTS_DIR: process.env.REPORTS_DIR,
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      },
      configPath,
      cwd,
    });
    const logger = createLogger({ level: group.settings.logLevel, secrets: group.secrets });
    const uninstall = installSignalHandlers({
      logger,
      graceful: 'stopping at the next safe point; what is committed is kept and the next run resumes from it',
      onGraceful: (signal) => abort.abort(new Error(`interrupted by ${signal}`)),
    });

    out(`creating the embedded database in ${relative(cwd, dataDir) || '.'} (demo only; wiped at the next demo) ...`);
    const store = await openStore({ dataDir });
    try {
      await migrate(store);
      const today = toDay(new Date());
      // The sandbox's whole history plus today's live activity.
      const period = { from: addDays(today, -DEMO.days), to: addDays(today, 1) };
      out(`period: ${periodLabel(period.from, period.to)}`);

      // One batch: every account's own run (run row, lock, cursors, breaks), then the group workbook.
      const batchOnce = async (label: string): Promise<BatchResult> => {
        const started = Date.now();
        const batch = await runBatch({ store, group, logger }, group.accounts, {
          period,
          trigger: 'demo',
          email: false,
          signal: abort.signal,
        });
        for (const r of batch.runs) {
          const result = r.result;
          out(`${label}: account ${r.account}: ${result ? runOutcomeText(result) : `did not run: ${r.error}`}`);
        }
        // the same sentence `ramp-recon run` prints: "completed" (every account ran) is not "reconciled"
        const sentence = batchSentence({
          batchId: batch.batchId,
          accounts: batch.runs.map((r) => ({ account: r.account, completed: r.result?.status === 'succeeded' })),
          verdict: batch.report?.digest.verdict ?? null,
          reportError: batch.reportError,
        });
        out(`${label}: ${sentence}; took ${((Date.now() - started) / 1000).toFixed(1)}s`);
        return batch;
      };

      const first = await batchOnce('run 1');
      if (first.status === 'failed') return 1;
      // Live activity: the sandbox moves on (stamped up to now), and the second batch's balance snapshots close the
      // roll-forward.
      for (const name of ACCOUNTS) sandbox.accounts[name]!.advance(ADVANCE_MS);
      // Why the second run finds more: said before it, so the two counts do not read as a contradiction.
      out(
        `run 2: ${ADVANCE_MS / 60_000} minutes of sandbox activity later; its second balance snapshot lets the balance roll-forward (E_BALANCE_ROLL) be checked, which one snapshot cannot`,
      );
      const second = await batchOnce('run 2');
      if (second.status === 'failed') return 1;

      // The first account in full (its workbook, summary and planted cases), the second in brief, then the group.
      const [main, other] = second.runs;
      printHeadline(out, main!.result!, planted(main!.account), cwd);
      const o = other!.result!;
      const caught = caughtOf(o, planted(other!.account));
      out();
      out(
        `account ${other!.account}: workbook ${relative(cwd, o.reportPath ?? '')}, ${o.openBreaks} open breaks, planted discrepancies caught: ${caught.caught} of ${caught.of}`,
      );
      out(
        `group workbook: ${relative(cwd, second.report?.path ?? '') || second.report?.path} (${second.report?.digest.verdict}; its Group summary has every account, its Breaks and Balances sheets every account's rows)`,
      );
      return 0;
    } finally {
      uninstall();
      await store.close();
    }
  } finally {
    await sandbox.close();
  }
}

/** The planted discrepancies the run could check, and how many of them it found. */
function caughtOf(
  result: PipelineResult,
  planted: Array<{ code: string; key: string; requires?: string }>,
): { caught: number; of: number; missed: string[] } {
  const found = new Set(result.summary.breaks.map((b) => `${b.code} ${b.key}`));
  // P_WEBHOOK_GAP needs the webhook receiver configured, which the demo does not run.
  const checkable = planted.filter((p) => !p.requires);
  const missed = checkable.filter((p) => !found.has(`${p.code} ${p.key}`)).map((p) => `${p.code} ${p.key}`);
  return { caught: checkable.length - missed.length, of: checkable.length, missed };
}

function printHeadline(
  out: (line?: string) => void,
  result: PipelineResult,
  planted: Array<{ code: string; key: string; requires?: string }>,
  cwd: string,
): void {
  const s = result.summary;
  const bySeverity = { high: 0, medium: 0, low: 0 } as Record<string, number>;
  const byCode = new Map<string, number>();
  for (const b of s.breaks) {
    bySeverity[b.severity] = (bySeverity[b.severity] ?? 0) + 1;
    byCode.set(b.code, (byCode.get(b.code) ?? 0) + 1);
  }
  const caught = caughtOf(result, planted);
  out();
  out(`account ${result.summary.account}:`);
  out(`workbook: ${relative(cwd, result.reportPath ?? '') || result.reportPath}`);
  if (result.detailDir)
    out(`detail:   ${relative(cwd, result.detailDir) || result.detailDir} (every record, gzip CSV)`);
  // The same JSON summary `ramp-recon run --json` prints, beside the workbook, so its counts can be compared.
  if (result.reportPath) {
    const jsonPath = result.reportPath.replace(/\.xlsx$/, '.summary.json');
    writeFileSync(jsonPath, `${JSON.stringify(s, null, 2)}\n`);
    out(`summary:  ${relative(cwd, jsonPath) || jsonPath}`);
  }
  out(`period:   ${s.period.from && s.period.to ? periodLabel(s.period.from, s.period.to) : 'none'}`);
  out(
    `counts:   ${Object.entries(s.counts)
      .map(([k, v]) => `${k} ${String(v)}`)
      .join(', ')}`,
  );
  out(
    `open breaks: ${s.breaks.length} (${bySeverity.high ?? 0} high, ${bySeverity.medium ?? 0} medium, ${bySeverity.low ?? 0} low)`,
  );
  if (s.moneyAtStake) out(`money at stake: ${stakePhrase(s.moneyAtStake)}`);
  out(
    `  by rule: ${[...byCode.entries()]
      .sort()
      .map(([c, n]) => `${c} ${n}`)
      .join(', ')}`,
  );
  out(
    `planted discrepancies caught: ${caught.caught} of ${caught.of}${caught.missed.length ? ` (missed: ${caught.missed.join(', ')})` : ''}`,
  );
  const needWebhooks = planted.filter((p) => p.requires === 'webhooks');
  if (needWebhooks.length)
    out(
      `  (the demo checks ${caught.of} of the ${planted.length} planted: ${needWebhooks.map((p) => p.code).join(', ')} is checked only with the webhook receiver configured, which the demo does not run)`,
    );
  out(
    "The workbook's Breaks sheet lists every open break: what happened, expected, actual and difference in their unit, USD impact and age.",
  );
}

main()
  .then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`demo failed: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  )
  .finally(() => {
    // Everything is closed; a keep-alive socket or timer left by a library must not keep the demo hanging.
    setTimeout(() => process.exit(), 2_000).unref();
  });
