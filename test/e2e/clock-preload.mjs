// Loaded before a child's own script (`node --import`, test/e2e/helpers.ts): the child's Date.now() and new Date()
// read the real clock plus RAMP_RECON_TEST_CLOCK_OFFSET_MS (the bench's clock shift, dist/bench/clock.js), so a CLI
// started by a test reads the test's clock (test/helpers/clock.ts) and a plain `ramp-recon run` takes "yesterday" of
// the calendar the sandbox runs on.
import { setClockOffset } from '../../dist/bench/clock.js';

setClockOffset(Number(process.env.RAMP_RECON_TEST_CLOCK_OFFSET_MS ?? '0'));
