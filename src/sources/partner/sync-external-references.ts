/** Partner sync step: the orders of given external references (`sync --ref`, a references CSV). */
import { checkAbort } from '../common/abort.js';
import { ORDERS_ENDPOINT, SOURCE, storeOrders, validateOrders, type PartnerSync } from './sync-common.js';
import { fetchOrders } from './sync-listing.js';

/** Several orders per reference are normal; the limit does not apply to this listing. */
export async function syncExternalReference(env: PartnerSync, reference: string): Promise<void> {
  checkAbort(env.signal, SOURCE);
  const records = await fetchOrders(env, { externalReference: reference }, `orders of externalReference ${reference}`);
  if (!records) return;
  await storeOrders(env, validateOrders(records), 'poll', ORDERS_ENDPOINT);
  env.progress.tick(records.length);
  env.result.references++;
}
