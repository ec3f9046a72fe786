import { expect, it } from 'vitest';
import { reconcilePeriod, type ReconcileResult } from '../../src/stages/reconcile.js';
import { setCursor } from '../../src/store/sync/cursors.js';
import { describeEachStore } from '../helpers/db.js';
import { insertOrder, makeConfig, newContext, seedWorld } from './reconcile-seed.js';

/**
 * docs/rules.md X_DEPOSIT_MISSING: an order paid to us that completed after the exchange's deposits were last read
 * (the sync reads the exchange first, the partner after: an order completing in between has its deposit credited after
 * the read) is not reported missing; the next run judges it, changed or not, once the deposits are read past it.
 */
const NIGHT = { from: '2026-11-10', to: '2026-11-11' };
const NEXT = { from: '2026-11-11', to: '2026-11-12' };
const config = makeConfig({ partner: { wallets: ['0xWALLET'], feeRate: '0.01' } });
/** The night's exchange sync read the deposits up to here; the partner sync ran after it. */
const DEPOSITS_READ = Date.parse('2026-11-11T02:00:10Z');
const wallet = '0xWALLET';

describeEachStore('X_DEPOSIT_MISSING waits for the deposits read after the order completed', (ctx) => {
  const db = () => ctx.store.db;
  let n = 0;
  const reconcile = async (period: typeof NIGHT): Promise<ReconcileResult> =>
    reconcilePeriod(await newContext(ctx.store, config, `dh-${++n}`, period), period);
  const depositsReadTo = (ms: number) => setCursor(db(), 'default', 'exchange', 'deposits.time', String(ms));
  const missing = async () =>
    (
      await db()
        .selectFrom('break')
        .select(['key', 'status'])
        .where('code', '=', 'X_DEPOSIT_MISSING')
        .where('key', 'in', ['o-unread', 'o-before', 'o-after', 'o-paid'])
        .orderBy('key')
        .execute()
    ).map((b) => `${b.key} ${b.status}`);

  // One store for the three steps below, in order (each a night of the same account).
  it('judges every order while the deposits were never read (no cursor): nothing waits on an unknown read', async () => {
    await seedWorld(db());
    // The seed's exchange cursors say every stream is read to the period's end: this night, the deposits never were.
    await db().deleteFrom('sync_cursor').where('source', '=', 'exchange').where('name', '=', 'deposits.time').execute();
    await insertOrder(db(), {
      id: 'o-unread',
      created: '2026-11-10T21:00:00Z',
      updated: '2026-11-11T02:00:11Z',
      wallet,
    });
    await reconcile(NIGHT);
    expect(await missing()).toEqual(['o-unread open']);
  });

  it('judges an order completed before the read, and waits for those completed after it', async () => {
    // Paid to our wallet, no deposit: one completed before the read, two during the run, after it.
    await insertOrder(db(), {
      id: 'o-before',
      created: '2026-11-10T22:00:00Z',
      updated: '2026-11-11T02:00:09Z',
      wallet,
    });
    await insertOrder(db(), {
      id: 'o-after',
      created: '2026-11-10T23:00:00Z',
      updated: '2026-11-11T02:00:11Z',
      wallet,
    });
    await insertOrder(db(), { id: 'o-paid', created: '2026-11-10T23:30:00Z', updated: '2026-11-11T02:00:11Z', wallet });
    await depositsReadTo(DEPOSITS_READ);
    const night = await reconcile(NIGHT);
    expect(await missing()).toEqual(['o-before open', 'o-unread open']);
    // In scope and not judgeable yet: skipped, the open break of o-unread (completed after the read too) kept as it was.
    expect(night.ruleResults.find((r) => r.code === 'X_DEPOSIT_MISSING')).toMatchObject({ skipped: 3 });
  });

  it('the next night judges the waiting orders, changed or not: missing if no deposit came, settled if one did', async () => {
    await db()
      .insertInto('exchange_deposit')
      .values({
        deposit_id: 'dep-paid',
        amount: '0.031234567890123456',
        currency: 'ETH',
        address: '0xWALLET',
        tx_hash: '0xo-paid',
        state: 'COMPLETED',
        timestamp: '2026-11-11T02:00:11Z',
        raw: '{}',
      })
      .execute();
    await depositsReadTo(Date.parse('2026-11-12T02:00:10Z'));
    const next = await reconcile(NEXT);
    // Outside the next night's period: o-after and o-unread by their noted hashes (nothing of them changed), o-paid by
    // its deposit.
    expect(next.judged.outsidePeriod.partnerOrders).toBe(3);
    expect(await missing()).toEqual(['o-after open', 'o-before open', 'o-unread open']);
  });
});
