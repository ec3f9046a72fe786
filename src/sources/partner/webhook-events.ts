/** Webhook ingestion of partner order events: one delivered body validated, then stored and applied, or quarantined. */
import type { Db } from '../../store/database.js';
import { parseJsonLossless, stringifyJsonLossless } from '../../decimal/json.js';
import { quarantineResponse } from '../common/quarantine.js';
import { extraEventFields, formatPartnerIssues, orderEventSchema, readableKey } from './schemas.js';
import { orderToRow, requireTimestampKey } from './transform.js';
import { storeWebhookEvent } from '../../store/partner-orders.js';

export type EventOutcome =
  | { kind: 'invalid'; reason: string; eventId: string | null }
  | { kind: 'duplicate'; eventId: string }
  | { kind: 'stored'; eventId: string; orderId: string; orderState: string; applied: boolean; extraFields: string[] };

/**
 * One delivered body, independent of HTTP: validate, then store and apply, or quarantine.
 * A body that is not JSON or misses required fields is kept in quarantine (source webhook,
 * entity webhook_event, keyed by eventId when readable) and answered 400.
 */
export async function handleEventBody(input: { db: Db; account: string; now: Date; endpoint: string; remoteAddr: string | null; body: string }): Promise<EventOutcome> {
  const { db, account, now, endpoint, body } = input;
  let parsed: unknown;
  let reason: string | null = null;
  try {
    parsed = parseJsonLossless(body);
  } catch (err) {
    reason = `body is not JSON: ${(err as Error).message}`;
  }
  let eventId: string | null = null;
  if (reason === null) {
    eventId = readableKey(parsed, 'eventId');
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) reason = 'body is not a JSON object';
  }
  const result = reason === null ? orderEventSchema.safeParse(parsed) : null;
  if (result && !result.success) reason = `invalid order event: ${formatPartnerIssues(result.error)}`;
  if (reason !== null || !result?.success) {
    const why = reason ?? 'invalid order event';
    await quarantineResponse(db, { account, source: 'webhook', endpoint, entity: 'webhook_event' }, [{ recordKey: eventId, position: null, rawText: body, reason: why }]);
    return { kind: 'invalid', reason: why, eventId };
  }
  const event = result.data;
  const extraFields = extraEventFields(parsed as Record<string, unknown>);
  const raw = stringifyJsonLossless(parsed);
  const stored = await storeWebhookEvent(
    db,
    account,
    {
      eventId: event.eventId,
      orderId: event.orderId,
      orderState: event.orderState,
      orderStateUpdatedAt: event.orderStateUpdatedAt,
      orderStateUpdatedKey: requireTimestampKey(event.orderStateUpdatedAt),
      createdAtText: event.createdAt,
      remoteAddr: input.remoteAddr,
      extraFields,
      raw,
    },
    orderToRow(event, parsed),
    now,
  );
  if (stored.duplicate) return { kind: 'duplicate', eventId: event.eventId };
  return { kind: 'stored', eventId: event.eventId, orderId: event.orderId, orderState: event.orderState, applied: stored.applied, extraFields };
}
