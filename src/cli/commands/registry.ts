/** Every CLI command's module, loaded on demand: only the command being run is imported (the root --help imports none).
 *
 */
import type { Command } from 'commander';
import type { CommandName } from './info.js';

export interface CommandModule {
  register(program: Command): void;
}

/** Each command's module; `--help` lists them in COMMAND_INFO's order. Each module owns one command. */
export const COMMAND_MODULES: Record<CommandName, () => Promise<CommandModule>> = {
  run: () => import('./run.js'),
  sync: () => import('./sync.js'),
  reconcile: () => import('./reconcile.js'),
  report: () => import('./report.js'),
  deliver: () => import('./deliver.js'),
  schedule: () => import('./schedule.js'),
  worker: () => import('./worker.js'),
  enqueue: () => import('./enqueue.js'),
  runs: () => import('./runs.js'),
  breaks: () => import('./breaks.js'),
  close: () => import('./close.js'),
  verify: () => import('./verify.js'),
  reopen: () => import('./reopen.js'),
  closes: () => import('./closes.js'),
  'serve-webhooks': () => import('./serve-webhooks.js'),
  migrate: () => import('./migrate.js'),
  config: () => import('./config.js'),
  doctor: () => import('./doctor.js'),
  sandbox: () => import('./sandbox.js'),
};
