/** Rule-engine internals: one failed check of a rule on one entity (the records and the Break are in src/domain). */

/** One failed check of a rule on one entity. */
export interface Failure {
  check: string;
  expected: string | null;
  actual: string | null;
  difference: string | null;
  currency?: string | null;
  note?: string;
}
