import { killSuite } from './kill-points.js';

// 20 kill points on the embedded database, with or without Postgres (kill-postgres.test.ts adds 20 there): the
// issue asks for at least 20 across sync, reconcile and report on each database. An embedded point costs two
// PGlite start-ups (the killed run and the run after it), about 7 s.
killSuite('embedded', Number(process.env.RELIABILITY_KILLS ?? 20), Number(process.env.RELIABILITY_SEED ?? 17));
