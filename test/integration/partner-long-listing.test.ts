import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { syncPartner } from '../helpers/sync.js';
import { listingCost } from '../../src/sources/partner/plan.js';
import type { StageContext } from '../../src/stages/context.js';
import { describeEachStore } from '../helpers/db.js';

/**
 * A long day listing asks two pages ahead once it has shown itself long, and (on a Postgres server) stores two pages
 * at once: it still stores every order of the day, records the day only after its pages, and asks at most one page
 * past the end of the listing (exactly one: the page after the last, asked while the last was on its way).
 */
const NOW = new Date('2026-11-21T15:30:00Z');
const DAYS = ['2026-11-19', '2026-11-20'];

/** A sandbox of two days of `ordersPerDay` partner orders (and next to nothing else), with rate limits lifted. */
async function partnerDays(seed: number, ordersPerDay: number): Promise<{ sandbox: Sandbox; config: Config }> {
  const sandbox = await startSandbox({
    seed,
    days: 2,
    ordersPerDay,
    exchangeOrdersPerDay: 1,
    depositsPerDay: 0,
    withdrawalsPerDay: 0,
    now: NOW,
  });
  const base = loadConfig({ env: { ...sandbox.env } });
  const config = {
    ...base,
    partner: { ...base.partner, wallets: [], publicRateLimitPerSecond: 1000, privateRateLimitPerSecond: 1000 },
  } as Config;
  return { sandbox, config };
}

describeEachStore('a long partner day listing', (ctx) => {
  let sandbox: Sandbox;
  let config: Config;

  beforeAll(async () => {
    ({ sandbox, config } = await partnerDays(23, 640));
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('stores every order of each day for at most one request past the end of its listing', async () => {
    const requests: Record<string, number> = {};
    const off = sandbox.onRequest((info) => {
      if (info.api !== 'partner' || info.path !== '/orders') return;
      const day = info.query.get('from') ?? 'other';
      requests[day] = (requests[day] ?? 0) + 1;
    });
    const stage: StageContext = { store: ctx.store, config, logger: silentLogger(), runId: 'r-long', now: NOW };
    let result;
    try {
      result = await syncPartner(stage, { from: DAYS[0]!, to: '2026-11-21' });
    } finally {
      off();
    }
    for (const day of DAYS) {
      const orders = sandbox.data.partnerOrders().filter((o) => o.createdAt.startsWith(day));
      expect(orders.length, day).toBeGreaterThan(10 * 50);
      const needed = listingCost(orders.length);
      // Two pages ahead past the fourth full page: the one after the last page is asked too, and only that one.
      expect(requests[day], day).toBe(needed + 1);
      const stored = await ctx.store.db
        .selectFrom('partner_order')
        .select('order_id')
        .where('created_at', '>=', new Date(`${day}T00:00:00Z`))
        .where('created_at', '<', new Date(new Date(`${day}T00:00:00Z`).getTime() + 86_400_000))
        .execute();
      expect(stored.map((r) => r.order_id).sort(), day).toEqual(orders.map((o) => o.orderId).sort());
    }
    expect(result.coverage.map((c) => [c.day, c.settled, c.closed, c.pages])).toEqual(
      DAYS.map((day) => [
        day,
        true,
        true,
        listingCost(sandbox.data.partnerOrders().filter((o) => o.createdAt.startsWith(day)).length),
      ]),
    );
    expect(result.inserted).toBe(
      sandbox.data.partnerOrders().filter((o) => DAYS.some((d) => o.createdAt.startsWith(d))).length,
    );
  });
});

/**
 * Pages are stored several at a time: an order the database refuses, in the fourth page of such a write, is
 * quarantined alone with its position in its own page, and every other order of the write is stored.
 */
describeEachStore('a long partner day listing whose write the database refuses', (ctx) => {
  let sandbox: Sandbox;
  let config: Config;

  beforeAll(async () => {
    ({ sandbox, config } = await partnerDays(29, 400));
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('quarantines the refused order with its page position and stores the rest', async () => {
    const day = DAYS[0]!;
    // The listing is newest first: the victim is the 8th order of the listing's 4th page (offset 150).
    // (The sandbox keeps its orders oldest first and lists them from the newest, index order for equal times.)
    const listing = sandbox.data
      .partnerOrders()
      .filter((o) => o.createdAt.startsWith(day))
      .reverse();
    const victim = listing[157]!.orderId;
    await sql`alter table partner_order add constraint long_listing_refuses check (order_id <> ${sql.lit(victim)})`.execute(
      ctx.store.db,
    );
    const stage: StageContext = { store: ctx.store, config, logger: silentLogger(), runId: 'r-refused', now: NOW };
    const result = await syncPartner(stage, { from: day, to: DAYS[1]! });
    const stored = await ctx.store.db.selectFrom('partner_order').select('order_id').execute();
    expect(stored.map((r) => r.order_id).sort()).toEqual(
      listing
        .map((o) => o.orderId)
        .filter((id) => id !== victim)
        .sort(),
    );
    const quarantined = await ctx.store.db
      .selectFrom('quarantine')
      .select(['record_key', 'position', 'reason', 'entity'])
      .where('resolved_at', 'is', null)
      .execute();
    expect(quarantined).toHaveLength(1);
    expect(quarantined[0]).toMatchObject({ record_key: victim, position: 7, entity: 'partner_order' });
    expect(quarantined[0]!.reason).toContain('long_listing_refuses');
    expect(result.quarantined).toBe(1);
  });
});
