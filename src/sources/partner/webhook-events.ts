/** Webhook ingestion of partner order events: one delivered body validated, then stored and applied, or quarantined
 * with its exact bytes.
 */
import type { Db } from '../../store/db/database.js';
import { asDatabaseUnavailable } from '../../store/db/database-errors.js';
import { parseJsonLossless, stringifyJsonLossless } from '../../decimal/json.js';
import { extraEventFields, formatPartnerIssues, orderEventSchema, readableKey } from './schemas.js';
import { orderToRow, requireTimestampKey } from './transform.js';
import {
  quarantineWebhookBody,
  setLegacyBodyHash,
  writeWebhookEvent,
  writeWebhookEvents,
  type WebhookBatchItem,
  type WebhookWriteResult,
} from '../../store/sync/webhook-events.js';
import {
  canonicalHash,
  canonicalHashOfText,
  decodeUtf8,
  datedAheadReason,
  isWellFormed,
  MAX_BODY_DEPTH,
  MAX_ID_BYTES,
  nestedDeeperThan,
  unstorableReason,
} from './webhook-body.js';

setLegacyBodyHash(canonicalHashOfText);

export type EventOutcome =
  /**
   * Malformed (not UTF-8, nested too deep, not JSON, not an order event, or not storable): quarantined, answered 400.
   * `tooDeep`: nested deeper than MAX_BODY_DEPTH (never parsed).
   */
  | { kind: 'invalid'; reason: string; eventId: string | null; tooDeep?: true }
  /**
   * Valid, but dated more than the allowed skew ahead of the receiver's clock: quarantined with its exact bytes, never
   * applied (its order keeps the state polling and earlier events gave it), answered 2xx.
   */
  | { kind: 'future'; reason: string; eventId: string; orderId: string }
  | { kind: 'duplicate'; eventId: string }
  /** Same eventId as a stored event, another body: kept as a conflict for the report, answered 2xx. */
  | { kind: 'conflict'; eventId: string }
  /** Valid, but the database refused to store it: quarantined with the database's reason, answered 2xx. */
  | { kind: 'quarantined'; reason: string; eventId: string | null }
  | { kind: 'stored'; eventId: string; orderId: string; orderState: string; applied: boolean; extraFields: string[] };

export interface EventInput {
  db: Db;
  account: string;
  /** The receiver's clock: received_at, and what an event may not be dated far ahead of. */
  now: Date;
  /** How far ahead of `now` an event may be dated and still be applied (default DEFAULT_MAX_CLOCK_SKEW_SECONDS). */
  maxClockSkewSeconds?: number;
  endpoint: string;
  remoteAddr: string | null;
  /** The body exactly as delivered (a string is taken as its UTF-8 bytes). */
  body: Uint8Array | string;
  /** Names the database in errors (DATABASE_URL without password, or the embedded one). */
  databaseTarget?: string;
  /**
   * Writes the validated event (a WebhookBatcher's submit groups concurrent ones); default: one transaction of its own.
   */
  write?: (item: WebhookBatchItem) => Promise<WebhookWriteResult>;
}

/**
 * Groups the events of concurrent requests into one transaction each few milliseconds (group
 * commit): a busy sender's events cost one WAL flush per batch, not one each. Each request still
 * gets its answer only after its batch committed. A batch the database refuses for a reason of
 * its own is written again event by event, so one bad event never holds back the others.
 */
export class WebhookBatcher {
  private queue: Array<{
    item: WebhookBatchItem;
    resolve: (r: WebhookWriteResult) => void;
    reject: (e: unknown) => void;
  }> = [];
  private running = 0;
  private scheduled = false;

  constructor(
    private readonly db: Db,
    private readonly account: string,
    private readonly options: {
      maxBatch?: number;
      maxConcurrent?: number;
      databaseTarget?: string;
      /** The receiver's clock (received_at of each batch); default the wall clock. */
      now?: () => Date;
    } = {},
  ) {}

  submit(item: WebhookBatchItem): Promise<WebhookWriteResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0 || this.running >= (this.options.maxConcurrent ?? 3)) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.queue.length === 0 || this.running >= (this.options.maxConcurrent ?? 3)) return;
    const batch = this.queue.splice(0, this.options.maxBatch ?? 200);
    this.running++;
    this.schedule();
    try {
      const now = this.options.now?.() ?? new Date();
      let results: WebhookWriteResult[] | null = null;
      let settled = false;
      try {
        results = await writeWebhookEvents(
          this.db,
          this.account,
          batch.map((b) => b.item),
          now,
        );
      } catch (err) {
        if (asDatabaseUnavailable(err, this.options.databaseTarget ?? 'the database') || batch.length === 1) {
          for (const b of batch) b.reject(err);
          settled = true;
        }
      }
      if (results) batch.forEach((b, i) => b.resolve(results[i]!));
      else if (!settled) {
        for (const b of batch) {
          try {
            b.resolve(await writeWebhookEvent(this.db, this.account, b.item.event, b.item.order, now));
          } catch (err) {
            b.reject(err);
          }
        }
      }
    } finally {
      this.running--;
      this.schedule();
    }
  }
}

/** An event older than this far ahead of the receiver's clock is believed (webhooks.maxClockSkewSeconds's default). */
export const DEFAULT_MAX_CLOCK_SKEW_SECONDS = 600;

/**
 * One delivered body, independent of HTTP: validate, then store and apply, or quarantine. Every
 * body ends stored, duplicate, conflict or quarantined (exact bytes and the reason): only an
 * unreachable database throws, so the sender's retry (5xx) is for a database that is really
 * away, never for the body itself.
 */
