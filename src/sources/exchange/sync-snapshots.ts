/** Exchange sync step: balances, fees, symbols, whitelist and tickers as dated snapshots, each row the database refuses
 * quarantined with its reason.
 */
import type { z } from 'zod';
import { inTransaction } from '../../store/db/database.js';
import {
  balanceSchema,
  feesSchema,
  symbolSchema,
  tickerSchema,
  validateRecords,
  whitelistSchema,
  type Rejected,
} from './schemas.js';
import { rawText, toBalanceRow, toFeeRateRow, toSymbolRow, toTickerRow, toWhitelistRow } from './transform.js';
import {
  insertBalances,
  insertBalanceSnapshot,
  insertFeeRate,
  insertSymbols,
  insertTickers,
  insertWhitelist,
} from '../../store/sync/exchange-records.js';
import type { NewBalance } from '../../store/db/schema.js';
import { handleQuarantine, SOURCE, type ExchangeSync } from './sync-common.js';
import { checkAbort } from '../common/abort.js';
import { headWithStorableBody, writeOrSplit, writeSnapshot, type Refused } from '../common/record-fallback.js';
import { formatZodIssues } from '../common/zod-issues.js';
import type { Config } from '../../config/load.js';

export interface SnapshotsResult {
  balanceSnapshotId: string | null;
  /** Symbols known from /symbols (used to split a full one-millisecond order window). */
  symbols: string[];
}

function wholeRecordRejected(raw: unknown, reason: string): Rejected {
  return { index: 0, raw, reason, key: null };
}

/** The body without the records validation refused (quarantined as received); undefined when there were none. */
function storableBody(body: unknown, invalid: Rejected[]): unknown {
  if (invalid.length === 0) return undefined;
  const bad = new Set(invalid.map((r) => r.index));
  if (Array.isArray(body)) return body.filter((_, i) => !bad.has(i));
  if (body && typeof body === 'object') return Object.fromEntries(Object.entries(body).filter((_, i) => !bad.has(i)));
  return undefined;
}

/** A validated record of a snapshot and its row: what a refused row is quarantined as. */
interface Item<Row> {
  key: string;
  index: number;
  raw: unknown;
  row: Row;
}

/** One item per key, the later occurrence winning (as the store's own dedupe does). */
function itemsOf<Row>(
  valid: Array<{ index: number; raw: unknown }>,
  rows: Row[],
  keyOf: (row: Row) => string,
): Array<Item<Row>> {
  const byKey = new Map<string, Item<Row>>();
  valid.forEach((v, i) =>
    byKey.set(keyOf(rows[i]!), { key: keyOf(rows[i]!), index: v.index, raw: v.raw, row: rows[i]! }),
  );
  return [...byKey.values()];
}

/**
 * The response's quarantine: its invalid records, the rows the database refused (with its words),
 * or the whole body when the database refused the snapshot itself; the rows kept resolve earlier
 * entries of theirs.
 */
function quarantineOf<Row>(
  env: ExchangeSync,
  endpoint: string,
  entity: string,
  body: unknown,
  invalid: Rejected[],
  items: Array<Item<Row>>,
) {
  return async (
    trx: ExchangeSync['db'],
    refused: Array<Refused<Item<Row>>>,
    headRefused: string | null,
  ): Promise<void> => {
    const refusedKeys = new Set(refused.map((r) => r.item.key));
    const dbRefused: Rejected[] =
      headRefused !== null
        ? [wholeRecordRejected(body, `${endpoint}: ${headRefused}`)]
        : refused.map((r) => ({ index: r.item.index, raw: r.item.raw, reason: r.reason, key: r.item.key }));
    const kept = items.filter((it) => !refusedKeys.has(it.key)).map((it) => it.key);
    if (refused.length)
      env.logger.warn(
        { endpoint, refused: refused.map((r) => ({ key: r.item.key, reason: r.reason })) },
        'exchange snapshot refused by the database; written row by row, the refused rows quarantined',
      );
    await handleQuarantine(env, trx, endpoint, entity, [...invalid, ...dbRefused], kept);
  };
}

/**
 * A reference snapshot of the exchange (fees, symbols, whitelist, tickers) with its rows and its response's quarantine.
 */
