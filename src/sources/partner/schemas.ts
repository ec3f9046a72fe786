/** Zod schemas of the Partner API (orders, order events, reference data, quotes). */
import { z } from 'zod';
import { isLosslessNumber } from '../../decimal/json.js';
import { isStorableWireDecimal, showWireValue, wireDecimal, wireInteger } from '../common/wire-decimal.js';
import { formatZodIssues } from '../common/zod-issues.js';
import { calendarIssue, MAX_KEY_LENGTH } from '../common/storable.js';

/**
 * Zod schemas of the Partner API (docs/apis.md "Partner API": currencies, regions, payment methods, quote,
 * orders, order events). Decimals arrive as strings in samples and as numbers per the event
 * schema; the lossless parser turns numbers into LosslessNumber, so both keep every digit.
 * Messages name the value; the issue path names the field (see formatPartnerIssues).
 */

/** ISO 8601 date-time with up to nanosecond fraction and a Z or an offset. */
export const ISO_TIMESTAMP = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:?\d{2})$/;

/**
 * What is wrong with a wire timestamp: 'calendar' with the reason (a day or time that does not exist: Date.parse rolls
 * 2026-02-30 over to March 2; the database refuses year 0000), 'format' (not ISO 8601), or null when it is right.
 */
function timestampIssue(v: string): { kind: 'calendar'; reason: string } | { kind: 'format' } | null {
  const m = ISO_TIMESTAMP.exec(v);
  const reason = m ? calendarIssue(m[1]!, m[2]!, m[4]) : null;
  if (reason !== null) return { kind: 'calendar', reason };
  if (!m || Number.isNaN(Date.parse(v.replace(/\.\d+/, '')))) return { kind: 'format' };
  return null;
}

export const wireTimestamp = z
  .string({ error: (issue) => `must be an ISO 8601 date-time string (got ${showWireValue(issue.input)})` })
  .superRefine((v, ctx) => {
    const issue = timestampIssue(v);
    if (issue?.kind === 'calendar')
      ctx.addIssue({ code: 'custom', message: `must be a real date-time: ${issue.reason} (got ${showWireValue(v)})` });
    else if (issue?.kind === 'format')
      ctx.addIssue({
        code: 'custom',
        message: `must be an ISO 8601 date-time such as 2023-11-15T14:43:06.894070237Z (got ${showWireValue(v)})`,
      });
  });

const text = (what = 'a string') =>
  z.string({ error: (issue) => `must be ${what} (got ${showWireValue(issue.input)})` });
const nonEmpty = text('a non-empty string').min(1, {
  error: (issue) => `must not be empty (got ${showWireValue(issue.input)})`,
});
/** An id or key that is stored in a unique index: within its size limit. */
const keyText = nonEmpty.max(MAX_KEY_LENGTH, {
  error: (issue) =>
    `is longer than ${MAX_KEY_LENGTH} characters, the longest id stored (got ${showWireValue(issue.input)})`,
});
const optionalKeyText = text()
  .max(MAX_KEY_LENGTH, {
    error: (issue) =>
      `is longer than ${MAX_KEY_LENGTH} characters, the longest key stored (got ${showWireValue(issue.input)})`,
  })
  .nullish();
const optionalText = text().nullish();
const optionalDecimal = wireDecimal.nullish();

export const ORDER_STATES = ['PENDING', 'WITHDRAWING', 'COMPLETED', 'FAILED'] as const;
export type OrderState = (typeof ORDER_STATES)[number];
export const NON_FINAL_STATES: readonly OrderState[] = ['PENDING', 'WITHDRAWING'];
const orderState = z.enum(ORDER_STATES, {
  error: (issue) => `must be one of ${ORDER_STATES.join(', ')} (got ${showWireValue(issue.input)})`,
});
const orderType = z.enum(['BUY', 'SELL'], {
  error: (issue) => `must be BUY or SELL (got ${showWireValue(issue.input)})`,
});

