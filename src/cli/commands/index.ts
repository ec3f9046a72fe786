import type { Command } from 'commander';
import { register as migrate } from './migrate.js';
import { register as config } from './config.js';

/** Every command, in the order `--help` lists them. Each module owns one command. */
export const commands: Array<(program: Command) => void> = [migrate, config];
