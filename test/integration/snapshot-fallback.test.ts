/**
 * Issue 17 item 1, the snapshots: a row that validates but that the database refuses (a CHECK
 * constraint the schema knows nothing of stands for whatever validation did not foresee) is
 * quarantined with the database's words and its raw record, its neighbours are stored, the sync
 * completes; once the database takes it, the next sync stores it and resolves the entry.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachStore } from '../helpers/db.js';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { parseJsonLossless } from '../../src/decimal/json.js';
import type { Db, Store } from '../../src/store/db/database.js';
import type { StageContext } from '../../src/stages/context.js';
import type { HttpResponse } from '../../src/http/client.js';
import { orderPage, ordersPage, type PartnerClient } from '../../src/sources/partner/client.js';
import { exchangeClientFromConfig, type ExchangeClient } from '../../src/sources/exchange/client.js';
import { parseJsonMarked } from '../../src/sources/exchange/wire.js';
import { writeOrSplit } from '../../src/sources/common/record-fallback.js';
import { syncExchange, syncPartner } from '../helpers/sync.js';
import { FAKE_NOW, makeData, startFakeExchange, type FakeExchange } from './exchange-fake-api.js';

const dir = mkdtempSync(join(tmpdir(), 'rr-snapshot-fallback-'));
const configPath = join(dir, 'config.json');
writeFileSync(
  configPath,
  JSON.stringify({
    exchange: { historyStart: '2026-10-01', rateLimitPerSecond: 1000 },
    http: { retryBaseMs: 1, retryMaxMs: 5, maxRetries: 2, connectTimeoutMs: 2000, bodyTimeoutMs: 5000 },
  }),
);

/** The fake sends one ticker: two, so that a refused one has a neighbour. */
const TICKERS =
  '[{"symbol":"BTC-USD","price_24h":"20000.1","volume_24h":"12.5","last_trade_price":"20001"},{"symbol":"ETH-USD","price_24h":"3000.5","volume_24h":"40","last_trade_price":"3001"}]';

function withTwoTickers(client: ExchangeClient): ExchangeClient {
  return {
    ...client,
    tickers: async (signal) => {
      const r = await client.tickers(signal);
      return { ...r, body: parseJsonMarked(TICKERS), text: TICKERS };
    },
  };
}

async function syncExchangeOnce(store: Store, api: FakeExchange) {
  const config = loadConfig({ env: { EXCHANGE_API_URL: api.url, EXCHANGE_API_TOKEN: api.token }, configPath });
  const ctx: StageContext = { store, config, logger: silentLogger(), runId: null, now: FAKE_NOW };
  const client = withTwoTickers(exchangeClientFromConfig(config, ctx.logger));
  try {
    return await syncExchange(ctx, { progress: 'off', client });
  } finally {
    await client.close();
  }
}

const REFUSED = /^the database refused the record.*snapshot_test_refuses.*\(SQLSTATE 23514\)$/;

async function quarantined(db: Db, entity: string) {
  return db
    .selectFrom('quarantine')
    .select(['record_key', 'reason', 'raw_text', 'resolved_at'])
    .where('entity', '=', entity)
    .orderBy('id')
    .execute();
}

/** The rows of the latest snapshot of a kind, by key. */
async function latestKeys(
  db: Db,
  kind: string,
  table: 'exchange_fee_rate' | 'exchange_symbol' | 'exchange_whitelist_entry' | 'exchange_ticker' | 'partner_currency',
  key: string,
): Promise<string[]> {
  const rows = await sql<{ k: string }>`
    select ${sql.ref(`r.${key}`)}::text as k from ${sql.table(table)} r
    where r.snapshot_id = (select id from reference_snapshot where kind = ${kind} order by fetched_at desc, id desc limit 1)
    order by 1`.execute(db);
  return rows.rows.map((r) => r.k);
}

