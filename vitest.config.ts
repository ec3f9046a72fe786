import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The reliability suite (kills, faults, load) and the security suite have their own commands:
    // npm run test:reliability, npm run test:security.
    exclude: [...configDefaults.exclude, 'test/reliability/**', 'test/security/**'],
    // Builds dist/ when a source is newer: the end-to-end tests run the built CLI.
    globalSetup: ['test/e2e/global-setup.ts'],
    // Every test file starts on one fixed instant, whatever the date and hour (test/helpers/clock.ts).
    setupFiles: ['test/helpers/clock-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: more workers than that only adds contention for PGlite's WASM start-up.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ['default'],
  },
});
