import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { evidenceDigest, inUtc, keepSignedRecords } from '../../src/store/workflow/close-records.js';
import {
  breaksOnClosedPeriods,
  closedPeriodChanges,
  closeTouchedSince,
  recordCloseChanges,
  type ValueChanges,
} from '../../src/store/workflow/close-changes.js';
import { getClose, insertClose, markReopened, type CloseRecord } from '../../src/store/workflow/closes.js';
import { currentSnapshot } from '../../src/store/recon/changes.js';
import { inTransaction } from '../../src/store/db/database.js';
import { spanOf } from '../../src/store/db/keyset.js';
import { createRun } from '../../src/store/runs/runs.js';
import { withUsdImpact } from '../../src/report/adjustment-impact.js';
import { UsdRates } from '../../src/report/usd-rates.js';
import { Decimal } from '../../src/decimal/decimal.js';
import { describeEachStore } from '../helpers/db.js';
import { insertFill, insertOrder } from './reconcile-seed.js';

const PERIOD = { from: '2026-11-10', to: '2026-11-11' };
const CONTEXT = { rulesetVersion: 'r1', configHash: 'c1' };
const RATES = new UsdRates({ balances: [{ currency: 'EUR', rate: new Decimal('1.08') }] });
const value: ValueChanges = (stream, r, changes) => withUsdImpact(stream, r.before, r.after, changes, RATES);

/** close_change as stored, in key order: what the report reads. */
async function stored(db: Parameters<typeof getClose>[0], closeId: string) {
  const r = await sql<{
    stream: string;
    record_id: string;
    field: string;
    before: string | null;
    after: string | null;
    usd_impact: Decimal | null;
    run_id: string;
  }>`select stream, record_id, field, before, after, usd_impact, run_id from close_change where close_id = ${closeId}
    order by stream collate "C", record_id collate "C", field collate "C"`.execute(db);
  return r.rows.map((c) => ({ ...c, usd_impact: c.usd_impact?.toFixed() ?? null }));
}

/**
 * Prior-period adjustments (docs/closing.md "Late data against a closed period"): each reconcile brings close_change in
 * step with the records of a signed period, keeping the first run that saw a change and the latest value, deleting a
 * change reverted; a reopened close is no longer listed.
 */
