/** `ramp-recon report [runId]`: writes a run's workbook (default: the latest finished run or reconcile) and prints its path. */
import type { Command } from 'commander';
import { ConfigError, EXIT } from '../../errors.js';
import type { Db } from '../../store/database.js';
import { getRun, latestFinishedReconcile } from '../../store/runs.js';
import { loadStages } from '../../pipeline/load-stages.js';
import { action, createContext, openMigratedStore } from '../context.js';

export function register(program: Command): void {
  program
    .command('report')
    .description('write the Excel workbook of a run to REPORTS_DIR (default: the latest run that reconciled) and print its path')
    .argument('[runId]', 'run id, as `ramp-recon runs` lists it (default: the latest finished run or reconcile)')
    .option('--json', 'print {"runId","path","sheets"} on stdout instead of the path')
    .action(
      action(async (runIdArg: string | undefined, opts: { json?: boolean }, command: Command) => {
        const { config, logger } = createContext(command);
        const store = await openMigratedStore(config, logger);
        try {
          const runId = runIdArg ?? (await latestReconciledRun(store.db, config.account));
          await requireRun(store.db, config.account, runId);
          const ctx = { store, config, logger: logger.child({ runId }), runId, now: new Date() };
          const { writeReport } = await loadStages();
          const result = await writeReport(ctx, runId);
          process.stdout.write(opts.json ? `${JSON.stringify({ runId, path: result.path, sheets: result.sheets })}\n` : `${result.path}\n`);
          return EXIT.ok;
        } finally {
          await store.close();
        }
      }),
    );
}

/** The newest run or reconcile that is no longer running: what "the report" means without an id. */
export async function latestReconciledRun(db: Db, account: string): Promise<string> {
  const runId = await latestFinishedReconcile(db, account);
  if (runId === null) throw new ConfigError(['no run or reconcile has finished yet: `ramp-recon run` first (or give a run id)']);
  return runId;
}

export async function requireRun(db: Db, account: string, runId: string): Promise<void> {
  const run = await getRun(db, runId);
  if (!run || run.account !== account)
    throw new ConfigError([`run id ${JSON.stringify(runId)}: no such run${run ? ` for account ${account}` : ''} (\`ramp-recon runs\` lists them)`]);
}