interface ExchangeCase {
  kind: string;
  entity: string;
  table: 'balance' | 'exchange_fee_rate' | 'exchange_symbol' | 'exchange_whitelist_entry' | 'exchange_ticker';
  /** The CHECK that refuses the victim. */
  check: string;
  /** The victim's quarantine key and a piece of its raw record. */
  key: string;
  raw: string;
  /** The latest snapshot's keys: with the victim refused, then once it is stored. */
  stored: string[];
  after: string[];
  keyColumn: string;
}

const EXCHANGE_CASES: ExchangeCase[] = [
  {
    kind: 'balances',
    entity: 'balance',
    table: 'balance',
    check: `currency <> 'ETH'`,
    key: 'ETH',
    raw: '"currency":"ETH"',
    stored: ['BTC'],
    after: ['BTC', 'ETH'],
    keyColumn: 'currency',
  },
  {
    kind: 'fees',
    entity: 'fees',
    table: 'exchange_fee_rate',
    check: 'maker_rate <> 0.001',
    key: 'fees',
    raw: '"makerRate":"0.001"',
    stored: [],
    after: ['0.001'],
    keyColumn: 'maker_rate',
  },
  {
    kind: 'symbols',
    entity: 'symbol',
    table: 'exchange_symbol',
    check: `symbol <> 'ETH-USD'`,
    key: 'ETH-USD',
    raw: '"base_currency":"ETH"',
    stored: ['BTC-USD'],
    after: ['BTC-USD', 'ETH-USD'],
    keyColumn: 'symbol',
  },
  {
    kind: 'whitelist',
    entity: 'whitelist',
    table: 'exchange_whitelist_entry',
    check: `whitelist_id <> 'wl-1'`,
    key: 'wl-1',
    raw: '"whitelistId":"wl-1"',
    stored: ['wl-0'],
    after: ['wl-0', 'wl-1'],
    keyColumn: 'whitelist_id',
  },
  {
    kind: 'tickers',
    entity: 'ticker',
    table: 'exchange_ticker',
    check: `symbol <> 'ETH-USD'`,
    key: 'ETH-USD',
    raw: '"last_trade_price":"3001"',
    stored: ['BTC-USD'],
    after: ['BTC-USD', 'ETH-USD'],
    keyColumn: 'symbol',
  },
];

