#!/usr/bin/env node
/** The CLI entry point: registers every command and parses the command line (bad usage exits 2, in one line). */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { COMMAND_MODULES } from './commands/registry.js';
import { COMMAND_INFO, type CommandName } from './commands/info.js';
import { EXIT } from '../errors.js';
import { usageLine } from './usage.js';

/** The package's version, read from the package.json beside dist/ (also present in the Docker image). */
function packageVersion(): string {
  try {
    return (
      (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string })
        .version ?? 'unknown'
    );
  } catch {
    return 'unknown';
  }
}

// `ramp-recon runs | head`: a reader that stops early is not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

const program = new Command('ramp-recon')
  .description(
    'Reconcile partner on-ramp orders with exchange fills, deposits, withdrawals and balances; report to Excel and ' +
      'e-mail.',
  )
  .version(packageVersion(), '-V, --version', 'print the version and exit')
  .option('-c, --config <file>', 'JSON config file (default: $RAMP_RECON_CONFIG)')
  .option('-q, --quiet', 'log warnings and errors only (overrides LOG_LEVEL)')
  .option('-v, --verbose', 'log debug lines too (overrides LOG_LEVEL)')
  .option('--log-format <format>', 'pretty (default on a terminal) or json (default otherwise)')
  // One line and a hint instead of the whole help (commander's "Did you mean" is kept, on that line).
  .configureOutput({ outputError: (text, write) => write(usageLine(text)) })
  .showSuggestionAfterError(true)
  .exitOverride();

/**
 * The command the line names: the first word that is not an option (or the value of a global
 * option), and for `help <command>` that command. Only its module is loaded.
 */
function namedCommand(argv: string[]): CommandName | null {
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (a === '-c' || a === '--config' || a === '--log-format') i++;
    else if (!a.startsWith('-')) words.push(a);
    if (words.length === 2) break;
  }
  const name = words[0] === 'help' ? words[1] : words[0];
  return name !== undefined && Object.hasOwn(COMMAND_INFO, name) ? (name as CommandName) : null;
}

const named = namedCommand(process.argv.slice(2));
if (named) {
  (await COMMAND_MODULES[named]()).register(program);
} else {
  // The root --help, --version, or an unknown command: every command by name and description, none loaded.
  for (const [name, info] of Object.entries(COMMAND_INFO))
    program.command(`${name}${info.args ? ` ${info.args}` : ''}`).description(info.description);
}
for (const command of program.commands)
  command.exitOverride().configureOutput({ outputError: (text, write) => write(usageLine(text, command.name())) });

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // --help and --version are not errors; anything else commander rejects is bad usage.
    process.exitCode =
      err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version'
        ? EXIT.ok
        : EXIT.usage;
  } else {
    throw err;
  }
}
