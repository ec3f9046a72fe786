// The built CLI on a moved clock (test/e2e/clock-preload.mjs), for a child started without the preload: Date.now()
// and new Date() read the real clock plus RAMP_RECON_TEST_CLOCK_OFFSET_MS. startCli() in test/e2e/helpers.ts preloads
// the clock for every script, so the tests need this file only to say which script they run.
import './clock-preload.mjs';

await import('../../dist/src/cli/main.js');
