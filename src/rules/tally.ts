/** The rule tally: collects verdicts across batches into each rule's counts, breaks and result. */
import { ruleDef, RULES } from './catalog.js';
import type { DetectedBreak, RuleResult } from '../domain/index.js';

export type { RuleResult, RuleStatus } from '../domain/index.js';
import type { Failure } from './types.js';

/**
 * A rule's verdict on one entity: failures (empty = passed); 'skipped' when the entity is in
 * scope but cannot be judged (unknown currency or symbol: counted, and its breaks are left as
 * they are); 'n/a' when the check does not apply to it (not counted at all).
 */
export type Verdict = Failure[] | 'skipped' | 'n/a';

interface Entry {
  checked: number;
  skippedKeys: Set<string>;
  breaks: Map<string, DetectedBreak>;
  notChecked: string | null;
}

/**
 * Collects verdicts across batches (the I/O layer streams orders and fills), so a rule's
 * totals, its breaks and the keys it could not judge come out the same however the data
 * was cut into batches.
 */
export class RuleTally {
  private readonly entries = new Map<string, Entry>();

  private entry(code: string): Entry {
    let e = this.entries.get(code);
    if (!e) {
      ruleDef(code);
      e = { checked: 0, skippedKeys: new Set(), breaks: new Map(), notChecked: null };
      this.entries.set(code, e);
    }
    return e;
  }

  /** The rule could not run at all (missing config or reference data). */
  notChecked(code: string, reason: string): void {
    this.entry(code).notChecked = reason;
  }

  isNotChecked(code: string): boolean {
    return this.entries.get(code)?.notChecked != null;
  }

  record(code: string, key: string, verdict: Verdict, currency: string | null = null): void {
    const e = this.entry(code);
    if (verdict === 'n/a') return;
    if (verdict === 'skipped') {
      e.skippedKeys.add(key);
      return;
    }
    e.checked += 1;
    if (verdict.length === 0) return;
    // One break per (code, key): a second verdict on the same key (e.g. E_SYMBOL_RULES of two
    // checks) adds its failures to the same break.
    const previous = e.breaks.get(key);
    const failures = previous ? [...((previous.detail as { checks: Failure[] }).checks ?? []), ...verdict] : verdict;
    e.breaks.set(key, toBreak(code, key, failures, previous?.currency ?? currency));
  }

  /** Adds a break built elsewhere (balance roll-forward carries its own detail). */
  add(b: DetectedBreak, checked = 1): void {
    const e = this.entry(b.code);
    e.checked += checked;
    e.breaks.set(b.key, b);
  }

  addChecked(code: string, n: number): void {
    this.entry(code).checked += n;
  }

  breaks(): DetectedBreak[] {
    return [...this.entries.values()].flatMap((e) => [...e.breaks.values()]);
  }

  skippedKeys(code: string): ReadonlySet<string> {
    return this.entries.get(code)?.skippedKeys ?? new Set();
  }

  /** The rule ran (possibly over zero entities): its undetected breaks may be resolved. */
  wasChecked(code: string): boolean {
    const e = this.entries.get(code);
    return !e || e.notChecked === null;
  }

  /** Every catalog rule, in catalog order. */
  results(): RuleResult[] {
    return RULES.map((def) => {
      const e = this.entries.get(def.code);
      const breaks = e?.breaks.size ?? 0;
      const result: RuleResult = {
        code: def.code,
        severity: def.severity,
        description: def.description,
        status: e?.notChecked ? 'not_checked' : breaks > 0 ? 'breaks' : 'passed',
        checked: e?.checked ?? 0,
        breaks,
      };
      if (e && e.skippedKeys.size > 0) result.skipped = e.skippedKeys.size;
      if (e?.notChecked) result.reason = e.notChecked;
      return result;
    });
  }
}

/** One break from an entity's failures: the first one in the figures, all of them in detail. */
export function toBreak(code: string, key: string, failures: Failure[], currency: string | null): DetectedBreak {
  const def = ruleDef(code);
  const first = failures[0];
  if (!first) throw new Error(`no failure for ${code} ${key}`);
  return {
    code,
    key,
    severity: def.severity,
    currency: first.currency !== undefined ? first.currency : currency,
    expected: first.expected,
    actual: first.actual,
    difference: first.difference,
    message: `${first.check}${first.note ? ` (${first.note})` : ''}${failures.length > 1 ? ` (+${failures.length - 1} more)` : ''}`,
    detail: { checks: failures },
  };
}