describeEachStore('prior-period adjustments', (ctx) => {
  let close: CloseRecord;
  const record = (runId: string, at: string) =>
    inTransaction(ctx.store.db, (trx) => recordCloseChanges(trx, close, { id: runId, at: new Date(at) }, value));

  it('signs a period with an order and two fills', async () => {
    const db = ctx.store.db;
    await insertOrder(db, { id: 'o-1', created: '2026-11-10T08:00:00Z', inputAmount: '100' });
    await insertFill(db, {
      execId: '10',
      exOrdId: '7',
      price: '3000',
      qty: '0.5',
      fee: '1',
      at: '2026-11-10T10:00:00Z',
    });
    await insertFill(db, {
      execId: '11',
      exOrdId: '7',
      price: '3000',
      qty: '0.1',
      fee: '1',
      at: '2026-11-10T11:00:00Z',
    });
    await createRun(db, { account: 'default', command: 'reconcile', id: 'run-0', ...fromTo(PERIOD) });
    const live = await inTransaction(db, async (trx) => {
      await inUtc(trx);
      return evidenceDigest(trx, { account: 'default', span: spanOf(PERIOD) }, CONTEXT);
    });
    close = {
      id: 'close-a',
      account: 'default',
      period: PERIOD,
      by: 'alice',
      at: new Date('2026-11-11T09:00:00Z'),
      note: null,
      runId: 'run-0',
      digest: live.digest,
      records: live.records,
      ...CONTEXT,
      workbook: '/tmp/signed.xlsx',
      workbookSha256: 'ab',
      state: 'signed',
      reopenedBy: null,
      reopenedAt: null,
      reopenReason: null,
    };
    await inTransaction(db, async (trx) => {
      await inUtc(trx);
      await insertClose(trx, close, []);
      await keepSignedRecords(trx, close.id, 'default', spanOf(PERIOD));
    });
    expect(await record('run-1', '2026-11-12T02:00:00Z')).toBe(0);
    expect(await stored(db, close.id)).toEqual([]);
  });

  it('records each changed field with its USD impact and the run that saw it; a re-run changes nothing', async () => {
    const db = ctx.store.db;
    const before = await currentSnapshot(db);
    await sql`update exchange_fill set qty = '0.6', price = '3100' where exec_id = 10`.execute(db);
    await sql`update partner_order set input_amount = '110', order_state = 'REFUNDED' where order_id = 'o-1'`.execute(
      db,
    );
    await insertFill(db, {
      execId: '12',
      exOrdId: '7',
      price: '2000',
      qty: '0.25',
      fee: '1',
      at: '2026-11-10T12:00:00Z',
    });
    expect(await closeTouchedSince(db, close, before.snapshot)).toBe(true);
    expect(await record('run-2', '2026-11-13T02:00:00Z')).toBe(5);
    const first = await stored(db, close.id);
    expect(first).toEqual([
      // qty at the old price, then the price at the new qty: 0.1 x 3000 + 0.6 x 100 = 360 = 0.6 x 3100 - 0.5 x 3000
      {
        stream: 'fill',
        record_id: '10',
        field: 'price',
        before: '3000',
        after: '3100',
        usd_impact: '60',
        run_id: 'run-2',
      },
      {
        stream: 'fill',
        record_id: '10',
        field: 'qty',
        before: '0.5',
        after: '0.6',
        usd_impact: '300',
        run_id: 'run-2',
      },
      // a new fill: its whole notional, 0.25 x 2000 USD
      expect.objectContaining({ record_id: '12', field: '*', before: null, usd_impact: '500', run_id: 'run-2' }),
      // 10 EUR at 1.08; a state moves no money
      expect.objectContaining({ record_id: 'o-1', field: 'input_amount', usd_impact: '10.8' }),
      expect.objectContaining({ record_id: 'o-1', field: 'order_state', before: 'COMPLETED', usd_impact: null }),
    ]);
    expect(await record('run-3', '2026-11-14T02:00:00Z')).toBe(5);
    expect(await stored(db, close.id)).toEqual(first);
  });

  it('keeps the first run that saw a change but the latest value, and deletes a change reverted', async () => {
    const db = ctx.store.db;
    await sql`update exchange_fill set qty = '0.7' where exec_id = 10`.execute(db);
    await sql`update exchange_fill set price = '3000' where exec_id = 10`.execute(db);
    await record('run-4', '2026-11-15T02:00:00Z');
    const fill10 = (await stored(db, close.id)).filter((c) => c.record_id === '10');
    expect(fill10).toEqual([
      {
        stream: 'fill',
        record_id: '10',
        field: 'qty',
        before: '0.5',
        after: '0.7',
        usd_impact: '600',
        run_id: 'run-2',
      },
    ]);
  });

  it('reads the signed closes with their changes, largest impact first, and marks breaks on their period', async () => {
    const db = ctx.store.db;
    const [read] = await closedPeriodChanges(db, 'default', 2);
    expect(read).toMatchObject({ closeId: 'close-a', period: PERIOD, by: 'alice', count: 4 });
    expect(read!.usdTotal?.toFixed()).toBe('1110.8');
    expect(read!.changes.map((c) => [c.id, c.field, c.usdImpact?.toFixed()])).toEqual([
      ['10', 'qty', '600'],
      ['12', '*', '500'],
    ]);
    // A break on a fill of the closed day, and one on a fill of no stored record.
    for (const key of ['10', '99'])
      await db
        .insertInto('break')
        .values({
          code: 'E_FEE_RATE',
          key,
          entity: 'fill',
          unit: 'amount',
          severity: 'low',
          status: 'open',
          first_seen_run: 'run-0',
          first_seen_at: '2026-11-12T02:00:00Z',
          last_seen_run: 'run-0',
          last_seen_at: '2026-11-12T02:00:00Z',
        })
        .execute();
    expect([...(await breaksOnClosedPeriods(db, 'default', [read!]))]).toEqual([['E_FEE_RATE\u000010', 'close-a']]);
  });

  it('lists a reopened close no more', async () => {
    const db = ctx.store.db;
    expect(await markReopened(db, close.id, 'bob', new Date(), 'late fills')).toBe(true);
    expect(await closedPeriodChanges(db, 'default', 10)).toEqual([]);
  });
});

function fromTo(p: { from: string; to: string }) {
  return { periodFrom: p.from, periodTo: p.to };
}
