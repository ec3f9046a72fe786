/** The rules' pre-filter descriptions (domain/prefilter.ts) as SQL: a condition over the columns of the query that
 * reads the records, and the reference values as a recordset joined by symbol or day. The rules say when a record
 * could fail; this module only spells it, so no rule's condition is written here.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Condition, Operand, RefRow } from '../../domain/index.js';

/** A recordset of reference values: each name as a safe column (v0, v1...), numeric, beside the key column. */
export interface RefTable {
  /** `jsonb_to_recordset(<rows>) as x(<columns>)`. */
  recordset: RawBuilder<unknown>;
  /** The column of a name, qualified by the table's alias; NULL for a name no row carries. */
  value: (name: string) => RawBuilder<unknown>;
}

export function refTable(
  rows: readonly RefRow[],
  key: { name: string; type: 'text' | 'date' },
  alias: string,
): RefTable {
  const names = [...new Set(rows.flatMap((r) => Object.keys(r.values)))];
  const ids = new Map(names.map((n, i) => [n, `v${i}`]));
  const json = JSON.stringify(
    rows.map((r) => ({
      [key.name]: r.key,
      ...Object.fromEntries(Object.entries(r.values).map(([n, v]) => [ids.get(n)!, v])),
    })),
  );
  const columns = sql.raw([`${key.name} ${key.type}`, ...names.map((n) => `${ids.get(n)} numeric`)].join(', '));
  return {
    recordset: sql`jsonb_to_recordset(${json}::jsonb) as x(${columns})`,
    value: (name) => {
      const id = ids.get(name);
      return id ? sql.ref(`${alias}.${id}`) : sql`null::numeric`;
    },
  };
}

/** What a condition's terms read in the query: each field's column, the symbol's and the day's values. */
export interface ConditionColumns<F extends string> {
  fields: Readonly<Record<F, RawBuilder<unknown>>>;
  symbol: RefTable;
  /** The symbol's row is missing (`unlisted`). */
  unlisted: RawBuilder<SqlBool>;
  day?: RefTable;
}

/**
 * The records any of the conditions keeps: one per rule, each true on an unknown (NULL) input, so a record a rule
 * could fail is never left out. None: no record.
 */
export function keepsSql<F extends string>(
  conditions: readonly Condition<F>[],
  columns: ConditionColumns<F>,
): RawBuilder<SqlBool> {
  if (conditions.length === 0) return sql<SqlBool>`false`;
  return sql<SqlBool>`(${sql.join(
    conditions.map((c) => sql`coalesce(${conditionSql(c, columns)}, true)`),
    sql` or `,
  )})`;
}

const COMPARISONS = new Set(['<', '<=', '>', '>=', '=', '<>']);
/** Widening of a comparison on the keeping side: far above the error of the rules' 60-digit Decimal arithmetic. */
const MARGIN = sql.raw('1e-50');

export function conditionSql<F extends string>(c: Condition<F>, cols: ConditionColumns<F>): RawBuilder<SqlBool> {
  const op = (o: Operand<F>) => operandSql(o, cols);
  if ('compare' in c) {
    if (!COMPARISONS.has(c.is)) throw new Error(`prefilter: unknown comparison ${c.is}`);
    const [left, right] = [op(c.compare), op(c.to)];
    if (c.margin && c.is === '<') return sql<SqlBool>`(${left} < ${right} + abs(${left}) * ${MARGIN})`;
    if (c.margin && c.is === '>') return sql<SqlBool>`(${left} > ${right} - abs(${left}) * ${MARGIN})`;
    return sql<SqlBool>`(${left} ${sql.raw(c.is)} ${right})`;
  }
  if ('distance' in c) {
    const [a, b, over] = [op(c.distance[0]), op(c.distance[1]), op(c.over)];
    return sql<SqlBool>`(abs(${a} - ${b}) > ${over} - (abs(${a}) + abs(${b})) * ${MARGIN})`;
  }
  if ('offStep' in c) {
    const step = op(c.step);
    return sql<SqlBool>`(${step} <> 0 and mod(${op(c.offStep)}, ${step}) <> 0)`;
  }
  if ('known' in c) return sql<SqlBool>`(${op(c.known)} is not null)`;
  if ('unknown' in c) return sql<SqlBool>`(${op(c.unknown)} is null)`;
  if ('oneOf' in c)
    return c.values.length
      ? sql<SqlBool>`coalesce(${op(c.oneOf)} in (${sql.join(c.values)}), false)`
      : sql<SqlBool>`false`;
  if ('unlisted' in c) return cols.unlisted;
  if ('all' in c) return joinedSql(c.all, cols, 'and');
  if ('any' in c) return joinedSql(c.any, cols, 'or');
  return sql<SqlBool>`true`;
}

/** Conditions joined by `and` (none: true) or by `or` (none: false). */
function joinedSql<F extends string>(
  conditions: readonly Condition<F>[],
  cols: ConditionColumns<F>,
  by: 'and' | 'or',
): RawBuilder<SqlBool> {
  if (!conditions.length) return by === 'and' ? sql`true` : sql`false`;
  return sql<SqlBool>`(${sql.join(
    conditions.map((x) => conditionSql(x, cols)),
    sql` ${sql.raw(by)} `,
  )})`;
}

function operandSql<F extends string>(o: Operand<F>, cols: ConditionColumns<F>): RawBuilder<unknown> {
  if ('field' in o) return cols.fields[o.field];
  if ('symbol' in o) return cols.symbol.value(o.symbol);
  if ('day' in o) {
    if (!cols.day) throw new Error(`prefilter: no day values here (${o.day})`);
    return cols.day.value(o.day);
  }
  if ('value' in o) return sql`${sql.lit(o.value)}::numeric`;
  if ('times' in o) return sql`(${operandSql(o.times[0], cols)} * ${operandSql(o.times[1], cols)})`;
  if ('abs' in o) return sql`abs(${operandSql(o.abs, cols)})`;
  return sql`coalesce(${operandSql(o.orZero, cols)}, 0)`;
}
