/** `ramp-recon report [runId] [--detail] [--csv DIR]`: writes a run's workbook and detail folder (default: the latest
 * finished run or reconcile), the full detail workbook and CSV files if asked, and prints their paths.
 */
import { COMMAND_INFO } from './info.js';
import type { Command } from 'commander';
import { ConfigError, EXIT } from '../../errors.js';
import type { Db } from '../../store/db/database.js';
import { getRun, latestFinishedReconcile } from '../../store/runs/runs.js';
import { accountOption, action, createContext, openMigratedStore } from '../context.js';

export function register(program: Command): void {
  accountOption(program.command('report'), 'the account whose run (needed when the config has several)', true)
    .description(COMMAND_INFO['report'].description)
    .argument('[runId]', 'run id, as `ramp-recon runs` lists it (default: the latest finished run or reconcile)')
    .option(
      '--csv <dir>',
      'also write one CSV file per sheet but the Summary into <dir> (created if needed): same rows as the workbook, ' +
        'exact amounts, ISO 8601 UTC times',
    )
    .option(
      '--detail',
      'also write the full detail workbook (every record of the period, sheets continued in parts beyond ' +
        "Excel's row limit) into the run's detail folder",
    )
    .option(
      '--json',
      'print {"runId","path","sheets","detail"} (and "csv": the CSV paths) on stdout instead of the paths',
    )
    .action(
      action(async (runIdArg: string | undefined, opts: ReportFlags, command: Command) => {
        const { config, logger } = createContext(command, { one: true });
        const store = await openMigratedStore(config, logger);
        try {
          const runId = runIdArg ?? (await latestReconciledRun(store.db, config.account));
          await requireRun(store.db, config.account, runId);
          const ctx = { store, config, logger: logger.child({ runId }), runId, now: new Date() };
          if (opts.csv !== undefined && opts.csv.trim() === '') throw new ConfigError(['--csv needs a folder']);
          // loaded on use, like the pipeline's stages: commands that write no workbook never load exceljs
          const { writeReport } = await import('../../stages/report.js');
          const result = await writeReport(ctx, runId, {
            ...(opts.csv === undefined ? {} : { csvDir: opts.csv }),
            ...(opts.detail ? { detail: true } : {}),
          });
          const csv = result.csv?.map((f) => f.path);
          const detail = {
            dir: result.detail.dir,
            files: result.detail.files.map((f) => ({ sheet: f.sheet, path: f.path, rows: f.rows, bytes: f.bytes })),
            ...(result.detail.workbook ? { workbook: result.detail.workbook.path } : {}),
          };
          if (opts.json)
            process.stdout.write(
              `${JSON.stringify({ runId, account: config.account, path: result.path, sheets: result.sheets, detail, ...(csv ? { csv } : {}) })}\n`,
            );
          else
            process.stdout.write(
              [result.path, detail.dir, ...(detail.workbook ? [detail.workbook] : []), ...(csv ?? [])]
                .map((p) => `${p}\n`)
                .join(''),
            );
          return EXIT.ok;
        } finally {
          await store.close();
        }
      }),
    );
}

interface ReportFlags {
  json?: boolean;
  csv?: string;
  detail?: boolean;
}

/** The newest run or reconcile that is no longer running: what "the report" means without an id. */
export async function latestReconciledRun(db: Db, account: string): Promise<string> {
  const runId = await latestFinishedReconcile(db, account);
  if (runId === null)
    throw new ConfigError(['no run or reconcile has finished yet: `ramp-recon run` first (or give a run id)']);
  return runId;
}

export async function requireRun(db: Db, account: string, runId: string): Promise<void> {
  const run = await getRun(db, runId);
  if (!run || run.account !== account)
    throw new ConfigError([
      `run id ${JSON.stringify(runId)}: no such run${run ? ` for account ${account}` : ''} (\`ramp-recon runs\` lists them)`,
    ]);
}
