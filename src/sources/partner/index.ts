/** The Partner API as the rest of the product sees it: how far its stream is read. */
export { partnerStreamReach } from './streams.js';
