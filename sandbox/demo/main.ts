#!/usr/bin/env node
/** `npm run demo`: the sandbox and two pipeline runs in one process, offline. */
/**
 * `npm run demo`: the whole product on a fresh machine, offline, in one process. Starts the
 * sandbox (both APIs on localhost, planted discrepancies, live activity), runs the pipeline twice
 * on the embedded database in ./data/demo (so the balance roll-forward has two snapshots), writes
 * the workbook to reports/, prints where it is and the headline figures, and shuts down.
 */
import { periodLabel } from '../../src/report/summary.js';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { loadConfig, secretValues } from '../../src/config/load.js';
import { openStore } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';
import { createLogger } from '../../src/log/logger.js';
import { runPipeline, type PipelineResult } from '../../src/pipeline/run.js';
import { startSandbox } from '../index.js';
import { installSignalHandlers } from '../../src/schedule/signals.js';
import { addDays, toDay } from '../../src/util/dates.js';

/** Small enough to finish in well under a minute on a laptop, big enough to fill every sheet. */
const DEMO = { seed: 20261122, days: 4, ordersPerDay: 16, fillsPerOrder: 2 } as const;
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
  const sandbox = await startSandbox({
    seed: DEMO.seed,
    days: DEMO.days,
    ordersPerDay: DEMO.ordersPerDay,
    fillsPerOrder: DEMO.fillsPerOrder,
    discrepancies: true,
    live: true,
  });
  out(`sandbox: Partner and Exchange APIs at ${sandbox.url}, ${sandbox.expectedBreaks().length} planted discrepancies`);
  const abort = new AbortController();
  try {
    const configPath = join(dataDir, 'config.json');
    // The sandbox's orders satisfy its partner fee rate exactly: configuring it turns P_PARTNER_FEE_RATE on.
    writeFileSync(
      configPath,
      `${JSON.stringify({ partner: { feeRate: sandbox.partnerFeeRate ?? '0.01' } }, null, 2)}\n`,
    );
    const config = loadConfig({
      env: {
        ...sandbox.env,
        RAMP_RECON_DATA_DIR: dataDir,
        REPORTS_DIR: process.env.REPORTS_DIR,
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      },
      configPath,
      cwd,
    });
    const logger = createLogger({ level: config.logLevel, secrets: secretValues(config) });
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

      const runOnce = async (label: string): Promise<PipelineResult> => {
        const started = Date.now();
        const result = await runPipeline(
          { store, config, logger },
          { period, trigger: 'demo', email: false, signal: abort.signal },
        );
        out(
          `${label}: run ${result.runId} ${result.status} in ${((Date.now() - started) / 1000).toFixed(1)}s, ${result.openBreaks} open breaks`,
        );
        if (result.status === 'failed') out(`  failed in stage ${result.failedStage}: ${result.error}`);
        return result;
      };

      const first = await runOnce('run 1');
      if (first.status === 'failed') return 1;
      // Live activity: the sandbox moves on (stamped up to now), and the second run's balance snapshot closes the roll-forward.
      sandbox.advance(ADVANCE_MS);
      const second = await runOnce('run 2');
      if (second.status === 'failed') return 1;

      printHeadline(out, second, sandbox.expectedBreaks(), cwd);
      return 0;
    } finally {
      uninstall();
      await store.close();
    }
  } finally {
    await sandbox.close();
  }
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
  const found = new Set(s.breaks.map((b) => `${b.code} ${b.key}`));
  // P_WEBHOOK_GAP needs the webhook receiver configured, which the demo does not run.
  const checkable = planted.filter((p) => !p.requires);
  const caught = checkable.filter((p) => found.has(`${p.code} ${p.key}`));
  out();
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
  out(
    `  by rule: ${[...byCode.entries()]
      .sort()
      .map(([c, n]) => `${c} ${n}`)
      .join(', ')}`,
  );
  out(
    `planted discrepancies caught: ${caught.length} of ${checkable.length}${
      caught.length < checkable.length
        ? ` (missed: ${checkable
            .filter((p) => !caught.includes(p))
            .map((p) => `${p.code} ${p.key}`)
            .join(', ')})`
        : ''
    }`,
  );
  const needWebhooks = planted.filter((p) => p.requires === 'webhooks');
  if (needWebhooks.length)
    out(
      `  (${needWebhooks.map((p) => p.code).join(', ')} also planted: checked only with the webhook receiver configured, which the demo does not run)`,
    );
  out('The Breaks sheet of the workbook lists every open break with its age, expected, actual and difference.');
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
