#!/usr/bin/env node
/** The CLI entry point: registers every command and parses the command line (bad usage exits 2, in one line). */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { commands } from './commands/registry.js';
import { EXIT } from '../errors.js';
import { usageLine } from './usage.js';

/** The package's version, read from the package.json beside dist/ (also present in the Docker image). */
function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

const program = new Command('ramp-recon')
  .description('Reconcile partner on-ramp orders with exchange fills, deposits, withdrawals and balances; report to Excel and e-mail.')
  .version(packageVersion(), '-V, --version', 'print the version and exit')
  .option('-c, --config <file>', 'JSON config file (default: $RAMP_RECON_CONFIG)')
  .option('-q, --quiet', 'log warnings and errors only (overrides LOG_LEVEL)')
  .option('-v, --verbose', 'log debug lines too (overrides LOG_LEVEL)')
  .option('--log-format <format>', 'pretty (default on a terminal) or json (default otherwise)')
  // One line and a hint instead of the whole help (commander's "Did you mean" is kept, on that line).
  .configureOutput({ outputError: (text, write) => write(usageLine(text)) })
  .showSuggestionAfterError(true)
  .exitOverride();

for (const register of commands) register(program);
for (const command of program.commands) command.exitOverride().configureOutput({ outputError: (text, write) => write(usageLine(text, command.name())) });

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
