/** Config files for the tests, and the problems a config error lists. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/errors.js';

/** Writes `body` as a JSON config file in a folder of its own; returns its path. */
export function writeConfig(body: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'rr-config-'));
  const path = join(dir, 'config.json');
  writeFileSync(path, JSON.stringify(body));
  return path;
}

/** The problems of the ConfigError `fn` throws; any other outcome fails the test. */
export function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}