/**
 * An order in a polling response. The contract does not say which fields are required there:
 * we require the id and what storage and the rules need, accept the rest as optional, and keep
 * unknown fields (the raw record is stored whole).
 */
export const partnerOrderSchema = z
  .object({
    orderId: keyText,
    externalReference: optionalText,
    subPartnerId: optionalText,
    orderType,
    createdAt: wireTimestamp,
    orderState,
    orderStateUpdatedAt: wireTimestamp,
    paymentMethod: optionalText,
    inputCurrency: nonEmpty,
    inputAmount: wireDecimal,
    outputCurrency: nonEmpty,
    outputAmount: optionalDecimal,
    amountUsd: optionalDecimal,
    processingFee: optionalDecimal,
    processingFeeUsd: optionalDecimal,
    partnerFee: optionalDecimal,
    partnerFeeUsd: optionalDecimal,
    networkFee: optionalDecimal,
    networkFeeUsd: optionalDecimal,
    userId: optionalText,
    targetWalletAddress: optionalText,
    transactionHash: optionalKeyText,
  })
  .loose();
export type PartnerOrder = z.infer<typeof partnerOrderSchema>;

const isText = (v: unknown): v is string => typeof v === 'string';
const isNullish = (v: unknown): v is null | undefined => v === null || v === undefined;
const isKeyText = (v: unknown) => isText(v) && v.length >= 1 && v.length <= MAX_KEY_LENGTH;
const isTimestamp = (v: unknown) => isText(v) && timestampIssue(v) === null;
const ORDER_STATE_SET: ReadonlySet<unknown> = new Set(ORDER_STATES);
/** The schema's optional decimals and optional texts, read off its shape so that the fast path cannot drift from it. */
const fieldsOf = (schema: unknown) =>
  Object.entries(partnerOrderSchema.shape).flatMap(([field, s]) => (s === schema ? [field] : []));
const OPTIONAL_DECIMALS = fieldsOf(optionalDecimal);
const OPTIONAL_TEXTS = fieldsOf(optionalText);

/**
 * partnerOrderSchema without zod, for the listings' hot path (50 records a page, 100,000 in a first sync, where zod
 * was a third of the partner sync's CPU time): the schema's own checks (timestampIssue, wireDecimalText and
 * numericRangeIssue, the key length), so a record it accepts is one the schema accepts, and the schema's value is
 * the record itself (no field is transformed, unknown fields are kept). It returns null as soon as a field would be an
 * issue; the caller then runs the schema, which reports the issues as always.
 */
export function fastPartnerOrder(raw: unknown): PartnerOrder | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  if (!isKeyText(r.orderId)) return null;
  if (r.orderType !== 'BUY' && r.orderType !== 'SELL') return null;
  if (!ORDER_STATE_SET.has(r.orderState)) return null;
  if (!isTimestamp(r.createdAt) || !isTimestamp(r.orderStateUpdatedAt)) return null;
  if (!isText(r.inputCurrency) || r.inputCurrency.length === 0) return null;
  if (!isText(r.outputCurrency) || r.outputCurrency.length === 0) return null;
  if (!isStorableWireDecimal(r.inputAmount)) return null;
  for (const f of OPTIONAL_DECIMALS) if (!isNullish(r[f]) && !isStorableWireDecimal(r[f])) return null;
  for (const f of OPTIONAL_TEXTS) if (!isNullish(r[f]) && !isText(r[f])) return null;
  const hash = r.transactionHash;
  if (!isNullish(hash) && !(isText(hash) && hash.length <= MAX_KEY_LENGTH)) return null;
  return r as PartnerOrder;
}

/**
 * The webhook event with the contract's required fields. Extra fields are accepted (loose) and
 * reported by extraEventFields(): rejecting them would make the sender retry for 3 days and lose
 * the event.
 */
