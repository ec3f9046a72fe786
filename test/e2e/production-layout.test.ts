import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, childEnv, runCli } from './helpers.js';

/**
 * The CLI as the production image lays it out (Dockerfile: dist/src, sql/, package.json and the dependencies, without
 * the simulator nor the bench): the bundle (scripts/bundle.mjs) finds its sql/ and package.json from where it is, loads
 * the packages it leaves out from node_modules, and does not carry the simulator in its chunks.
 */
describe('the bundled CLI in the production layout', { timeout: 60_000 }, () => {
  let dir = '';
  let cli = '';

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rr-prod-layout-'));
    cpSync(join(ROOT, 'dist', 'src'), join(dir, 'dist', 'src'), { recursive: true });
    cpSync(join(ROOT, 'sql'), join(dir, 'sql'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    writeFileSync(join(dir, 'config.json'), '{}');
    cli = join(dir, 'dist', 'src', 'cli', 'main.js');
  });

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is one bundle: its own modules are in it, not imported from beside it', () => {
    const main = readFileSync(cli, 'utf8');
    expect(main.startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(main).toContain('./chunks/');
    expect(main).not.toContain("from './commands/registry.js'");
  });

  it('prints the version of the package.json beside it', async () => {
    const r = await runCli(['--version'], childEnv({}), dir, cli);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(
      (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
    );
  });

  it('opens and migrates the embedded database (sql/ found, PGlite loaded from node_modules)', async () => {
    const env = childEnv({ RAMP_RECON_CONFIG: join(dir, 'config.json'), RAMP_RECON_DATA_DIR: join(dir, 'data') });
    const r = await runCli(['runs'], env, dir, cli);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('no runs yet');
    expect(r.stderr).toContain('database migrated');
  });

  it('does not carry the simulator: `sandbox` says so and exits 2', async () => {
    const r = await runCli(['sandbox', '--port', '0'], childEnv({}), dir, cli);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the sandbox is not part of this installation');
  });
});
