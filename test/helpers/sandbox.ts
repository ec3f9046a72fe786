/**
 * The sandbox as the tests start it: on the tests' fixed clock (test/helpers/clock.ts). A frozen sandbox (not live)
 * without a `now` of its own is at TEST_CLOCK_START exactly, so its records are the same whenever the test runs and
 * however long the test took to get there; a live one starts at the test's clock and follows it, as the product in
 * the test does. Test
 * files start sandboxes through here, not sandbox/index.ts (test/unit/test-clock.test.ts checks it).
 */
import {
  startSandbox as startAnySandbox,
  startSandboxAccounts as startAnySandboxAccounts,
  type Sandbox,
  type SandboxAccounts,
  type SandboxAccountsOptions,
} from '../../sandbox/index.js';
import { TEST_CLOCK_START, testClockOffsetMs } from './clock.js';

export * from '../../sandbox/index.js';

type SandboxStartOptions = NonNullable<Parameters<typeof startAnySandbox>[0]>;

export function startSandbox(options: SandboxStartOptions = {}): Promise<Sandbox> {
  return startAnySandbox({ ...options, now: options.now ?? testNow(options.live === true) });
}

export function startSandboxAccounts(options: SandboxAccountsOptions): Promise<SandboxAccounts> {
  const live = options.live === true || options.accounts.some((a) => a.live === true);
  return startAnySandboxAccounts({ ...options, now: options.now ?? testNow(live) });
}

/**
 * A frozen sandbox's `now` when the test gives none: TEST_CLOCK_START on the tests' clock; a live one's (and any on
 * the real clock, useRealClock()) is its start.
 */
function testNow(live: boolean): Date | undefined {
  return live || testClockOffsetMs() === 0 ? undefined : new Date(TEST_CLOCK_START);
}