for (const c of EXCHANGE_CASES) {
  describeEachStore(`snapshot fallback: exchange ${c.kind} row refused by the database`, (ctx) => {
    let api: FakeExchange;
    beforeAll(async () => {
      api = await startFakeExchange(makeData(60, 20), { fillsOrder: 'newest-first', inclusive: true });
    });
    afterAll(() => api.close());

    it('is quarantined with the reason and its raw record, its neighbours are stored, the sync completes; stored and resolved once accepted', async () => {
      const db = ctx.store.db;
      await sql`alter table ${sql.table(c.table)} add constraint snapshot_test_refuses check (${sql.raw(c.check)})`.execute(
        db,
      );
      const result = await syncExchangeOnce(ctx.store, api);
      // The sync went on past the snapshots: every fill stored.
      expect((await db.selectFrom('exchange_fill').select('exec_id').execute()).length).toBe(api.data.fills.length);
      const q = await quarantined(db, c.entity);
      expect(q.map((r) => r.record_key)).toEqual([c.key]);
      expect(q[0]!.reason).toMatch(REFUSED);
      expect(q[0]!.raw_text).toContain(c.raw);
      expect(q[0]!.resolved_at).toBeNull();
      if (c.kind === 'balances') {
        // The header is written (the roll-forward needs the other currencies) and is the sync's snapshot.
        const snapshots = await db.selectFrom('balance_snapshot').select('id').execute();
        expect(snapshots.map((s) => s.id)).toEqual([result.balanceSnapshotId]);
        const rows = await db
          .selectFrom('balance')
          .select(['currency', 'balance'])
          .where('snapshot_id', '=', result.balanceSnapshotId!)
          .execute();
        expect(rows.map((r) => [r.currency, r.balance.toString()])).toEqual([['BTC', '1.5']]);
      } else {
        expect(await latestKeys(db, c.kind, c.table as Exclude<ExchangeCase['table'], 'balance'>, c.keyColumn)).toEqual(
          c.stored,
        );
      }
      // Every other snapshot kind is complete.
      expect(await latestKeys(db, 'symbols', 'exchange_symbol', 'symbol')).toEqual(
        c.kind === 'symbols' ? ['BTC-USD'] : ['BTC-USD', 'ETH-USD'],
      );
      expect(await latestKeys(db, 'whitelist', 'exchange_whitelist_entry', 'whitelist_id')).toEqual(
        c.kind === 'whitelist' ? ['wl-0'] : ['wl-0', 'wl-1'],
      );

      // The database takes it now: the same content is written again (the snapshot was marked
      // incomplete), the row stored, the entry resolved.
      await sql`alter table ${sql.table(c.table)} drop constraint snapshot_test_refuses`.execute(db);
      const again = await syncExchangeOnce(ctx.store, api);
      if (c.kind === 'balances') {
        const rows = await db
          .selectFrom('balance')
          .select('currency')
          .where('snapshot_id', '=', again.balanceSnapshotId!)
          .orderBy('currency')
          .execute();
        expect(rows.map((r) => r.currency)).toEqual(c.after);
      } else {
        expect(await latestKeys(db, c.kind, c.table as Exclude<ExchangeCase['table'], 'balance'>, c.keyColumn)).toEqual(
          c.after,
        );
        // A third sync of the same content adds no snapshot: the complete one reads "unchanged".
        const count = async () =>
          (await db.selectFrom('reference_snapshot').select('id').where('kind', '=', c.kind).execute()).length;
        const before = await count();
        await syncExchangeOnce(ctx.store, api);
        expect(await count()).toBe(before);
      }
      expect((await quarantined(db, c.entity)).map((r) => r.resolved_at !== null)).toEqual([true]);
    });
  });
}

function respond(text: string, status = 200): HttpResponse {
  return { status, body: parseJsonLossless(text), text, url: 'fake', ms: 0, attempts: 1 };
}

/** A Partner API with reference data and no orders. */
function fakePartner(): PartnerClient {
  return {
    currencies: async () =>
      respond(
        '[{"type":"FIAT","name":"Euro","code":"EUR","precision":2},{"type":"CRYPTO","name":"Ether","code":"ETH","precision":18}]',
      ),
    regions: async () =>
      respond('{"countries":[{"alpha2":"DE","alpha3":"DEU","isBuyAllowed":true,"name":"Germany"}],"usStates":[]}'),
    paymentMethods: async () => respond('[{"type":"CARD","supportedCurrencies":["EUR"]}]'),
    quoteBuy: async () => respond('{}', 404),
    listOrders: async () => ordersPage(respond('[]')),
    getOrder: async () => orderPage(respond('{"errors":[{"type":"NOT_FOUND","message":"order not found"}]}', 404)),
    close: async () => {},
  };
}

function partnerStage(store: Store): StageContext {
  return {
    store,
    config: loadConfig({ env: {} }),
    logger: silentLogger(),
    runId: 'r-snapshot',
    now: new Date('2026-11-22T02:00:00Z'),
  };
}

const syncPartnerOnce = (store: Store) =>
  syncPartner(partnerStage(store), { from: '2026-11-20', to: '2026-11-21' }, {}, { client: fakePartner() });

