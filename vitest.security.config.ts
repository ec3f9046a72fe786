import { defineConfig } from 'vitest/config';
import { suiteFiguresDir } from './test/helpers/figures-file.js';

// A fresh figures directory per run of the suite (or the one the caller gives), seen by every worker.
const figures = suiteFiguresDir('SECURITY_FIGURES', 'ramp-recon-security-');

/**
 * `npm run test:security`: every case of issue 43 tried end to end under test/security/ (planted formulas read back
 * from every output, forged webhook senders and bodies over HTTP and HTTPS, known secrets searched for in every output,
 * plain-http URLs and size limits), through the built CLI, the sandbox and the webhook receiver, on the embedded
 * database and on Postgres when TEST_DATABASE_URL is set. The summary reporter prints the suite's one line of figures
 * last and fails the run when a secret leaked or a case was not neutralised, refused or masked.
 */
export default defineConfig({
  test: {
    include: ['test/security/**/*.test.ts'],
    // The cases run the built CLI: rebuild dist when a source is newer, as `npm test` does.
    globalSetup: ['test/e2e/global-setup.ts'],
    // On the tests' fixed clock, as `npm test`: the sandbox's records and the CLI children read one calendar.
    setupFiles: ['test/helpers/clock-setup.ts'],
    env: { SECURITY_FIGURES: figures },
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ['default', './test/security/summary-reporter.ts'],
  },
});
