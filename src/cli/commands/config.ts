/** `ramp-recon config`: validates the environment and config file and prints the effective config, secrets masked. */
import { COMMAND_INFO } from './info.js';
import type { Command } from 'commander';
import { action, type GlobalOptions } from '../context.js';
import { loadConfig, maskedConfig } from '../../config/load.js';
import { ConfigError } from '../../errors.js';
import { doctorAction, timeoutOption } from './doctor.js';

export function register(program: Command): void {
  const config = program.command('config').description(COMMAND_INFO['config'].description);
  config
    .command('check')
    .description(
      'validate environment and config file; print the effective config with secrets masked (exit 2 when invalid or ' +
        'incomplete for `run`); --connect also tries every part, as `doctor`',
    )
    .option(
      '--connect',
      'also try the database, both APIs, SMTP and the webhook port (the checks of `ramp-recon doctor`)',
    )
    .option('--timeout-ms <ms>', 'with --connect: time allowed to each check (default 5000)', timeoutOption)
    .action(
      action(async (opts: { connect?: boolean; timeoutMs?: number }, command: Command) => {
        const globals = command.optsWithGlobals<GlobalOptions>();
        if (opts.connect) return doctorAction(globals, { timeoutMs: opts.timeoutMs });
        const effective = loadConfig({ configPath: globals.config });
        const missing: string[] = [];
        if (!effective.partner.apiUrl)
          missing.push(
            'environment variable PARTNER_API_URL: not set (with PARTNER_PUBLIC_KEY and PARTNER_PRIVATE_KEY), needed ' +
              'by `run` and `sync --source partner`',
          );
        if (!effective.exchange.apiUrl)
          missing.push(
            'environment variable EXCHANGE_API_URL: not set (with EXCHANGE_API_TOKEN), needed by `run` and `sync ' +
              '--source exchange`',
          );
        process.stdout.write(`${JSON.stringify(maskedConfig(effective), null, 2)}\n`);
        if (missing.length) throw new ConfigError(missing);
        process.stderr.write('config ok\n');
      }),
    );
}