describeEachStore('snapshot fallback: partner currency refused by the database', (ctx) => {
  it('is quarantined with the reason and its raw record, the other currency is stored, the sync completes; stored and resolved once accepted', async () => {
    const db = ctx.store.db;
    await sql`alter table partner_currency add constraint snapshot_test_refuses check (code <> 'ETH')`.execute(db);
    const result = await syncPartnerOnce(ctx.store);
    expect(result.quarantined).toBe(1);
    const q = await quarantined(db, 'partner_currency');
    expect(q.map((r) => r.record_key)).toEqual(['ETH']);
    expect(q[0]!.reason).toMatch(REFUSED);
    expect(q[0]!.raw_text).toContain('"name":"Ether"');
    expect(await latestKeys(db, 'currencies', 'partner_currency', 'code')).toEqual(['EUR']);
    // The regions and payment methods after it are stored.
    expect(
      (
        await db.selectFrom('reference_snapshot').select('kind').where('source', '=', 'partner').orderBy('id').execute()
      ).map((r) => r.kind),
    ).toEqual(['currencies', 'regions', 'payment_methods']);

    await sql`alter table partner_currency drop constraint snapshot_test_refuses`.execute(db);
    await syncPartnerOnce(ctx.store);
    expect(await latestKeys(db, 'currencies', 'partner_currency', 'code')).toEqual(['ETH', 'EUR']);
    expect((await quarantined(db, 'partner_currency')).map((r) => r.resolved_at !== null)).toEqual([true]);
  });

  it('a snapshot body the database refuses (regions) is quarantined whole with the reason, the next kind is stored', async () => {
    const db = ctx.store.db;
    await db.deleteFrom('reference_snapshot').where('kind', 'in', ['regions', 'payment_methods']).execute();
    await sql`alter table reference_snapshot add constraint snapshot_test_refuses check (kind <> 'regions')`.execute(
      db,
    );
    try {
      const result = await syncPartnerOnce(ctx.store);
      expect(result.quarantined).toBe(1);
      const q = await quarantined(db, 'partner_regions');
      expect(q.map((r) => r.record_key)).toEqual([null]);
      expect(q[0]!.reason).toMatch(
        /^regions: the database refused the record.*snapshot_test_refuses.*\(SQLSTATE 23514\)$/,
      );
      expect(q[0]!.raw_text).toContain('"alpha3":"DEU"');
      expect(
        (
          await db
            .selectFrom('reference_snapshot')
            .select('kind')
            .where('kind', 'in', ['regions', 'payment_methods'])
            .execute()
        ).map((r) => r.kind),
      ).toEqual(['payment_methods']);
    } finally {
      await sql`alter table reference_snapshot drop constraint snapshot_test_refuses`.execute(db);
    }
  });
});

describeEachStore('snapshot fallback: writeOrSplit in savepoints mode', (ctx) => {
  it('a failure that is not a refusal (a lost database) is thrown, and nothing of the split is committed', async () => {
    const db = ctx.store.db;
    const refusal = Object.assign(new Error('violates check constraint'), { code: '23514' });
    const lost = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    let finished = false;
    const write = writeOrSplit(
      db,
      ['a', 'b'],
      async () => {
        throw refusal;
      },
      async (trx, item) => {
        await trx
          .insertInto('sync_cursor')
          .values({ account: 'split-test', source: 'exchange', name: item, value: item })
          .execute();
        if (item === 'b') throw lost;
      },
      async () => {
        finished = true;
      },
      { savepoints: {} },
    );
    await expect(write).rejects.toBe(lost);
    expect(finished).toBe(false);
    expect(await db.selectFrom('sync_cursor').select('name').where('account', '=', 'split-test').execute()).toEqual([]);
  });
});

