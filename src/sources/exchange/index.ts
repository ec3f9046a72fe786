/** The Exchange API as the rest of the product sees it: its client, its sync's steps, how far its streams are read. */
export { exchangeClientFromConfig, type ExchangeClient } from './client.js';
export type { StreamCoverage, SyncCounters, SyncEnv } from './sync-common.js';
export { backfillFills, syncFills } from './sync-fills.js';
export { syncOrderLookups, syncOrders } from './sync-orders.js';
export { syncPayments } from './sync-payments.js';
export { syncSnapshots } from './sync-snapshots.js';
export { exchangeStreamReach } from './streams.js';
