/**
 * The tests' clock (DESIGN.md: "Tests pass on any date: the sandbox in tests runs on a fixed clock"). Every test file
 * starts at TEST_CLOCK_START, whatever the date and hour of the run, and its clock runs on from there
 * (test/helpers/clock-setup.ts installs it before each file, through bench/clock.ts's shifted Date): the sandbox's
 * records, the product run in the test's process, "today" in a test, and the CLI children of test/e2e/helpers.ts
 * (test/e2e/clock-preload.mjs) all read one calendar. The product itself keeps the real clock: nothing in src/ reads
 * this.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { clockOffset, realNow, setClockOffset } from '../../bench/clock.js';

/**
 * A fixed instant. Noon UTC: a test has hours of its own day before and after it, whatever it does with "today".
 * After every fixed `now` the tests give the sandbox (the latest: 2026-11-23), so those days lie in the past as they
 * did when they were chosen; before the day this clock was fixed (2026-11-28), so the test clock never runs ahead of
 * the real one (files a test writes carry real times, and the product compares them with its clock).
 */
export const TEST_CLOCK_START = new Date('2026-11-25T12:00:00Z');

/** Sets this process's clock to TEST_CLOCK_START; it runs on from there. */
export function startTestClock(): void {
  setClockOffset(TEST_CLOCK_START.getTime() - realNow());
}

/**
 * This process's clock from here on is the real one: for a test whose product reads the database server's clock,
 * which no test can move (pg-boss stamps its jobs with Postgres' now(): test/e2e/workers.test.ts).
 */
export function useRealClock(): void {
  setClockOffset(0);
}

/** How far this process's clock is from the real one (ms): what a child process is given to read the same clock. */
export function testClockOffsetMs(): number {
  return clockOffset();
}

/** Preloaded in every child process a test starts: it moves the child's Date by RAMP_RECON_TEST_CLOCK_OFFSET_MS. */
export const CLOCK_PRELOAD = join(dirname(fileURLToPath(import.meta.url)), '..', 'e2e', 'clock-preload.mjs');

/**
 * The `node` arguments and environment that run `script` on this test's clock: the child's Date is this process's,
 * moved further by the RAMP_RECON_TEST_CLOCK_OFFSET_MS that `env` may give (ms from this process's clock, e.g. a
 * live sandbox's clock minus Date.now()). Every child a test starts goes through here (startCli() does).
 */
export function clocked(script: string, env: NodeJS.ProcessEnv): { argv: string[]; env: NodeJS.ProcessEnv } {
  const offset = testClockOffsetMs() + Number(env.RAMP_RECON_TEST_CLOCK_OFFSET_MS ?? '0');
  return {
    argv: ['--import', pathToFileURL(CLOCK_PRELOAD).href, script],
    env: { ...fakedClockEnv(), ...env, RAMP_RECON_TEST_CLOCK_OFFSET_MS: String(offset) },
  };
}

/**
 * libfaketime's variables, when the tests run under it (`faketime '2026-11-28 07:30' npx vitest run ...`, the way to
 * check a test at another hour): the offset is measured against this process's real clock, so the child's real clock
 * must be faked the same way, even when the test gives the child an environment of its own.
 */
function fakedClockEnv(): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (k === 'LD_PRELOAD' || k.startsWith('FAKETIME')) out[k] = v;
  return out;
}
