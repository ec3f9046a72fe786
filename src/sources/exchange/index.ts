/** The Exchange API as the rest of the product sees it: how far its streams are read. */
export { exchangeStreamReach } from './streams.js';
