/** The Partner API as the rest of the product sees it: its client, the steps of its sync, how far its stream is read,
 * and the ingestion of its webhook events. (`sync --references-csv` loads references-csv.ts itself, on demand.)
 */
export { partnerClientFromConfig, type PartnerClient } from './client.js';
export { emptyPartnerSyncResult, type PartnerSyncResult, type SyncEnv } from './sync-common.js';
export { daysToList, syncDays } from './sync-days.js';
export { syncExternalReference } from './sync-external-references.js';
export { refreshOpenOrders } from './sync-open-orders.js';
export { syncQuotes } from './sync-quotes.js';
export { syncReferenceData } from './sync-reference-data.js';
export { syncWallets } from './sync-wallets.js';
export { partnerStreamReach } from './streams.js';
export { handleEventBody, WebhookBatcher, type EventOutcome } from './webhook-events.js';
