/**
 * The tests' fixed clock (test/helpers/clock.ts; DESIGN.md "Tests pass on any date"): this file, the sandbox and the
 * children a test starts read one calendar that begins at TEST_CLOCK_START whatever the real date and hour, and
 * every test file starts its sandboxes and children the ways that keep it so.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { realNow } from '../../bench/clock.js';
import { clocked, TEST_CLOCK_START, testClockOffsetMs } from '../helpers/clock.js';
import { startSandbox } from '../helpers/sandbox.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Time this file may take to reach a check, at most (a busy 2-core machine). */
const SLACK_MS = 120_000;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('the tests run on a fixed clock', () => {
  it('starts this file at TEST_CLOCK_START, whatever the real time, and runs on', async () => {
    const now = Date.now();
    expect(now).toBeGreaterThanOrEqual(TEST_CLOCK_START.getTime());
    expect(now).toBeLessThan(TEST_CLOCK_START.getTime() + SLACK_MS);
    expect(new Date().toISOString().slice(0, 10)).toBe('2026-11-25');
    expect(Math.abs(Date.now() - realNow() - testClockOffsetMs())).toBeLessThanOrEqual(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(Date.now() - now).toBeGreaterThanOrEqual(45);
    // Dates are still Dates for the libraries that check.
    expect(new Date(0) instanceof Date).toBe(true);
    expect(Object.prototype.toString.call(new Date())).toBe('[object Date]');
  });

  it('puts a frozen sandbox without a `now` at TEST_CLOCK_START exactly, and a live one at the test clock', async () => {
    const frozen = await startSandbox({ days: 1, ordersPerDay: 2, faults: 'none' });
    try {
      expect(frozen.data.clock()).toBe(TEST_CLOCK_START.getTime());
    } finally {
      await frozen.close();
    }
    const before = Date.now();
    const live = await startSandbox({ days: 1, ordersPerDay: 2, faults: 'none', live: true });
    try {
      expect(live.data.clock()).toBeGreaterThanOrEqual(before);
      expect(live.data.clock()).toBeLessThan(TEST_CLOCK_START.getTime() + SLACK_MS);
    } finally {
      await live.close();
    }
  });

  it("gives a child process the test's clock, moved further by the offset a test asks for", () => {
    const childNow = (env: NodeJS.ProcessEnv) => {
      const run = clocked('-', env);
      // The preload only: the child prints its own Date.now().
      const out = execFileSync(process.execPath, [...run.argv.slice(0, 2), '-p', 'Date.now()'], { env: run.env });
      return Number(out.toString().trim());
    };
    const before = Date.now();
    const plain = childNow({ PATH: process.env.PATH });
    expect(plain).toBeGreaterThanOrEqual(before);
    expect(plain).toBeLessThan(Date.now() + 1_000);
    const day = 86_400_000;
    const moved = childNow({ PATH: process.env.PATH, RAMP_RECON_TEST_CLOCK_OFFSET_MS: String(-day) });
    expect(moved).toBeGreaterThanOrEqual(before - day);
    expect(moved).toBeLessThan(Date.now() - day + 1_000);
  });

  it('has every test file start its sandboxes and node children on the clock (not the reliability suite)', () => {
    const files = filesUnder(join(ROOT, 'test'))
      .filter((f) => /\.(ts|mjs)$/.test(f))
      .map((f) => relative(ROOT, f))
      .filter((f) => !f.startsWith('test/reliability/') && f !== 'test/unit/test-clock.test.ts');
    const direct = files.filter((f) => {
      const text = readFileSync(join(ROOT, f), 'utf8');
      return (
        f !== 'test/helpers/sandbox.ts' &&
        /import \{[^}]*\bstartSandbox(Accounts)?\b[^}]*\} from '[./]*\/sandbox\/index\.js'/.test(text)
      );
    });
    expect(direct, 'start the sandbox through test/helpers/sandbox.ts').toEqual([]);
    const unclocked = files.filter((f) => {
      const text = readFileSync(join(ROOT, f), 'utf8');
      return (
        /\b(spawn|execFile|fork)\(process\.execPath/.test(text) &&
        !/\bclocked\(/.test(text) &&
        f !== 'test/e2e/global-setup.ts'
      );
    });
    expect(unclocked, 'start node children with clocked() (test/helpers/clock.ts) or startCli()').toEqual([]);
  });
});
