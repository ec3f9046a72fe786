/**
 * Loaded before the CLI (`node --import dist/bench/clock-preload.js dist/src/cli/main.js ...`) by bench:fleet: the
 * workers and `enqueue` read the sandbox's simulated calendar, BENCH_CLOCK_OFFSET_MS from the real clock, so a plain
 * `enqueue` plans "yesterday" of the day the sandbox has reached and each run stamps its records by the same clock.
 */
import { setClockOffset } from './clock.js';

const text = process.env.BENCH_CLOCK_OFFSET_MS;
if (text !== undefined) {
  const ms = Number(text);
  if (text.trim() === '' || !Number.isFinite(ms))
    throw new Error(`BENCH_CLOCK_OFFSET_MS must be a number of milliseconds (got ${JSON.stringify(text)})`);
  setClockOffset(ms);
}
