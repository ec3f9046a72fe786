/** The SQL pre-filters of a run, gathered from the rules that can run: each rule's description (its `prefilter` in its
 * own file), its reference values named after the rule so that two rules never share a name. A rule checking the
 * scan without a pre-filter keeps every record.
 */
import type { Condition, FillPrefilter, Operand, OrderPrefilter, RefRow, SymbolRules } from '../domain/index.js';
import { RULES, type RuleCode } from './catalog.js';
import type { RefValues, RuleDef } from './define.js';
import type { EngineConfig, ReferenceData, RuleInputs } from './inputs.js';

type Rule = RuleDef<RuleCode>;

/** The rules checking fills (or orders) whose inputs are present, in catalog order; `only`: those of the codes. */
function runnable(x: RuleInputs, scan: 'fill' | 'exchangeOrder', only?: readonly RuleCode[]): Rule[] {
  return (RULES as readonly Rule[]).filter(
    (r) =>
      r.check[scan] !== undefined &&
      r.requires.every((requirement) => requirement(x) === null) &&
      (!only || only.includes(r.code)),
  );
}

/**
 * The fills that could fail a fill rule of this run (`only`: of these rules, for tests), with the reference values of
 * the UTC days of `span` (the fills it judges).
 */
export function fillPrefilter(
  cfg: EngineConfig,
  ref: ReferenceData,
  span: { from: Date; to: Date },
  only?: readonly RuleCode[],
): FillPrefilter {
  const x = { cfg, ref };
  const rules = runnable(x, 'fill', only);
  const days: RefRow[] = [];
  const dayed = rules.filter((r) => r.prefilter?.fill?.day);
  if (dayed.length > 0)
    for (let t = span.from.getTime(); t < span.to.getTime(); t += 86_400_000) {
      const day = new Date(t);
      const values = dayed.map((r) => named(r.code, r.prefilter!.fill!.day!(day, x)));
      days.push({ key: day.toISOString().slice(0, 10), values: Object.assign({}, ...values) });
    }
  return {
    couldFail: rules.map((r) => {
      const p = r.prefilter?.fill;
      return p ? qualify(typeof p.couldFail === 'function' ? p.couldFail(x) : p.couldFail, r.code) : { always: true };
    }),
    symbols: symbolRows(
      ref,
      x,
      rules.map((r) => [r.code, r.prefilter?.fill?.symbol] as const),
    ),
    days,
  };
}

/**
 * The stored orders in the order rules' scope that could fail one of this run's (`only`: of these rules, for tests),
 * and what each counts as passed.
 */
export function orderPrefilter(cfg: EngineConfig, ref: ReferenceData, only?: readonly RuleCode[]): OrderPrefilter {
  const x = { cfg, ref };
  const rules = runnable(x, 'exchangeOrder', only);
  return {
    couldFail: rules.map((r) => {
      const p = r.prefilter?.exchangeOrder;
      return p ? qualify(typeof p.couldFail === 'function' ? p.couldFail(x) : p.couldFail, r.code) : { always: true };
    }),
    // (A rule without a pre-filter keeps every order: none is left out to count.)
    counted: rules.map((r) => {
      const counts = r.prefilter?.exchangeOrder?.counts;
      return { code: r.code, when: counts ? qualify(counts, r.code) : null };
    }),
    symbols: symbolRows(
      ref,
      x,
      rules.map((r) => [r.code, r.prefilter?.exchangeOrder?.symbol] as const),
    ),
  };
}

type SymbolValues = (s: SymbolRules, x: RuleInputs) => RefValues;

/** Every symbol of the snapshot (a symbol not listed is `unlisted`), with each rule's values under its own names. */
function symbolRows(
  ref: ReferenceData,
  x: RuleInputs,
  providers: readonly (readonly [RuleCode, SymbolValues | undefined])[],
): RefRow[] {
  return [...(ref.symbols?.values() ?? [])].map((s) => ({
    key: s.symbol,
    values: Object.assign({}, ...providers.map(([code, values]) => (values ? named(code, values(s, x)) : {}))),
  }));
}

function named(code: string, values: RefValues): RefValues {
  return Object.fromEntries(Object.entries(values).map(([name, v]) => [`${code}.${name}`, v]));
}

/** The condition with its reference values' names made the rule's own. */
function qualify<F extends string>(c: Condition<F>, code: string): Condition<F> {
  const op = (o: Operand<F>): Operand<F> => operand(o, code);
  if ('compare' in c) return { ...c, compare: op(c.compare), to: op(c.to) };
  if ('distance' in c) return { distance: [op(c.distance[0]), op(c.distance[1])], over: op(c.over) };
  if ('offStep' in c) return { offStep: op(c.offStep), step: op(c.step) };
  if ('known' in c) return { known: op(c.known) };
  if ('unknown' in c) return { unknown: op(c.unknown) };
  if ('oneOf' in c) return { ...c, oneOf: op(c.oneOf) };
  if ('all' in c) return { all: c.all.map((x) => qualify(x, code)) };
  if ('any' in c) return { any: c.any.map((x) => qualify(x, code)) };
  return c;
}

function operand<F extends string>(o: Operand<F>, code: string): Operand<F> {
  if ('symbol' in o) return { symbol: `${code}.${o.symbol}` };
  if ('day' in o) return { day: `${code}.${o.day}` };
  if ('times' in o) return { times: [operand(o.times[0], code), operand(o.times[1], code)] };
  if ('abs' in o) return { abs: operand(o.abs, code) };
  if ('orZero' in o) return { orZero: operand(o.orZero, code) };
  return o;
}
