/** `ramp-recon config`: validates the environment and config file and prints the effective config, secrets masked. */
import { COMMAND_INFO } from './info.js';
import type { Command } from 'commander';
import { action, type GlobalOptions } from '../context.js';
import { loadGroup, maskedConfig } from '../../config/load.js';
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
        const group = loadGroup({ configPath: globals.config });
        const multi = group.settings.multiAccount;
        const missing: string[] = [];
        // Several accounts: each account's variables (prefixed by its name), each problem naming the account.
        for (const { config: c, variables, name } of group.accounts) {
          const { partner, exchange } = variables;
          const of = multi ? ` (account ${name})` : '';
          if (!c.partner.apiUrl)
            missing.push(
              `environment variable ${partner.url}: not set (with ${partner.publicKey} and ${partner.privateKey}), ` +
                `needed by \`run\` and \`sync --source partner\`${of}`,
            );
          if (!c.exchange.apiUrl)
            missing.push(
              `environment variable ${exchange.url}: not set (with ${exchange.token}), needed by \`run\` and ` +
                `\`sync --source exchange\`${of}`,
            );
        }
        const configs = group.accounts.map((a) => a.config);
        const shown = multi ? { accounts: configs.map(maskedConfig) } : maskedConfig(configs[0]!);
        process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
        if (missing.length) throw new ConfigError(missing);
        process.stderr.write('config ok\n');
      }),
    );
}
