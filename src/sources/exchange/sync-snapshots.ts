/** Exchange sync step: balances, fees, symbols, whitelist and tickers as dated snapshots. */
import { inTransaction } from '../../store/database.js';
import { saveReferenceSnapshot } from '../../store/snapshots.js';
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
import type { NewExchangeSymbol } from '../../store/schema.js';
import { insertBalanceSnapshot, insertFeeRate, insertSymbols, insertTickers, insertWhitelist } from '../../store/exchange-records.js';
import { handleQuarantine, SOURCE, type SyncEnv } from './sync-common.js';
import { checkAbort } from '../common/abort.js';
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

/**
 * Balances (the roll-forward's anchors, always stored with the time they were fetched), then
 * fees, symbols, whitelist and tickers as dated reference snapshots (stored when changed).
 */
export async function syncSnapshots(env: SyncEnv, config: Config): Promise<SnapshotsResult> {
  env.progress.setStage('snapshots');
  const result: SnapshotsResult = { balanceSnapshotId: null, symbols: [] };
  const exchangeAccount = config.exchange.account;

  // ---- balances
  const accounts = await env.client.accounts(env.signal);
  const fetchedAt = new Date();
  env.balancesFetchedAtMs = fetchedAt.getTime();
  env.counters.pages++;
  const map = accounts.body as Record<string, unknown> | null;
  const list = map && typeof map === 'object' && !Array.isArray(map) ? map[exchangeAccount] : undefined;
  if (!Array.isArray(list)) {
    await inTransaction(env.db, (trx) =>
      handleQuarantine(env, trx, 'GET /accounts', 'balance', [wholeRecordRejected(accounts.body, `${exchangeAccount}: the configured exchange.account is not a balance list in /accounts`)], []),
    );
  } else {
    const validated = validateRecords(balanceSchema, list, 'currency');
    const rows = validated.valid.map(toBalanceRow);
    await inTransaction(env.db, async (trx) => {
      result.balanceSnapshotId = await insertBalanceSnapshot(trx, {
        account: env.account,
        exchangeAccount,
        fetchedAt,
        runId: env.runId,
        rawText: rawText(list),
        rows,
      });
      await handleQuarantine(env, trx, 'GET /accounts', 'balance', validated.invalid, rows.map((r) => r.currency));
    });
    env.counters.balances += rows.length;
  }
  checkAbort(env.signal);

  // ---- fees
  const fees = await env.client.fees(env.signal);
  env.counters.pages++;
  const parsedFees = feesSchema.safeParse(fees.body);
  await inTransaction(env.db, async (trx) => {
    if (!parsedFees.success) {
      await handleQuarantine(env, trx, 'GET /fees', 'fees', [wholeRecordRejected(fees.body, formatZodIssues(parsedFees.error))], []);
      return;
    }
    const snap = await saveReferenceSnapshot(trx, { account: env.account, source: SOURCE, kind: 'fees', fetchedAt: new Date(), bodyText: rawText(fees.body) });
    if (snap.changed) await insertFeeRate(trx, snap.id, toFeeRateRow(parsedFees.data));
  });
  checkAbort(env.signal);

  // ---- symbols: an object whose values are SymbolStatus (key naming unspecified)
  const symbols = await env.client.symbols(env.signal);
  env.counters.pages++;
  const entries: Array<[string, unknown]> = Array.isArray(symbols.body)
    ? symbols.body.map((v, i) => [String((v as Record<string, unknown>)?.symbol ?? i), v])
    : symbols.body && typeof symbols.body === 'object'
      ? Object.entries(symbols.body as Record<string, unknown>)
      : [];
  const validatedSymbols = validateRecords(symbolSchema, entries.map(([, v]) => v), 'id', true);
  const symbolRows: NewExchangeSymbol[] = validatedSymbols.valid.map((v) => toSymbolRow(entries[v.index]![0], v.value));
  // The key names a rejected symbol better than its numeric id.
  for (const r of validatedSymbols.invalid) r.key = entries[r.index]![0];
  result.symbols = symbolRows.map((r) => r.symbol);
  await inTransaction(env.db, async (trx) => {
    await handleQuarantine(env, trx, 'GET /symbols', 'symbol', validatedSymbols.invalid, symbolRows.map((r) => r.symbol));
    const snap = await saveReferenceSnapshot(trx, { account: env.account, source: SOURCE, kind: 'symbols', fetchedAt: new Date(), bodyText: rawText(symbols.body) });
    if (snap.changed) await insertSymbols(trx, snap.id, symbolRows);
  });
  checkAbort(env.signal);

  // ---- whitelist
  const whitelist = await env.client.whitelist(env.signal);
  env.counters.pages++;
  const wl = Array.isArray(whitelist.body) ? whitelist.body : [];
  const validatedWl = validateRecords(whitelistSchema, wl, 'whitelistId');
  await inTransaction(env.db, async (trx) => {
    await handleQuarantine(env, trx, 'GET /whitelist', 'whitelist', validatedWl.invalid, validatedWl.valid.map((v) => v.value.whitelistId));
    const snap = await saveReferenceSnapshot(trx, { account: env.account, source: SOURCE, kind: 'whitelist', fetchedAt: new Date(), bodyText: rawText(whitelist.body) });
    if (snap.changed) await insertWhitelist(trx, snap.id, validatedWl.valid.map((v) => toWhitelistRow(v.value)));
  });
  checkAbort(env.signal);

  // ---- tickers
  const tickers = await env.client.tickers(env.signal);
  env.counters.pages++;
  const tk = Array.isArray(tickers.body) ? tickers.body : [];
  const validatedTk = validateRecords(tickerSchema, tk, 'symbol');
  await inTransaction(env.db, async (trx) => {
    await handleQuarantine(env, trx, 'GET /tickers', 'ticker', validatedTk.invalid, validatedTk.valid.map((v) => v.value.symbol));
    const snap = await saveReferenceSnapshot(trx, { account: env.account, source: SOURCE, kind: 'tickers', fetchedAt: new Date(), bodyText: rawText(tickers.body) });
    if (snap.changed) await insertTickers(trx, snap.id, validatedTk.valid.map((v) => toTickerRow(v.value)));
  });
  checkAbort(env.signal);
  return result;
}
