/** The product's public entry point for a program that drives it in process (the demo, sandbox/demo/). */
// It loads the config and the logger, opens and migrates the store, runs the one batch driver and says its outcome in
// the words `ramp-recon run` prints. Code outside src/ that is not a test nor the bench imports the product through
// this file (or decimal/); nothing in src/ imports it (docs/architecture.md, "Import rules").
export { loadGroup, type Group, type Account } from './config/load.js';
export { createLogger, type Logger } from './log/logger.js';
export { openStore, type Store } from './store/db/database.js';
export { migrate } from './store/db/migrate.js';
export { runBatch, type BatchResult } from './pipeline/batch.js';
export type { PipelineResult } from './pipeline/run.js';
export { installSignalHandlers } from './schedule/signals.js';
export { periodLabel } from './report/summary.js';
export { batchSentence, runOutcomeText } from './report/batch-words.js';
export { stakePhrase } from './report/money-at-stake.js';
export { addDays, toDay } from './util/dates.js';
