import { killSuite } from './kill-points.js';

// An embedded kill point costs two PGlite start-ups (the killed run and the run after it): 20 points on the embedded
// database alone, 8 when Postgres runs too (kill-postgres.test.ts adds 14: 22 across both).
const points = Number(process.env.RELIABILITY_KILLS ?? (process.env.TEST_DATABASE_URL ? 8 : 20));
killSuite('embedded', points, Number(process.env.RELIABILITY_SEED ?? 17));
