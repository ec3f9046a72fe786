/** The Exchange API as the rest of the product sees it: its Source (the sync's steps, how far its streams are read)
 * and its client (`ramp-recon doctor` makes one call through it).
 */
export { exchangeClientFromConfig, type ExchangeClient } from './client.js';
export { exchangeSource, type ExchangeFigures } from './source.js';
export type { StreamCoverage } from './sync-common.js';
