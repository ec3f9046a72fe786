import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachStore } from '../helpers/db.js';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { syncExchange } from '../helpers/sync.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';

/**
 * Issue 14, point 1: a pair's flows run up to the closing snapshot's own time. A deposit and a
 * withdrawal stamped after the run's start (ctx.now) but before the balance snapshot the sync takes
 * are in that snapshot, so the same sync must store them: the payments are listed up to the
 * snapshot's fetch time, not only up to the run's start.
 */
const dir = mkdtempSync(join(tmpdir(), 'rr-payments-until-'));
const configPath = join(dir, 'config.json');
writeFileSync(configPath, JSON.stringify({ exchange: { rateLimitPerSecond: 1000 } }));

let sb: Sandbox;
beforeAll(async () => {
  // stateChanges lists a deposit and a withdrawal stamped at the sandbox's `now`.
  sb = await startSandbox({
    seed: 3,
    days: 1,
    ordersPerDay: 2,
    exchangeOrdersPerDay: 3,
    depositsPerDay: 1,
    withdrawalsPerDay: 1,
    stateChanges: true,
  });
});
afterAll(() => sb.close());

describeEachStore('exchange sync: payments up to the balance snapshot', (ctx) => {
  it('stores a deposit and a withdrawal stamped between the run start and the snapshot', async () => {
    const config = loadConfig({ env: { ...sb.env }, configPath });
    // The run started a minute before the records' time; the snapshot is taken after it.
    const result = await syncExchange(
      { store: ctx.store, config, logger: silentLogger(), runId: null, now: new Date(sb.data.clock() - 60_000) },
      { progress: 'off' },
    );
    expect(result.settled).toBe(true);
    const deposit = sb.data.deposits().find((d) => d.amount === '0.04200000')!;
    const withdrawal = sb.data.withdrawals().find((w) => w.amount === '1500.00')!;
    const deposits = await ctx.store.db
      .selectFrom('exchange_deposit')
      .select('deposit_id')
      .where('deposit_id', '=', deposit.depositId)
      .execute();
    const withdrawals = await ctx.store.db
      .selectFrom('exchange_withdrawal')
      .select('withdrawal_id')
      .where('withdrawal_id', '=', withdrawal.withdrawalId)
      .execute();
    expect(deposits.length).toBe(1);
    expect(withdrawals.length).toBe(1);
  });
});
