/** Rule-engine internals: a rule's verdict on one entity, its failed checks, and what a check over a set finds (the
 * records and the Break are in src/domain).
 */
import type { Decimal } from '../decimal/decimal.js';
import type { Figure, FigureUnit, RecordKindName } from '../domain/index.js';

/** One failed check of a rule on one entity: its figures exact (Decimals), or text where they are not numbers. */
export interface Failure {
  check: string;
  expected: Figure;
  actual: Figure;
  difference: Figure;
  currency?: string | null;
  /** The unit of this check's figures, where it is not the rule's (a price check of a rule about quantities). */
  unit?: FigureUnit;
  /** The kind of record the key names, where the rule judges more than one kind (an order, or a fill). */
  entity?: RecordKindName;
  note?: string;
  /**
   * The money the break moves, signed from the business's side, for a rule whose descriptor's stake is 'recorded'
   * (catalog.ts StakeRule): kept in the break's detail as `stake`.
   */
  stake?: { value: Decimal; currency: string };
  /** Facts the rule's sentence names (a state, a transaction hash), so that no reader parses the check's words. */
  facts?: Readonly<Record<string, string>>;
}

/**
 * A rule's verdict on one entity: failures (empty = passed); 'skipped' when the entity is in
 * scope but cannot be judged (unknown currency or symbol: counted, and its breaks are left as
 * they are); 'n/a' when the check does not apply to it (not counted at all).
 */
export type Verdict = Failure[] | 'skipped' | 'n/a';

/** What a break says beyond its failures: its own day (a kind without a record of its own), more detail. */
export interface BreakExtras {
  day?: string | null;
  detail?: Readonly<Record<string, unknown>>;
}

/** A break a check over a whole set found, before its rule's descriptor makes it a break (tally toBreak). */
export interface Finding {
  key: string;
  failures: Failure[];
  currency: string | null;
  extras?: BreakExtras;
}
