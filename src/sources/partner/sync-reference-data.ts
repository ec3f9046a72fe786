/** Partner sync step: currencies, regions and payment methods as dated reference snapshots. */
import { inTransaction } from '../../store/database.js';
import { stringifyJsonLossless } from '../../decimal/json.js';
import { saveReferenceSnapshot } from '../../store/snapshots.js';
import { saveCurrencies } from '../../store/partner-orders.js';
import type { NewPartnerCurrency } from '../../store/schema.js';
import { checkAbort } from '../common/abort.js';
import { quarantineResponse, type BadRecord } from '../common/quarantine.js';
import { currencySchema, formatPartnerIssues, paymentMethodsSchema, readableKey, regionsSchema } from './schemas.js';
import { currencyToRow, flattenCurrencies } from './transform.js';
import { countQuarantined, origin, quarantineBody, SOURCE, type SyncEnv } from './sync-common.js';

/**
 * Currencies, regions (all, onlyBuyAllowed=false) and payment methods, as dated snapshots: a new
 * row only when the content changed. Invalid currencies are quarantined; the valid ones land.
 */
export async function syncReferenceData(env: SyncEnv): Promise<void> {
  const { db, account, client } = env;
  const fetchedAt = env.now;

  checkAbort(env.signal, SOURCE);
  const currencies = await client.currencies(env.signal);
  const list = flattenCurrencies(currencies.body);
  if (!list) {
    await quarantineBody(env, '/currencies', 'partner_currency', { recordKey: null, position: null, rawText: currencies.text, reason: 'currencies: not a JSON array' });
  } else {
    const rows: NewPartnerCurrency[] = [];
    const bad: BadRecord[] = [];
    for (const [position, c] of list.entries()) {
      const parsed = currencySchema.safeParse(c);
      if (parsed.success) rows.push(currencyToRow(parsed.data));
      else bad.push({ recordKey: readableKey(c, 'code'), position, rawText: stringifyJsonLossless(c), reason: formatPartnerIssues(parsed.error) });
    }
    await inTransaction(db, async (trx) => {
      const snap = await saveReferenceSnapshot(trx, { account, source: SOURCE, kind: 'currencies', fetchedAt, bodyText: stringifyJsonLossless(currencies.body) });
      if (snap.changed) await saveCurrencies(trx, snap.id, rows);
      await quarantineResponse(trx, origin(env, '/currencies', 'partner_currency'), bad, rows.map((r) => r.code));
      env.result.snapshots.currencies = snap.changed;
    });
    countQuarantined(env, '/currencies', bad);
  }

  for (const [kind, fetch, schema, key] of [
    ['regions', () => client.regions(env.signal), regionsSchema, 'regions'],
    ['payment_methods', () => client.paymentMethods(env.signal), paymentMethodsSchema, 'paymentMethods'],
  ] as const) {
    checkAbort(env.signal, SOURCE);
    const response = await fetch();
    const parsed = schema.safeParse(response.body);
    if (!parsed.success) {
      await quarantineBody(env, `/${kind.replace('_', '-')}`, `partner_${kind}`, { recordKey: null, position: null, rawText: response.text, reason: formatPartnerIssues(parsed.error) });
      continue;
    }
    const snap = await saveReferenceSnapshot(db, { account, source: SOURCE, kind, fetchedAt, bodyText: stringifyJsonLossless(response.body) });
    env.result.snapshots[key] = snap.changed;
  }
}
