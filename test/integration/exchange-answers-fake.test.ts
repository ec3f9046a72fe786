import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachStore } from '../helpers/db.js';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import type { Store } from '../../src/store/db/database.js';
import { syncExchange } from '../helpers/sync.js';
import { FAKE_NOW, makeData, startFakeExchange, type FakeExchange } from './exchange-fake-api.js';

/**
 * Deposits and withdrawals from a server whose lists run oldest first and are cut silently at
 * 40 records (the sandbox cuts newest-first lists): the answer's upper tail shows the cut, and
 * the window is walked upwards, nothing missed.
 */
const dir = mkdtempSync(join(tmpdir(), 'rr-exchange-answers-'));
const configPath = join(dir, 'config.json');
writeFileSync(
  configPath,
  JSON.stringify({
    exchange: { historyStart: '2026-10-01', rateLimitPerSecond: 1000 },
    http: { retryBaseMs: 1, retryMaxMs: 5 },
  }),
);

function sync(store: Store, api: FakeExchange) {
  const config = loadConfig({ env: { EXCHANGE_API_URL: api.url, EXCHANGE_API_TOKEN: api.token }, configPath });
  return syncExchange(
    { store, config, logger: silentLogger(), runId: null, now: FAKE_NOW, signal: undefined },
    { progress: 'off' },
  );
}

for (const inclusive of [true, false]) {
  describeEachStore(
    `exchange payments cut at 40, oldest kept (${inclusive ? 'inclusive' : 'exclusive'} bounds)`,
    (ctx) => {
      let api: FakeExchange;
      beforeAll(async () => {
        api = await startFakeExchange(makeData(300, 100), { inclusive, paymentsCut: 40 });
      });
      afterAll(() => api.close());

      it('walks the window upwards from the cut answer and stores every deposit and withdrawal', async () => {
        const count = (path: string) => api.requests.filter((r) => r.split('?')[0] === `/v3/exchange${path}`).length;
        const result = await sync(ctx.store, api);
        expect(result.settled).toBe(true);
        const deposits = await ctx.store.db
          .selectFrom('exchange_deposit')
          .select(['deposit_id', 'state'])
          .orderBy('deposit_id')
          .execute();
        expect(deposits.map((d) => [d.deposit_id, d.state])).toEqual(
          [...api.data.deposits]
            .sort((a, b) => a.depositId.localeCompare(b.depositId))
            .map((d) => [d.depositId, d.state]),
        );
        const withdrawals = await ctx.store.db
          .selectFrom('exchange_withdrawal')
          .select('withdrawal_id')
          .orderBy('withdrawal_id')
          .execute();
        expect(withdrawals.map((w) => w.withdrawal_id)).toEqual(api.data.withdrawals.map((w) => w.withdrawalId).sort());
        expect(result.cursors['deposits.maxAnswer']).toBe('40');
        // 150 deposits: the cut answer, its lower tail (nothing new), then pages of 40 upwards
        // until one below 40: 1 + 1 + 3 = 5. 40 withdrawals: the answer and its two tails.
        expect(count('/deposits')).toBe(5);
        expect(count('/withdrawals')).toBe(3);

        const before = api.requests.length;
        await sync(ctx.store, api);
        const again = api.requests.slice(before).map((r) => r.split('?')[0]);
        expect(again.filter((p) => p === '/v3/exchange/deposits')).toHaveLength(1);
        expect(again.filter((p) => p === '/v3/exchange/withdrawals')).toHaveLength(1);
      });
    },
  );
}
