// The built CLI on a moved clock, for end-to-end tests of several nights: Date.now() and new Date()
// read the real clock plus RAMP_RECON_TEST_CLOCK_OFFSET_MS (the bench's clock shift, dist/bench/clock.js),
// so a plain `ramp-recon run` takes "yesterday" of the simulated calendar the sandbox runs on.
import { setClockOffset } from '../../dist/bench/clock.js';

setClockOffset(Number(process.env.RAMP_RECON_TEST_CLOCK_OFFSET_MS ?? '0'));
await import('../../dist/src/cli/main.js');
