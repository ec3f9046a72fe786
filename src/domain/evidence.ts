/** The evidence of a period close (docs/closing.md): the streams its digest covers, the bytes it hashes, and the
 * field-by-field differences between a record as signed and as it stands.
 */
import { createHash, type Hash } from 'node:crypto';
import { isLosslessNumber, parseJsonLossless, stringifyJsonLossless } from '../decimal/json.js';
import type { Decimal } from '../decimal/decimal.js';

/** The record kinds a close signs, in digest order. */
export const EVIDENCE_STREAMS = ['partnerOrder', 'exchangeOrder', 'fill', 'deposit', 'withdrawal'] as const;
export type EvidenceStream = (typeof EVIDENCE_STREAMS)[number];

/** What besides the records a digest covers: the rules and the settings the period was judged under. */
export interface EvidenceContext {
  rulesetVersion: string;
  configHash: string;
}

/**
 * SHA-256 over the canonical form: for each stream in EVIDENCE_STREAMS order a line `stream <name>`, then one line
 * per record in bytewise key order, `<JSON string of its id> <its document>` (the stored row without the columns that
 * only say when it was read, as Postgres prints jsonb: one text on every server), then `ruleset <v>` and
 * `config <hash>`. Fed one record at a time: the period is never held whole.
 */
export class EvidenceDigest {
  private readonly hash: Hash = createHash('sha256');
  records = 0;

  stream(name: EvidenceStream): void {
    this.hash.update(`stream ${name}\n`);
  }

  record(id: string, doc: string): void {
    this.hash.update(recordLine(id, doc));
    this.records++;
  }

  finish(context: EvidenceContext): string {
    this.hash.update(`ruleset ${context.rulesetVersion}\nconfig ${context.configHash}\n`);
    return this.hash.digest('hex');
  }
}

/** One record's line of the canonical form. The document (jsonb text) never holds a raw newline. */
export function recordLine(id: string, doc: string): string {
  return `${JSON.stringify(id)} ${doc}\n`;
}

/** One field of one record that differs between the sign-off and now; a whole record added or gone has field `*`. */
export interface RecordChange {
  stream: EvidenceStream;
  id: string;
  field: string;
  before: string | null;
  after: string | null;
}

/**
 * The fields that differ between a record as signed (`before`) and as stored now (`after`), null for a record that
 * is absent on that side. Nested objects (the raw payload) are compared member by member (`raw.qty`), arrays whole.
 */
export function recordChanges(
  stream: EvidenceStream,
  id: string,
  before: string | null,
  after: string | null,
): RecordChange[] {
  if (before === after) return [];
  if (before === null || after === null) return [{ stream, id, field: '*', before, after }];
  const [was, now] = [flatten(parseJsonLossless(before)), flatten(parseJsonLossless(after))];
  const fields = [...new Set([...was.keys(), ...now.keys()])].sort();
  return fields
    .filter((f) => was.get(f) !== now.get(f))
    .map((field) => ({ stream, id, field, before: was.get(field) ?? null, after: now.get(field) ?? null }));
}

/** A JSON document as field path -> value text (numbers exactly as stored; null stays null). */
export function flatten(
  value: unknown,
  prefix = '',
  into = new Map<string, string | null>(),
): Map<string, string | null> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && !isLosslessNumber(value)) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>))
      flatten(v, prefix ? `${prefix}.${k}` : k, into);
    return into;
  }
  into.set(prefix, scalarText(value));
  return into;
}

function scalarText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (isLosslessNumber(value)) return value.toString();
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return stringifyJsonLossless(value);
}

/** A prior-period adjustment (close_change): one field of a signed record that differs now, and what it moves in USD. */
export interface CloseChange extends RecordChange {
  /** after - before in USD (report/adjustment-impact.ts); null when the field carries no money or has no rate. */
  usdImpact: Decimal | null;
  /** The run that first saw the change, and when. */
  runId: string;
  seenAt: Date;
}

/** A signed close and the prior-period adjustments recorded against it: what every report shows until it is reopened. */
export interface ClosedPeriodChanges {
  closeId: string;
  account: string;
  period: { from: string; to: string };
  by: string;
  at: Date;
  /** Every change recorded against the close; `changes` holds the largest by absolute USD impact, up to a limit. */
  count: number;
  /** The sum of every change's USD impact (null when none has one). */
  usdTotal: Decimal | null;
  changes: CloseChange[];
}