async function storeReference<Row>(
  env: ExchangeSync,
  r: {
    kind: string;
    endpoint: string;
    entity: string;
    body: unknown;
    invalid: Rejected[];
    items: Array<Item<Row>>;
    insert: (trx: ExchangeSync['db'], snapshotId: string, rows: Row[]) => Promise<void>;
  },
): Promise<void> {
  const storable = storableBody(r.body, r.invalid);
  await writeSnapshot(env.db, {
    snapshot: { account: env.account, source: SOURCE, kind: r.kind, fetchedAt: new Date(), bodyText: rawText(r.body) },
    storableBodyText: storable === undefined ? undefined : rawText(storable),
    items: r.items,
    insert: (trx, snapshotId, items) =>
      r.insert(
        trx,
        snapshotId,
        items.map((it) => it.row),
      ),
    quarantine: quarantineOf(env, r.endpoint, r.entity, r.body, r.invalid, r.items),
  });
}

/**
 * Balances (the roll-forward's anchors, always stored with the time they were fetched), then
 * fees, symbols, whitelist and tickers as dated reference snapshots (stored when changed). A
 * row the database refuses (writeOrSplit) is quarantined with its reason and the rest stored:
 * the balance snapshot keeps its other currencies, and the sync goes on.
 */
export async function syncSnapshots(env: ExchangeSync, config: Config): Promise<SnapshotsResult> {
  env.progress.setStage('snapshots');
  const balanceSnapshotId = await syncBalances(env, config.exchange.account);
  checkAbort(env.signal);
  await syncFees(env);
  checkAbort(env.signal);
  const symbols = await syncSymbols(env);
  checkAbort(env.signal);
  await syncReferenceList(env, 'whitelist', 'whitelist', {
    schema: whitelistSchema,
    keyField: 'whitelistId',
    toRow: toWhitelistRow,
    keyOf: (r) => r.whitelist_id,
    insert: insertWhitelist,
  });
  checkAbort(env.signal);
  await syncReferenceList(env, 'tickers', 'ticker', {
    schema: tickerSchema,
    keyField: 'symbol',
    toRow: toTickerRow,
    keyOf: (r) => r.symbol,
    insert: insertTickers,
  });
  checkAbort(env.signal);
  return { balanceSnapshotId, symbols };
}

/**
 * The balances of the configured exchange account as one snapshot; its id, or null when /accounts holds no balance
 * list for the account or the database refused the snapshot itself (both quarantined).
 */
async function syncBalances(env: ExchangeSync, exchangeAccount: string): Promise<string | null> {
  // The exchange takes the balances at some instant between the request and its answer: both are kept, and the
  // roll-forward places the fills stamped between them on whichever side of the snapshot balances.
  const requestedAt = new Date();
  const accounts = await env.client.accounts(env.signal);
  const fetchedAt = new Date();
  env.balancesFetchedAtMs = fetchedAt.getTime();
  env.counters.pages++;
  const map = accounts.body as Record<string, unknown> | null;
  const list = map && typeof map === 'object' && !Array.isArray(map) ? map[exchangeAccount] : undefined;
  if (!Array.isArray(list)) {
    await inTransaction(env.db, (trx) =>
      handleQuarantine(
        env,
        trx,
        'GET /accounts',
        'balance',
        [
          wholeRecordRejected(
            accounts.body,
            `${exchangeAccount}: the configured exchange.account is not a balance list in /accounts`,
          ),
        ],
        [],
      ),
    );
    return null;
  }
  const validated = validateRecords(balanceSchema, list, 'currency');
  const items = itemsOf(validated.valid, validated.valid.map(toBalanceRow), (r) => r.currency);
  const rows = items.map((it) => it.row);
  const header = {
    account: env.account,
    exchangeAccount,
    requestedAt,
    fetchedAt,
    runId: env.runId,
    rawText: rawText(list),
  };
  const storable = storableBody(list, validated.invalid);
  const insertHeader = (trx: ExchangeSync['db'], rows: NewBalance[]) =>
    headWithStorableBody(trx, header.rawText, storable === undefined ? undefined : rawText(storable), (raw) =>
      insertBalanceSnapshot(trx, { ...header, rawText: raw, rows }),
    );
  const quarantine = quarantineOf(env, 'GET /accounts', 'balance', list, validated.invalid, items);
  let snapshotId: string | null = null;
  const split = await writeOrSplit(
    env.db,
    items,
    async () => {
      snapshotId = await inTransaction(env.db, async (trx) => {
        const id = await insertHeader(trx, rows);
        await quarantine(trx, [], null);
        return id;
      });
    },
    (trx, it) => insertBalances(trx, snapshotId!, [it.row]),
    (trx, _kept, refused, headRefused) => quarantine(trx, refused, headRefused),
    // The header first and whatever rows are refused: the roll-forward needs the others.
    { savepoints: { head: async (trx) => void (snapshotId = await insertHeader(trx, [])) } },
  );
  if (split?.headRefused) snapshotId = null;
  env.counters.balances += split ? split.kept.length : rows.length;
  return snapshotId;
}

