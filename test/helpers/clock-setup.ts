/** vitest setupFiles: every test file starts on the tests' fixed clock (test/helpers/clock.ts). */
import { startTestClock } from './clock.js';

startTestClock();
