import { defineConfig } from 'vitest/config';
import { suiteFiguresDir } from './test/helpers/figures-file.js';

// A fresh figures directory per run of the suite (or the one the caller gives), seen by every worker.
const figures = suiteFiguresDir('RELIABILITY_FIGURES', 'ramp-recon-reliability-');

/**
 * `npm run test:reliability`: kills, faults, bad inputs, webhook load and property tests under
 * test/reliability/, on the embedded database and on Postgres when TEST_DATABASE_URL is set. The
 * summary reporter prints the suite's one line of figures last.
 */
const LOAD = 'test/reliability/webhook-load.test.ts';

export default defineConfig({
  test: {
    // The Postgres kill points need a server: without TEST_DATABASE_URL the file is left out, not skipped.
    exclude: process.env.TEST_DATABASE_URL ? [] : ['test/reliability/kill-postgres.test.ts'],
    // The kill tests run the built CLI: rebuild dist when a source is newer, as `npm test` does.
    globalSetup: ['test/e2e/global-setup.ts'],
    env: { RELIABILITY_FIGURES: figures },
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ['default', './test/reliability/summary-reporter.ts'],
    // Two groups, one after the other: the webhook load measures a rate, so it runs alone once
    // the kills, faults and corpora (two files at a time) are done.
    projects: [
      {
        extends: true,
        test: {
          name: 'reliability',
          include: ['test/reliability/**/*.test.ts'],
          exclude: [LOAD],
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'webhook load', include: [LOAD], sequence: { groupOrder: 1 } } },
    ],
  },
});