export const orderEventSchema = z
  .object({
    eventId: keyText,
    orderId: keyText,
    externalReference: text(),
    subPartnerId: optionalText,
    orderType,
    createdAt: wireTimestamp,
    orderState,
    orderStateUpdatedAt: wireTimestamp,
    paymentMethod: nonEmpty,
    inputCurrency: nonEmpty,
    inputAmount: wireDecimal,
    outputCurrency: nonEmpty,
    outputAmount: wireDecimal,
    amountUsd: optionalDecimal,
    processingFee: wireDecimal,
    processingFeeUsd: wireDecimal,
    partnerFee: wireDecimal,
    partnerFeeUsd: wireDecimal,
    networkFee: wireDecimal,
    networkFeeUsd: wireDecimal,
    userId: text(),
    userCountry: optionalText,
    userState: optionalText,
    targetWalletAddress: text(),
    transactionHash: optionalKeyText,
  })
  .loose();
export type OrderEvent = z.infer<typeof orderEventSchema>;

/** Every property the event schema allows (additionalProperties false): anything else is drift. */
const EVENT_FIELDS: ReadonlySet<string> = new Set(Object.keys(orderEventSchema.shape));

/** The event's amounts: the fields whose values are decimals. */
export const EVENT_DECIMAL_FIELDS: readonly string[] = Object.entries(orderEventSchema.shape)
  .filter(([, schema]) => schema === wireDecimal || schema === optionalDecimal)
  .map(([field]) => field);

export function extraEventFields(record: Record<string, unknown>): string[] {
  return Object.keys(record)
    .filter((k) => !EVENT_FIELDS.has(k))
    .sort();
}

export const currencySchema = z
  .object({
    type: z.enum(['FIAT', 'CRYPTO'], {
      error: (issue) => `must be FIAT or CRYPTO (got ${showWireValue(issue.input)})`,
    }),
    name: optionalText,
    code: nonEmpty,
    precision: wireInteger,
    minBuyAmount: optionalDecimal,
    maxBuyAmount: optionalDecimal,
    network: optionalText,
    supportsDestinationTag: z.boolean().nullish(),
    isSupportedInUS: z.boolean().nullish(),
    allowedUSStates: z.array(z.string()).nullish(),
  })
  .loose();
export type Currency = z.infer<typeof currencySchema>;

const country = z
  .object({ alpha2: text(), alpha3: text().nullish(), isBuyAllowed: z.boolean().nullish(), name: optionalText })
  .loose();
const usState = z.object({ alpha2: text(), isBuyAllowed: z.boolean().nullish(), name: optionalText }).loose();
export const regionsSchema = z.object({ countries: z.array(country), usStates: z.array(usState).nullish() }).loose();

export const paymentMethodSchema = z
  .object({ type: nonEmpty, supportedCurrencies: z.array(z.string()).nullish() })
  .loose();
export const paymentMethodsSchema = z.array(paymentMethodSchema);

export const quoteSchema = z
  .object({
    quoteCurrencyAmount: wireDecimal,
    quoteCurrencyCode: nonEmpty,
    baseCurrencyAmount: optionalDecimal,
    baseCurrencyCode: nonEmpty,
    price: optionalDecimal,
    processingFeeAmount: optionalDecimal,
    partnerFeeAmount: optionalDecimal,
    networkFeeAmount: optionalDecimal,
    totalAmount: optionalDecimal,
    paymentMethod: optionalText,
  })
  .loose();
export type Quote = z.infer<typeof quoteSchema>;

/** "inputAmount: must be a decimal number (got "abc")", one per issue; an absent field reads "field: required". */
export function formatPartnerIssues(error: z.ZodError): string {
  return formatZodIssues(error, { missing: 'required' });
}

/** The record's id when it can be read, so a quarantined record becomes its own S_QUARANTINE break. */
export function readableKey(record: unknown, field: string): string | null {
  if (record && typeof record === 'object' && !Array.isArray(record)) {
    const v = (record as Record<string, unknown>)[field];
    if (typeof v === 'string' && v.length > 0 && v.length <= 200) return v;
    if (isLosslessNumber(v) && (v as { value: string }).value.length <= 200) return (v as { value: string }).value;
  }
  return null;
}
