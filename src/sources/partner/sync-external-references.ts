/** Partner sync step: the orders of given external references (`sync --ref`, a references CSV). */
import { checkAbort } from '../common/abort.js';
import {
  asArray,
  ORDERS_ENDPOINT,
  quarantinePage,
  SOURCE,
  storeOrders,
  validateOrders,
  type SyncEnv,
} from './sync-common.js';

/** Several orders per reference are normal; the limit does not apply to this listing. */
export async function syncExternalReference(env: SyncEnv, reference: string): Promise<void> {
  checkAbort(env.signal, SOURCE);
  const response = await env.client.listOrders({ externalReference: reference }, env.signal);
  env.result.pages++;
  const records = asArray(response.body);
  if (!records) {
    await quarantinePage(
      env,
      ORDERS_ENDPOINT,
      response,
      `orders of externalReference ${reference}: the orders list is not a JSON array`,
    );
    return;
  }
  await storeOrders(env, validateOrders(records), 'poll', ORDERS_ENDPOINT);
  env.progress.tick(records.length);
  env.result.references++;
}
