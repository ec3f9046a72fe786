/** The SQL of a record kind, built from the registry (src/domain/record-kinds.ts): its row by key, its day, whether
 * it lies in a span, whether it changed since the account was last judged.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { DATED_KINDS, type RecordKind, type RecordKindName } from '../../domain/index.js';
import { EXCHANGE_ID, inSpan, judgedForChange } from './changes.js';
import type { Span } from '../db/keyset.js';

/** A text key as the kind's key column holds it (a bigint only when the text is one: other keys match nothing). */
export function keyOf(kind: RecordKind, key: RawBuilder<unknown>): RawBuilder<unknown> {
  return kind.keyType === 'bigint' ? sql`(case when ${key} ~ ${EXCHANGE_ID} then ${key}::bigint end)` : key;
}

function timeOf(kind: RecordKind, alias: string): RawBuilder<unknown> {
  const columns = (kind.time ?? []).map((c) => sql.ref(`${alias}.${c}`));
  return columns.length === 1 ? columns[0]! : sql`coalesce(${sql.join(columns)})`;
}

const dayText = (time: RawBuilder<unknown>) => sql<string>`to_char(${time} at time zone 'UTC', 'YYYY-MM-DD')`;

/** The record of the key exists with `where` holding over its row (aliased r). */
function rowWhere(
  kind: RecordKind,
  account: string,
  key: RawBuilder<unknown>,
  where: RawBuilder<SqlBool>,
): RawBuilder<SqlBool> {
  return sql<SqlBool>`exists (select 1 from ${sql.table(kind.table!)} r
    where r.account = ${account} and ${sql.ref(`r.${kind.key!}`)} = ${keyOf(kind, key)} and ${where})`;
}

/** The UTC day (YYYY-MM-DD) of the key's record; a kind also placed on other records' days: its earliest. */
export function recordDay(kind: RecordKind, account: string, key: RawBuilder<unknown>): RawBuilder<string | null> {
  const own = sql<string | null>`(select ${dayText(timeOf(kind, 'r'))} from ${sql.table(kind.table!)} r
    where r.account = ${account} and ${sql.ref(`r.${kind.key!}`)} = ${keyOf(kind, key)})`;
  const also = kind.alsoOnDaysOf;
  if (!also) return own;
  return sql<
    string | null
  >`coalesce(${own}, (select ${dayText(sql`min(${sql.ref(`a.${also.time}`)})`)} from ${sql.table(also.table)} a
    where a.account = ${account} and ${sql.ref(`a.${also.foreignKey}`)} = ${keyOf(kind, key)}))`;
}

/** The key's record lies in the span: by its own time, or by a record that also places it (an order's fills). */
export function placedIn(kind: RecordKind, account: string, key: RawBuilder<unknown>, span: Span): RawBuilder<SqlBool> {
  const own = rowWhere(kind, account, key, inSpan(timeOf(kind, 'r'), span));
  const also = kind.alsoOnDaysOf;
  if (!also) return own;
  return sql<SqlBool>`(${own} or exists (select 1 from ${sql.table(also.table)} a
    where a.account = ${account} and ${sql.ref(`a.${also.foreignKey}`)} = ${keyOf(kind, key)}
      and ${inSpan(sql.ref(`a.${also.time}`), span)}))`;
}

/**
 * The key's record was judged for a change since `since` (store/recon/changes.ts judgedForChange: its own row, or what a
 * change left behind on it); null: every record. A kind whose changes are not tracked: never.
 */
export function changedRecord(
  kind: RecordKind,
  account: string,
  key: RawBuilder<unknown>,
  since: string | null,
): RawBuilder<SqlBool> {
  if (!kind.tracked) return sql<SqlBool>`false`;
  if (since === null) return sql<SqlBool>`true`;
  const row: Partial<Record<RecordKindName, RawBuilder<SqlBool>>> = {
    partnerOrder: judgedForChange.partnerOrder('r', account, since),
    fill: judgedForChange.fill('r', account, since),
    deposit: judgedForChange.payment('r', since),
    withdrawal: judgedForChange.payment('r', since),
  };
  if (kind.name === 'exchangeOrder') return judgedForChange.exchangeOrder(keyOf(kind, key), account, since);
  const where = row[kind.name];
  if (!where) throw new Error(`no change condition for the record kind ${kind.name}`);
  return rowWhere(kind, account, key, where);
}

/**
 * A CASE over a break's entity (an SQL text expression), one branch per dated record kind, else `otherwise`.
 */
export function byEntity(
  entity: RawBuilder<unknown>,
  branch: (kind: RecordKind) => RawBuilder<unknown>,
  otherwise: RawBuilder<unknown>,
): RawBuilder<unknown> {
  const whens = DATED_KINDS.map((k) => sql`when ${entity} = ${k.name} then ${branch(k)}`);
  return sql`(case ${sql.join(whens, sql` `)} else ${otherwise} end)`;
}
