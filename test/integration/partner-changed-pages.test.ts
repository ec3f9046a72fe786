import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { describeEachStore } from '../helpers/db.js';
import { insertOrder } from './reconcile-seed.js';
import { partnerOrdersChangedOutside } from '../../src/store/recon/partner-reads.js';

/**
 * The partner orders judged for a change outside the period, read in pages (store/recon/partner-reads.ts): every
 * changed order not created in the period once, in order_id order, whether it changed itself or its hash's deposit
 * did; none of the period's, none unchanged. Read in pages of two and of three, so that paging is what is tested, and
 * in one page of a hundred.
 */
describeEachStore('partner orders changed outside the period, page by page', (ctx) => {
  const span = { from: new Date('2026-11-20T00:00:00Z'), to: new Date('2026-11-21T00:00:00Z') };

  it('gives each changed order outside the period once, in key order, whatever the page size', async () => {
    const db = ctx.store.db;
    // before the judgement: unchanged since, so never read
    for (const id of ['a-old', 'm-old']) await insertOrder(db, { id, created: '2026-11-10T00:00:00Z' });
    await insertOrder(db, { id: 'hash-claimant', created: '2026-11-11T00:00:00Z', tx: '0xshared' });
    const since = (await sql<{ s: string }>`select pg_current_snapshot()::text as s`.execute(db)).rows[0]!.s;
    // after it: seven orders of other days (one in the period's future), two of the period
    const outside = ['b', 'c', 'd', 'e', 'f', 'g', 'h'];
    for (const [i, id] of outside.entries())
      await insertOrder(db, { id, created: i === 6 ? '2026-11-22T00:00:00Z' : `2026-11-1${i}T00:00:00Z` });
    for (const id of ['p1', 'p2']) await insertOrder(db, { id, created: '2026-11-20T00:00:00Z' });
    // a deposit that arrives with the unchanged claimant's hash judges that order again
    await sql`insert into exchange_deposit (account, deposit_id, amount, currency, address, tx_hash, state, timestamp, raw)
      values ('default', 'dep-1', 1, 'ETH', '0xOURS', '0xshared', 'COMPLETED', '2026-11-11T01:00:00Z', '{}')`.execute(
      db,
    );

    const expected = ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'hash-claimant'];
    for (const size of [2, 3, 100]) {
      const pages: string[][] = [];
      for await (const page of partnerOrdersChangedOutside(db, 'default', span, since, size))
        pages.push(page.map((o) => o.orderId));
      expect(pages.flat()).toEqual(expected);
      expect(pages.every((p, i) => p.length === size || i === pages.length - 1)).toBe(true);
    }
  });
});
