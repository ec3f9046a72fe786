/** The rule tally: collects verdicts across batches into each rule's counts, breaks and result. */
import { findRule, ruleDef, RULES, type RuleCode } from './catalog.js';
import { Decimal, decimalText } from '../decimal/decimal.js';
import { figureText, type DetectedBreak, type RuleResult } from '../domain/index.js';

export type { RuleResult, RuleStatus } from '../domain/index.js';
import type { BreakExtras, Failure, Finding, Verdict } from './types.js';

export type { BreakExtras, Verdict } from './types.js';

interface Entry {
  checked: number;
  skippedKeys: Set<string>;
  breaks: Map<string, DetectedBreak>;
  /** The keys judged (passed or not) of a rule of reach 'judged': only those of its breaks may resolve. */
  judgedKeys: Set<string>;
  /** The failures of each broken key, as the rules reported them (a second verdict on the key adds to them). */
  failures: Map<string, Failure[]>;
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
      if (!findRule(code)) throw new Error(`unknown rule code ${code}`);
      e = {
        checked: 0,
        skippedKeys: new Set(),
        breaks: new Map(),
        failures: new Map(),
        judgedKeys: new Set(),
        notChecked: null,
      };
      this.entries.set(code, e);
    }
    return e;
  }

  /** The rule could not run at all (missing config or reference data). */
  notChecked(code: RuleCode, reason: string): void {
    this.entry(code).notChecked = reason;
  }

  isNotChecked(code: RuleCode): boolean {
    return this.entries.get(code)?.notChecked != null;
  }

  record(code: RuleCode, key: string, verdict: Verdict, currency: string | null = null): void {
    const e = this.entry(code);
    if (verdict === 'n/a') return;
    if (verdict === 'skipped') {
      e.skippedKeys.add(key);
      return;
    }
    e.checked += 1;
    if (ruleDef(code).reach === 'judged') e.judgedKeys.add(key);
    if (verdict.length === 0) return;
    // One break per (code, key): a second verdict on the same key (e.g. E_SYMBOL_RULES of two
    // checks) adds its failures to the same break.
    const failures = [...(e.failures.get(key) ?? []), ...verdict];
    e.failures.set(key, failures);
    e.breaks.set(key, toBreak(code, key, failures, e.breaks.get(key)?.currency ?? currency));
  }

  /** Adds a break built elsewhere (balance roll-forward carries its own detail). */
  add(b: DetectedBreak, checked = 1): void {
    const e = this.entry(b.code);
    e.checked += checked;
    e.breaks.set(b.key, b);
  }

  addChecked(code: RuleCode, n: number): void {
    this.entry(code).checked += n;
  }

  /** In catalog order, then by key: the same list whatever order (or side by side) the scans reported in. */
  breaks(): DetectedBreak[] {
    return RULES.flatMap((def) => {
      const e = this.entries.get(def.code);
      return e ? [...e.breaks.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)) : [];
    });
  }

  skippedKeys(code: string): ReadonlySet<string> {
    return this.entries.get(code)?.skippedKeys ?? new Set();
  }

  /** The rule (of reach 'judged') judged this key in this run. */
  wasJudged(code: string, key: string): boolean {
    return this.entries.get(code)?.judgedKeys.has(key) ?? false;
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

/** The breaks of a rule's findings over a set (coverage, quarantine, balance pairs). */
export function breaksOf(code: RuleCode, findings: readonly Finding[]): DetectedBreak[] {
  return findings.map((f) => toBreak(code, f.key, f.failures, f.currency, f.extras));
}

/**
 * One break from an entity's failures: the first one in the figures, all of them in detail (as exact text). The
 * entity and the unit come from the rule's descriptor unless the check says otherwise; a check whose figures are all
 * text (a state, a hash) has the unit 'text'.
 */
export function toBreak(
  code: RuleCode,
  key: string,
  failures: readonly Failure[],
  currency: string | null,
  extras: BreakExtras = {},
): DetectedBreak {
  const def = ruleDef(code);
  const first = failures[0];
  if (!first) throw new Error(`no failure for ${code} ${key}`);
  const numeric = [first.expected, first.actual, first.difference].some((f) => Decimal.isDecimal(f));
  const more = failures.length > 1 ? ` (+${failures.length - 1} more)` : '';
  return {
    code,
    key,
    entity: first.entity ?? def.entity,
    severity: def.severity,
    currency: first.currency !== undefined ? first.currency : currency,
    unit: first.unit ?? (numeric ? def.unit : 'text'),
    day: extras.day ?? null,
    expected: first.expected,
    actual: first.actual,
    difference: first.difference,
    message: `${first.check}${first.note ? ` (${first.note})` : ''}${more}`,
    detail: {
      checks: failures.map(checkText),
      ...(first.stake && { stake: { value: decimalText(first.stake.value), currency: first.stake.currency } }),
      ...extras.detail,
    },
  };
}

/** A failure as the break's detail keeps it: its figures as exact text, what it is about left to the break. */
function checkText(f: Failure): Record<string, unknown> {
  const out: Record<string, unknown> = {
    check: f.check,
    expected: figureText(f.expected),
    actual: figureText(f.actual),
    difference: figureText(f.difference),
  };
  if (f.currency !== undefined) out.currency = f.currency;
  if (f.note !== undefined) out.note = f.note;
  if (f.facts !== undefined) out.facts = f.facts;
  return out;
}
