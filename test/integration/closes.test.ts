import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { evidenceDigest, inUtc, keepSignedRecords } from '../../src/store/workflow/close-records.js';
import { appendAudit, checkAuditChain } from '../../src/store/workflow/audit-log.js';
import {
  getClose,
  insertClose,
  markReopened,
  unjudgedRecords,
  type CloseRecord,
} from '../../src/store/workflow/closes.js';
import { inTransaction } from '../../src/store/db/database.js';
import { spanOf } from '../../src/store/db/keyset.js';
import { createRun } from '../../src/store/runs/runs.js';
import { describeEachStore } from '../helpers/db.js';
import { insertFill, insertOrder, markJudged } from './reconcile-seed.js';

const PERIOD = { from: '2026-11-10', to: '2026-11-11' };
const SPAN = spanOf(PERIOD);
const CONTEXT = { rulesetVersion: 'r1', configHash: 'c1' };

/** The digest every server must give for the seeded records (the canonical form is the same text everywhere). */
let expectedDigest: string | null = null;

describeEachStore('period close store', (ctx) => {
  const digestNow = () =>
    inTransaction(ctx.store.db, async (trx) => {
      await inUtc(trx);
      return evidenceDigest(trx, { account: 'default', span: SPAN }, CONTEXT);
    });

  it('seeds records inside and outside the period', async () => {
    const db = ctx.store.db;
    await insertOrder(db, { id: 'o-1', created: '2026-11-10T08:00:00Z' });
    await insertOrder(db, { id: 'o-2', created: '2026-11-10T09:30:00.123456Z', amountUsd: null });
    await insertOrder(db, { id: 'o-out', created: '2026-11-11T09:00:00Z' });
    for (const [execId, at] of [
      ['10', '2026-11-10T10:00:00Z'],
      ['9', '2026-11-10T11:00:00Z'],
      ['100', '2026-11-10T12:00:00Z'],
    ] as const)
      await insertFill(db, { execId, exOrdId: '7', price: '3000.5', qty: '0.00054', fee: '0.0001', at });
    await sql`update exchange_fill set raw = '{"execId": 9, "qty": "5.4E-4"}' where exec_id = 9`.execute(db);
  });

  it('digests the same records to the same digest on every database, unchanged by a re-read', async () => {
    const first = await digestNow();
    expect(first.records).toBe(5);
    expect(first.digest).toMatch(/^[0-9a-f]{64}$/);
    if (expectedDigest === null) expectedDigest = first.digest;
    else expect(first.digest).toBe(expectedDigest);
    await sql`update partner_order set last_seen_at = now() + interval '1 day'`.execute(ctx.store.db);
    expect((await digestNow()).digest).toBe(first.digest);
  });

  it('keeps the signed records whose digest is the live one, and one changed record changes the live digest', async () => {
    const db = ctx.store.db;
    await createRun(db, {
      account: 'default',
      command: 'reconcile',
      id: 'run-close-1',
      periodFrom: PERIOD.from,
      periodTo: PERIOD.to,
    });
    const live = await digestNow();
    const close: CloseRecord = {
      id: 'close-1',
      account: 'default',
      period: PERIOD,
      by: 'alice',
      at: new Date('2026-11-12T09:00:00Z'),
      note: null,
      runId: 'run-close-1',
      digest: live.digest,
      records: live.records,
      ...CONTEXT,
      workbook: '/tmp/x.xlsx',
      workbookSha256: 'ab',
      state: 'signed',
      reopenedBy: null,
      reopenedAt: null,
      reopenReason: null,
    };
    const signed = await inTransaction(db, async (trx) => {
      await inUtc(trx);
      await insertClose(trx, close, []);
      await keepSignedRecords(trx, close.id, 'default', SPAN);
      return evidenceDigest(trx, { closeId: close.id }, CONTEXT);
    });
    expect(signed).toEqual(live);
    expect((await getClose(db, 'close-1'))?.period).toEqual(PERIOD);

    await sql`update exchange_fill set qty = '0.00055' where exec_id = 100`.execute(db);
    expect((await digestNow()).digest).not.toBe(live.digest);
    await sql`update exchange_fill set qty = '0.00054' where exec_id = 100`.execute(db);
    expect((await digestNow()).digest).toBe(live.digest);
    await sql`update exchange_fill set raw = '{"execId": 9, "qty": "0.00054"}' where exec_id = 9`.execute(db);
    expect((await digestNow()).digest).not.toBe(live.digest);
  });

  it('counts the records of the period not yet judged', async () => {
    expect(await unjudgedRecords(ctx.store.db, 'default', SPAN)).toBe(5);
    await markJudged(ctx.store, 'default');
    expect(await unjudgedRecords(ctx.store.db, 'default', SPAN)).toBe(0);
    await sql`update partner_order set amount_usd = 1 where order_id = 'o-1'`.execute(ctx.store.db);
    expect(await unjudgedRecords(ctx.store.db, 'default', SPAN)).toBe(1);
  });

  it('reopens a signed close once', async () => {
    const db = ctx.store.db;
    expect(await markReopened(db, 'close-1', 'bob', new Date(), 'late fills')).toBe(true);
    expect(await markReopened(db, 'close-1', 'bob', new Date(), 'again')).toBe(false);
    expect((await getClose(db, 'close-1'))?.state).toBe('reopened');
  });

  it('chains the audit log and names the first broken link', async () => {
    const db = ctx.store.db;
    // Past row 9: the chain is in numeric order, not text order.
    for (let n = 1; n <= 11; n++)
      await inTransaction(db, (trx) =>
        appendAudit(
          trx,
          { actor: 'alice', action: 'note', subject: `P_FEE_USD:o-${n}`, payload: { text: `n ${n}` } },
          new Date(),
        ),
      );
    expect(await checkAuditChain(db)).toEqual({ rows: 11, broken: null });
    await sql`update audit_log set payload = '{"text":"forged"}' where seq = 2`.execute(db);
    expect((await checkAuditChain(db)).broken).toEqual({ seq: '2', reason: 'its content does not match its hash' });
  });
});
