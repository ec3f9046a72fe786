#!/usr/bin/env node
/** The CLI entry point: registers every command and parses the command line (bad usage exits 2). */
import { Command, CommanderError } from 'commander';
import { commands } from './commands/registry.js';
import { EXIT } from '../errors.js';

const program = new Command('ramp-recon')
  .description('Reconcile partner on-ramp orders with exchange fills, deposits, withdrawals and balances; report to Excel and e-mail.')
  .option('-c, --config <file>', 'JSON config file (default: $RAMP_RECON_CONFIG)')
  .showHelpAfterError()
  .exitOverride();

for (const register of commands) register(program);
for (const command of program.commands) command.exitOverride();

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // --help and --version are not errors; anything else commander rejects is bad usage.
    process.exitCode = err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version' ? EXIT.ok : EXIT.usage;
  } else {
    throw err;
  }
}
