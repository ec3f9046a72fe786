/** The Partner API as the rest of the product sees it: its Source (the sync's steps, how far its stream is read), its
 * client (`ramp-recon doctor`) and the ingestion of its webhook events. (`sync --references-csv` loads
 * references-csv.ts itself, on demand.)
 */
export { partnerClientFromConfig, type PartnerClient } from './client.js';
export { partnerSource } from './source.js';
export type { PartnerFigures } from './sync-common.js';
export { handleEventBody, WebhookBatcher, type EventOutcome } from './webhook-events.js';
