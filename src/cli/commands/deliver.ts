import type { Command } from 'commander';
import { ConfigError, EXIT } from '../../errors.js';
import type { Db } from '../../store/database.js';
import { recordStage } from '../../store/runs.js';
import { loadStages } from '../../pipeline/load-stages.js';
import { action, createContext, openMigratedStore } from '../context.js';
import { requireRun } from './report.js';

export function register(program: Command): void {
  program
    .command('deliver')
    .description("e-mail a run's workbook (retries a failed delivery); needs SMTP_URL, email.from and email.to")
    .argument('<runId>', 'run id, as `ramp-recon runs` lists it')
    .addHelpText('after', '\nExit codes: 0 sent, 1 the send failed (the run stays undelivered), 2 bad usage, SMTP not configured or unknown run id')
    .action(
      action(async (runId: string, _opts: unknown, command: Command) => {
        const { config, logger } = createContext(command);
        if (!config.smtpUrl) throw new ConfigError(['environment variable SMTP_URL: required to deliver (with email.from and email.to in the config file)']);
        const store = await openMigratedStore(config, logger);
        try {
          await requireRun(store.db, config.account, runId);
          const { deliverRun } = await loadStages();
          const started = new Date();
          const result = await deliverRun({ store, config, logger: logger.child({ runId }), runId, now: new Date() }, runId);
          if (result.status === 'sent') {
            await completeRedeliveredRun(store.db, runId, started);
            process.stdout.write(`run ${runId} delivered to ${config.email.to.join(', ')}\n`);
            return EXIT.ok;
          }
          process.stderr.write(`ramp-recon: failed:\n  run ${runId} not delivered: ${result.error ?? result.status}\n`);
          return EXIT.failed;
        } finally {
          await store.close();
        }
      }),
    );
}

/**
 * A run whose only failure was the e-mail is complete once the e-mail is sent: its status
 * becomes succeeded, so `runs` and the next morning's reader see it as done.
 */
async function completeRedeliveredRun(db: Db, runId: string, startedAt: Date): Promise<void> {
  const updated = await db
    .updateTable('run')
    .set({ status: 'succeeded', failed_stage: null, error: null })
    .where('id', '=', runId)
    .where('status', '=', 'failed')
    .where('failed_stage', '=', 'deliver')
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) await recordStage(db, runId, 'deliver', { startedAt, finishedAt: new Date(), status: 'succeeded', detail: { retried: true } });
}
