/** `ramp-recon deliver <runId>`: e-mails a run's workbook again, completing a run whose only failure was the e-mail. */
import { COMMAND_INFO } from './info.js';
import type { Command } from 'commander';
import { ConfigError, EXIT } from '../../errors.js';
import { completeRedeliveredRun } from '../../store/runs/runs.js';
import { loadStages } from '../../pipeline/load-stages.js';
import { accountOption, action, createContext, openMigratedStore } from '../context.js';
import { requireRun } from './report.js';

export function register(program: Command): void {
  accountOption(program.command('deliver'), 'the account whose run (needed when the config has several)', true)
    .description(COMMAND_INFO['deliver'].description)
    .argument('<runId>', 'run id, as `ramp-recon runs` lists it')
    .option('--no-attachment', 'send the message without the workbook (it says where the workbook is)')
    .addHelpText(
      'after',
      '\nExit codes: 0 sent, 1 the send failed (the run stays undelivered), 2 bad usage, SMTP not configured or ' +
        'unknown run id',
    )
    .action(
      action(async (runId: string, opts: { attachment: boolean }, command: Command) => {
        const { group, config, logger } = createContext(command, { one: true });
        if (!config.smtpUrl)
          throw new ConfigError([
            'environment variable SMTP_URL: required to deliver (with email.from and email.to in the config file)',
          ]);
        const store = await openMigratedStore(config, logger);
        try {
          await requireRun(store.db, config.account, runId);
          const { deliverRun } = await loadStages();
          const started = new Date();
          const result = await deliverRun(
            { store, config, logger: logger.child({ runId }), runId, now: new Date(), secrets: group.secrets },
            runId,
            { attach: opts.attachment },
          );
          if (result.status === 'sent') {
            await completeRedeliveredRun(store.db, runId, started);
            const without = result.withoutWorkbook ? ` without the workbook: ${result.withoutWorkbook}` : '';
            process.stdout.write(`run ${runId} delivered to ${config.email.to.join(', ')}${without}\n`);
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
