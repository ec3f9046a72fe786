/** Partner sync step: currencies, regions and payment methods as dated reference snapshots, each row the database
 * refuses quarantined with its reason.
 */
import { stringifyJsonLossless } from '../../decimal/json.js';
import { saveCurrencies } from '../../store/sync/partner-orders.js';
import type { NewPartnerCurrency } from '../../store/db/schema.js';
import { checkAbort } from '../common/abort.js';
import { quarantineResponse, type BadRecord } from '../common/quarantine.js';
import { writeSnapshot } from '../common/record-fallback.js';
import { currencySchema, formatPartnerIssues, paymentMethodsSchema, readableKey, regionsSchema } from './schemas.js';
import { currencyToRow, flattenCurrencies } from './transform.js';
import { countQuarantined, origin, quarantineBody, SOURCE, type PartnerSync } from './sync-common.js';

/**
 * Currencies, regions (all, onlyBuyAllowed=false) and payment methods, as dated snapshots: a new
 * row only when the content changed. Invalid currencies are quarantined; the valid ones land.
 * A currency the database refuses (writeSnapshot) is quarantined with its reason and the others
 * stored; a snapshot body it refuses is quarantined whole. The sync goes on either way.
 */
export async function syncReferenceData(env: PartnerSync): Promise<void> {
  const { db, account, client } = env;
  const fetchedAt = env.now;

  checkAbort(env.signal, SOURCE);
  const currencies = await client.currencies(env.signal);
  const list = flattenCurrencies(currencies.body);
  if (!list) {
    await quarantineBody(env, '/currencies', 'partner_currency', {
      recordKey: null,
      position: null,
      rawText: currencies.text,
      reason: 'currencies: not a JSON array',
    });
  } else {
    // One row per code, the later occurrence winning (as saveCurrencies keeps it).
    const byCode = new Map<string, { row: NewPartnerCurrency; position: number; rawText: string }>();
    const bad: BadRecord[] = [];
    for (const [position, c] of list.entries()) {
      const parsed = currencySchema.safeParse(c);
      if (parsed.success)
        byCode.set(parsed.data.code, { row: currencyToRow(parsed.data), position, rawText: stringifyJsonLossless(c) });
      else
        bad.push({
          recordKey: readableKey(c, 'code'),
          position,
          rawText: stringifyJsonLossless(c),
          reason: formatPartnerIssues(parsed.error),
        });
    }
    const items = [...byCode.values()];
    const snap = await writeSnapshot(db, {
      snapshot: {
        account,
        source: SOURCE,
        kind: 'currencies',
        fetchedAt,
        bodyText: stringifyJsonLossless(currencies.body),
      },
      // Without the invalid currencies, should the database refuse the body they are part of.
      storableBodyText: bad.length
        ? stringifyJsonLossless(list.filter((_, i) => !bad.some((b) => b.position === i)))
        : undefined,
      items,
      insert: (trx, snapshotId, rows) =>
        saveCurrencies(
          trx,
          snapshotId,
          rows.map((r) => r.row),
        ),
      quarantine: async (trx, refused, headRefused) => {
        const refusedCodes = new Set(refused.map((r) => r.item.row.code));
        const dbRefused: BadRecord[] =
          headRefused !== null
            ? [{ recordKey: null, position: null, rawText: currencies.text, reason: `currencies: ${headRefused}` }]
            : refused.map((r) => ({
                recordKey: r.item.row.code,
                position: r.item.position,
                rawText: r.item.rawText,
                reason: r.reason,
              }));
        await quarantineResponse(
          trx,
          origin(env, '/currencies', 'partner_currency'),
          [...bad, ...dbRefused],
          items.map((it) => it.row.code).filter((code) => !refusedCodes.has(code)),
        );
        bad.push(...dbRefused);
      },
    });
    env.result.snapshots.currencies = snap.changed;
    countQuarantined(env, '/currencies', bad);
    if (snap.refused.length)
      env.logger.warn(
        { refused: snap.refused.map((r) => ({ code: r.item.row.code, reason: r.reason })) },
        'partner currencies refused by the database; written one by one, the refused ones quarantined',
      );
  }

  for (const [kind, fetch, schema, key] of [
    ['regions', () => client.regions(env.signal), regionsSchema, 'regions'],
    ['payment_methods', () => client.paymentMethods(env.signal), paymentMethodsSchema, 'paymentMethods'],
  ] as const) {
    checkAbort(env.signal, SOURCE);
    const endpoint = `/${kind.replace('_', '-')}`;
    const response = await fetch();
    const parsed = schema.safeParse(response.body);
    if (!parsed.success) {
      await quarantineBody(env, endpoint, `partner_${kind}`, {
        recordKey: null,
        position: null,
        rawText: response.text,
        reason: formatPartnerIssues(parsed.error),
      });
      continue;
    }
    // A body-only snapshot: the one thing the database can refuse is the body, then quarantined whole.
    const refusedBody: BadRecord[] = [];
    const snap = await writeSnapshot(db, {
      snapshot: { account, source: SOURCE, kind, fetchedAt, bodyText: stringifyJsonLossless(response.body) },
      items: [],
      insert: async () => {},
      quarantine: async (trx, _refused, headRefused) => {
        if (headRefused === null) return;
        refusedBody.push({
          recordKey: null,
          position: null,
          rawText: response.text,
          reason: `${kind}: ${headRefused}`,
        });
        await quarantineResponse(trx, origin(env, endpoint, `partner_${kind}`), refusedBody);
      },
    });
    countQuarantined(env, endpoint, refusedBody);
    env.result.snapshots[key] = snap.changed;
  }
}
