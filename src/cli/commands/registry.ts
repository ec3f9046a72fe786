/** Every CLI command's registration, in `--help` order. */
import type { Command } from 'commander';
import { register as migrate } from './migrate.js';
import { register as config } from './config.js';
import { register as sandbox } from './sandbox.js';
import { register as run } from './run.js';
import { register as sync } from './sync.js';
import { register as reconcile } from './reconcile.js';
import { register as report } from './report.js';
import { register as deliver } from './deliver.js';
import { register as schedule } from './schedule.js';
import { register as runs } from './runs.js';
import { register as breaks } from './breaks.js';
import { register as serveWebhooks } from './serve-webhooks.js';
import { register as doctor } from './doctor.js';

/** Every command, in the order `--help` lists them. Each module owns one command. */
export const commands: Array<(program: Command) => void> = [run, sync, reconcile, report, deliver, schedule, runs, breaks, serveWebhooks, migrate, config, doctor, sandbox];