describeEachStore('snapshot fallback: a record that failed validation holds what jsonb cannot (\\u0000)', (ctx) => {
  let api: FakeExchange;
  beforeAll(async () => {
    api = await startFakeExchange(makeData(30, 10), { fillsOrder: 'newest-first', inclusive: true });
  });
  afterAll(() => api.close());

  const ACCOUNTS =
    '{"primary":[{"currency":"BTC","balance":"1.5","available":"1.25","balance_local":"30000.12","available_local":"25000.10","rate":"20000.08"},{"currency":"E\\u0000TH","balance":"1","available":"1","balance_local":"1","available_local":"1","rate":"1"}]}';
  const WHITELIST =
    '[{"whitelistId":"wl-0","name":"cold","currency":"BTC"},{"whitelistId":"wl-\\u0000","name":"ops","currency":"BTC"}]';

  async function sync() {
    const config = loadConfig({ env: { EXCHANGE_API_URL: api.url, EXCHANGE_API_TOKEN: api.token }, configPath });
    const base = exchangeClientFromConfig(config, silentLogger());
    const answer = (text: string) => async (signal?: AbortSignal) => ({
      ...(await base.fees(signal)),
      body: parseJsonMarked(text),
      text,
    });
    const client: ExchangeClient = { ...base, accounts: answer(ACCOUNTS), whitelist: answer(WHITELIST) };
    try {
      return await syncExchange(
        { store: ctx.store, config, logger: silentLogger(), runId: null, now: FAKE_NOW },
        { progress: 'off', client },
      );
    } finally {
      await base.close();
    }
  }

  it('the snapshot keeps its valid rows under a body without that record (quarantined by validation as received)', async () => {
    const db = ctx.store.db;
    const result = await sync();
    expect(result.balanceSnapshotId).not.toBeNull();
    const balances = await db
      .selectFrom('balance')
      .select('currency')
      .where('snapshot_id', '=', result.balanceSnapshotId!)
      .execute();
    expect(balances.map((b) => b.currency)).toEqual(['BTC']);
    const header = await db
      .selectFrom('balance_snapshot')
      .select(sql<string>`raw::text`.as('raw'))
      .where('id', '=', result.balanceSnapshotId!)
      .executeTakeFirstOrThrow();
    expect(header.raw).toContain('"currency": "BTC"');
    expect(header.raw).not.toContain('ETH');
    expect(await latestKeys(db, 'whitelist', 'exchange_whitelist_entry', 'whitelist_id')).toEqual(['wl-0']);
    const q = await db.selectFrom('quarantine').select(['entity', 'reason', 'raw_text']).orderBy('id').execute();
    expect(q.map((r) => r.entity).sort()).toEqual(['balance', 'whitelist']);
    for (const r of q) {
      expect(r.reason).toMatch(/holds the character \\u0000/);
      expect(r.raw_text).toContain('\\u0000');
    }
    // The same content again: no new whitelist snapshot (the stored body is the same), no new entry.
    await sync();
    expect(
      (await db.selectFrom('reference_snapshot').select('id').where('kind', '=', 'whitelist').execute()).length,
    ).toBe(1);
    expect((await db.selectFrom('quarantine').select('id').execute()).length).toBe(2);
  });
});

describeEachStore('snapshot fallback: a lost database during the row-by-row write', (ctx) => {
  let api: FakeExchange;
  beforeAll(async () => {
    api = await startFakeExchange(makeData(30, 10), { fillsOrder: 'newest-first', inclusive: true });
  });
  afterAll(() => api.close());

  it('fails the stage, and the split commits nothing (no balance snapshot without its rows)', async () => {
    const db = ctx.store.db;
    // The first balance write is refused (a record's fault: the split starts), the next one fails
    // as a terminated session does (57P01, not a record's fault).
    // A sequence counts the calls: its nextval survives the rollback of the failed statement.
    await sql`create sequence snapshot_test_calls`.execute(db);
    await sql`create function snapshot_test_fail() returns trigger language plpgsql as $$
      begin
        if nextval('snapshot_test_calls') = 1 then
          raise exception 'refused for the test' using errcode = '23514';
        end if;
        raise exception 'terminating connection due to administrator command' using errcode = '57P01';
      end $$`.execute(db);
    await sql`create trigger snapshot_test_fail before insert on balance for each row execute function snapshot_test_fail()`.execute(
      db,
    );
    await expect(syncExchangeOnce(ctx.store, api)).rejects.toMatchObject({ code: '57P01' });
    expect(await db.selectFrom('balance_snapshot').select('id').execute()).toEqual([]);
    expect(await db.selectFrom('quarantine').select('id').execute()).toEqual([]);
  });
});
