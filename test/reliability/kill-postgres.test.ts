import { killSuite } from './kill-points.js';

// Run only with TEST_DATABASE_URL (vitest.reliability.config.ts leaves this file out without it): 20 points, as on the embedded database.
killSuite('postgres', Number(process.env.RELIABILITY_KILLS ?? 20), Number(process.env.RELIABILITY_SEED ?? 17) + 1);
