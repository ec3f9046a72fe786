/** `ramp-recon doctor`: validates what `run` and `schedule` use, then tries each part for real, one line per check
 * (exit 0 / 2).
 */
import { COMMAND_INFO } from './info.js';
import type { Command } from 'commander';
import { EXIT } from '../../errors.js';
import { action, type GlobalOptions } from '../context.js';
import { loadGroup } from '../../config/load.js';
import { formatChecks, runDoctor } from '../doctor.js';
import { plural } from '../../util/words.js';

/** Parses --timeout-ms: a whole number of milliseconds, 100 to 120000. */
export function timeoutOption(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 100 || n > 120_000)
    throw new Error(`--timeout-ms: expected whole milliseconds from 100 to 120000 (got ${JSON.stringify(value)})`);
  return n;
}

/** Runs every check and prints them; shared by `doctor` and `config check --connect`. */
export async function doctorAction(
  globals: GlobalOptions,
  opts: { json?: boolean; timeoutMs?: number },
): Promise<number> {
  const group = loadGroup({ configPath: globals.config });
  const results = await runDoctor(group, { timeoutMs: opts.timeoutMs });
  const failed = results.filter((r) => r.status === 'fail');
  if (opts.json) process.stdout.write(`${JSON.stringify({ ok: failed.length === 0, checks: results }, null, 2)}\n`);
  else
    process.stdout.write(
      `${formatChecks(results)}\n${failed.length ? `${plural(failed.length, 'problem')}: ${failed.map((f) => f.part).join(', ')}` : 'all checks passed'}\n`,
    );
  return failed.length ? EXIT.usage : EXIT.ok;
}

export function register(program: Command): void {
  program
    .command('doctor')
    .description(COMMAND_INFO['doctor'].description)
    .option('--json', 'print {"ok", "checks": [{part, status, text, fix, ms}]} on stdout')
    .option('--timeout-ms <ms>', 'time allowed to each check (default 5000)', timeoutOption)
    .action(
      action(async (opts: { json?: boolean; timeoutMs?: number }, command: Command) => {
        return doctorAction(command.optsWithGlobals<GlobalOptions>(), opts);
      }),
    );
}
