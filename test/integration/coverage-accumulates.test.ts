import { expect, it } from 'vitest';
import { sql } from 'kysely';
import { coverageOfDays } from '../../src/store/cursors.js';
import { saveCoverage } from '../../src/store/partner-orders.js';
import { describeEachStore } from '../helpers/db.js';

const DAY = '2026-11-20';
const DAY_MS = Date.parse(`${DAY}T00:00:00Z`);

// Issue 17, "What failed" 4: after a second run the Coverage sheet showed the last scan only (86
// deposits of a day that holds 701), and the day's quarantined count fell to 0 while the
// quarantined record was still open.
describeEachStore('coverage accumulates over runs', (ctx) => {
  it("counts everything stored and still quarantined for a day, not the last scan's numbers", async () => {
    const db = ctx.store.db;
    // Run 1 read the whole day: 701 deposits and one bad record, quarantined.
    await sql`insert into exchange_deposit (deposit_id, amount, currency, address, state, timestamp, raw)
      select 'dep-' || g, 1, 'BTC', 'addr', 'COMPLETED', ${new Date(DAY_MS)}::timestamptz + (g || ' seconds')::interval, '{}'
      from generate_series(1, 701) g`.execute(db);
    // A deposit of the next day, outside the period.
    await sql`insert into exchange_deposit (deposit_id, amount, currency, address, state, timestamp, raw)
      values ('dep-next', 1, 'BTC', 'addr', 'COMPLETED', ${new Date(DAY_MS + 86_400_000 + 5)}, '{}')`.execute(db);
    await db
      .insertInto('quarantine')
      .values([
        { source: 'exchange', endpoint: '/deposits', entity: 'deposit', record_key: 'dep-bad', position: null, raw_text: JSON.stringify({ id: 'dep-bad', timestamp: DAY_MS + 3_600_000, amount: 'x' }), raw_hash: 'h1', reason: 'amount: must be a decimal number (got "x")' },
        { source: 'exchange', endpoint: '/deposits', entity: 'deposit', record_key: 'dep-fixed', position: null, raw_text: JSON.stringify({ id: 'dep-fixed', timestamp: DAY_MS + 7_200_000 }), raw_hash: 'h2', reason: 'was bad', resolved_at: new Date() },
      ])
      .execute();
    await db.insertInto('sync_coverage').values({ source: 'exchange', stream: 'deposits', day: DAY, pages: 1, rows: 701, quarantined: 1, settled: true, run_id: 'run-1' }).execute();
    // Run 2 read from its cursor: 86 new rows of the day, nothing bad; its row replaced run 1's.
    await db.updateTable('sync_coverage').set({ rows: 86, quarantined: 0, run_id: 'run-2' }).where('stream', '=', 'deposits').execute();
    // The partner's day, scanned twice the same way through the partner store.
    await saveCoverage(db, 'default', 'run-1', { day: DAY, stream: 'orders', pages: 1, rows: 0, quarantined: 0, settled: true, detail: null }, new Date());

    const rows = await coverageOfDays(db, 'default', { from: DAY, to: '2026-11-21' });
    const deposits = rows.find((r) => r.source === 'exchange' && r.stream === 'deposits' && r.day === DAY);
    expect(deposits?.rows).toBe(701);
    expect(deposits?.quarantined).toBe(1);
    expect(deposits?.runId).toBe('run-2');
    const orders = rows.find((r) => r.source === 'partner' && r.stream === 'orders');
    expect(orders?.rows).toBe(0);

    // A third scan adds: one more deposit stored for the day shows as 702, whatever that scan read.
    await sql`insert into exchange_deposit (deposit_id, amount, currency, address, state, timestamp, raw)
      values ('dep-late', 1, 'BTC', 'addr', 'COMPLETED', ${new Date(DAY_MS + 86_000_000)}, '{}')`.execute(db);
    await db.updateTable('sync_coverage').set({ rows: 1, run_id: 'run-3' }).where('stream', '=', 'deposits').execute();
    const again = await coverageOfDays(db, 'default', { from: DAY, to: '2026-11-21' });
    expect(again.find((r) => r.stream === 'deposits')?.rows).toBe(702);
  });
});
