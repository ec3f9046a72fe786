import { describe, it } from 'vitest';
import { killSuite } from './kill-points.js';

if (process.env.TEST_DATABASE_URL) killSuite('postgres', Number(process.env.RELIABILITY_KILLS ?? 14), Number(process.env.RELIABILITY_SEED ?? 17) + 1);
else describe('kill -9 [postgres]', () => it.skip('needs TEST_DATABASE_URL', () => {}));