export async function handleEventBody(input: EventInput): Promise<EventOutcome> {
  const { db, account, now, endpoint } = input;
  const bytes =
    typeof input.body === 'string'
      ? Buffer.from(input.body, 'utf8')
      : Buffer.from(input.body.buffer, input.body.byteOffset, input.body.byteLength);
  const text = decodeUtf8(bytes);
  const printable = text !== null && !text.includes('\u0000') ? text : `base64:${bytes.toString('base64')}`;
  const quarantine = async (reason: string, eventId: string | null) => {
    const recordKey = eventId !== null && storableKey(eventId) ? eventId : null;
    await quarantineWebhookBody(
      db,
      { account, endpoint, recordKey, rawBytes: bytes, rawText: printable, reason: storableText(reason) },
      now,
    );
  };

  let judged: Judged;
  try {
    judged = judgeBody(text, bytes, now, input.maxClockSkewSeconds ?? DEFAULT_MAX_CLOCK_SKEW_SECONDS);
  } catch (err) {
    // A body that breaks a check in a way none of them foresaw is still the sender's body, not a database away: it is
    // quarantined and answered 400, never 5xx (which the sender would retry for three days).
    judged = { kind: 'invalid', reason: `body could not be checked: ${(err as Error).message}`, eventId: null };
  }
  if (judged.kind !== 'valid') {
    await quarantine(judged.reason, judged.eventId);
    return judged;
  }
  const { item } = judged;
  const event = item.event;
  event.remoteAddr = input.remoteAddr;
  try {
    const written = input.write
      ? await input.write(item)
      : await writeWebhookEvent(db, account, item.event, item.order, now);
    if (written.kind === 'duplicate') return { kind: 'duplicate', eventId: event.eventId };
    if (written.kind === 'conflict') return { kind: 'conflict', eventId: event.eventId };
    return {
      kind: 'stored',
      eventId: event.eventId,
      orderId: event.orderId,
      orderState: event.orderState,
      applied: written.applied,
      extraFields: event.extraFields,
    };
  } catch (err) {
    // The last line of defence: a database that is away is the sender's to retry; anything it
    // refuses (a value the checks above did not foresee) is quarantined with its words.
    if (asDatabaseUnavailable(err, input.databaseTarget ?? 'the database')) throw err;
    const why = `order event the database refused: ${databaseReason(err)}`;
    await quarantine(why, event.eventId);
    return { kind: 'quarantined', reason: why, eventId: event.eventId };
  }
}

type Judged =
  Extract<EventOutcome, { kind: 'invalid' } | { kind: 'future' }> | { kind: 'valid'; item: WebhookBatchItem };

/**
 * What a body is, with no database: invalid (and why), a valid event dated ahead of the clock, or a valid event ready
 * to write. The depth limit comes before any parsing, so every walk after it (parsers, checks, hash, serialisation)
 * recurses at most MAX_BODY_DEPTH levels.
 */
function judgeBody(text: string | null, bytes: Buffer, now: Date, maxClockSkewSeconds: number): Judged {
  const invalid = (reason: string, eventId: string | null = null, tooDeep = false): Judged =>
    tooDeep ? { kind: 'invalid', reason, eventId, tooDeep } : { kind: 'invalid', reason, eventId };
  if (text === null) return invalid('body is not valid UTF-8 (kept byte for byte, never rewritten)');
  if (nestedDeeperThan(text, MAX_BODY_DEPTH))
    return invalid(
      `body nests arrays or objects deeper than ${MAX_BODY_DEPTH} levels (kept as text, not read)`,
      null,
      true,
    );
  let parsed: unknown;
  try {
    parsed = parseJsonLossless(text);
  } catch (err) {
    return invalid(`body is not JSON: ${(err as Error).message}`);
  }
  const eventId = readableKey(parsed, 'eventId');
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    return invalid('body is not a JSON object', eventId);
  const result = orderEventSchema.safeParse(parsed);
  if (!result.success) return invalid(`invalid order event: ${formatPartnerIssues(result.error)}`, eventId);
  const unstorable = unstorableReason(parsed);
  if (unstorable) return invalid(`order event that cannot be stored: ${unstorable}`, eventId);
  const event = result.data;
  const ahead = datedAheadReason(event, now, maxClockSkewSeconds);
  if (ahead) return { kind: 'future', reason: ahead, eventId: event.eventId, orderId: event.orderId };
  const extraFields = extraEventFields(parsed as Record<string, unknown>);
  const raw = stringifyJsonLossless(parsed);
  const item: WebhookBatchItem = {
    event: {
      eventId: event.eventId,
      orderId: event.orderId,
      orderState: event.orderState,
      orderStateUpdatedAt: event.orderStateUpdatedAt,
      orderStateUpdatedKey: requireTimestampKey(event.orderStateUpdatedAt),
      createdAtText: event.createdAt,
      remoteAddr: null,
      extraFields,
      raw,
      rawBytes: bytes,
      bodyHash: canonicalHash(parsed),
    },
    order: orderToRow(event, raw),
  };
  return { kind: 'valid', item };
}

function storableKey(key: string): boolean {
  return Buffer.byteLength(key, 'utf8') <= MAX_ID_BYTES && !key.includes('\u0000') && isWellFormed(key);
}

/** A reason as text Postgres can hold: NUL and lone surrogates (quoted from the body by a parser's message) escaped. */
function storableText(text: string): string {
  // eslint-disable-next-line no-control-regex -- NUL is what is looked for: Postgres text cannot hold it
  const noNul = text.replace(/\u0000/g, '\\u0000');
  return isWellFormed(noNul) ? noNul : JSON.stringify(noNul).slice(1, -1);
}

function databaseReason(err: unknown): string {
  const e = err as { message?: string; code?: string } | null;
  return `${(e?.message ?? String(err)).slice(0, 500)}${e?.code ? ` (SQLSTATE ${e.code})` : ''}`;
}