/** The fee rates: one record, quarantined whole when it does not validate. */
async function syncFees(env: ExchangeSync): Promise<void> {
  const fees = await env.client.fees(env.signal);
  env.counters.pages++;
  const parsedFees = feesSchema.safeParse(fees.body);
  if (!parsedFees.success) {
    await inTransaction(env.db, (trx) =>
      handleQuarantine(
        env,
        trx,
        'GET /fees',
        'fees',
        [wholeRecordRejected(fees.body, formatZodIssues(parsedFees.error))],
        [],
      ),
    );
    return;
  }
  await storeReference(env, {
    kind: 'fees',
    endpoint: 'GET /fees',
    entity: 'fees',
    body: fees.body,
    invalid: [],
    // One row: refused, it is quarantined under the entity's name (the body has no key of its own).
    items: [{ key: 'fees', index: 0, raw: fees.body, row: toFeeRateRow(parsedFees.data) }],
    insert: async (trx, id, rows) => {
      for (const row of rows) await insertFeeRate(trx, id, row);
    },
  });
}

/**
 * The symbols: an object whose values are SymbolStatus (key naming unspecified). Returns every symbol listed, also
 * one the database refused: order windows are split by it all the same.
 */
async function syncSymbols(env: ExchangeSync): Promise<string[]> {
  const symbols = await env.client.symbols(env.signal);
  env.counters.pages++;
  const entries: Array<[string, unknown]> = Array.isArray(symbols.body)
    ? symbols.body.map((v, i) => [String((v as Record<string, unknown>)?.symbol ?? i), v])
    : symbols.body && typeof symbols.body === 'object'
      ? Object.entries(symbols.body as Record<string, unknown>)
      : [];
  const validatedSymbols = validateRecords(
    symbolSchema,
    entries.map(([, v]) => v),
    'id',
    true,
  );
  const symbolItems = itemsOf(
    validatedSymbols.valid,
    validatedSymbols.valid.map((v) => toSymbolRow(entries[v.index]![0], v.value)),
    (r) => r.symbol,
  );
  // The key names a rejected symbol better than its numeric id.
  for (const r of validatedSymbols.invalid) r.key = entries[r.index]![0];
  await storeReference(env, {
    kind: 'symbols',
    endpoint: 'GET /symbols',
    entity: 'symbol',
    body: symbols.body,
    invalid: validatedSymbols.invalid,
    items: symbolItems,
    insert: insertSymbols,
  });
  return symbolItems.map((it) => it.row.symbol);
}

/** A reference list the exchange answers as an array of records (the whitelist, the tickers): validated and stored. */
async function syncReferenceList<T, Row>(
  env: ExchangeSync,
  kind: 'whitelist' | 'tickers',
  entity: string,
  list: {
    schema: z.ZodType<T, unknown>;
    keyField: string;
    toRow: (value: T) => Row;
    keyOf: (row: Row) => string;
    insert: (trx: ExchangeSync['db'], snapshotId: string, rows: Row[]) => Promise<void>;
  },
): Promise<void> {
  const answer = await env.client[kind](env.signal);
  env.counters.pages++;
  const records = Array.isArray(answer.body) ? answer.body : [];
  const validated = validateRecords(list.schema, records, list.keyField);
  const items = itemsOf(
    validated.valid,
    validated.valid.map((v) => list.toRow(v.value)),
    list.keyOf,
  );
  await storeReference(env, {
    kind,
    endpoint: `GET /${kind}`,
    entity,
    body: answer.body,
    invalid: validated.invalid,
    items,
    insert: list.insert,
  });
}
