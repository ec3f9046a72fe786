import { killSuite } from './kill-points.js';

// 20 points on the embedded database alone; 12 when Postgres runs too (24 across both).
const points = Number(process.env.RELIABILITY_KILLS ?? (process.env.TEST_DATABASE_URL ? 12 : 20));
killSuite('embedded', points, Number(process.env.RELIABILITY_SEED ?? 17));
