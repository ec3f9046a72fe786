import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { describeEachStore } from '../helpers/db.js';
import { toDecimal, decimalText } from '../../src/decimal/decimal.js';
import { parseJsonLossless, stringifyJsonLossless } from '../../src/decimal/json.js';
import { migrate } from '../../src/store/db/migrate.js';
import { loadRun, setReportPath } from '../../src/store/runs/runs.js';
import { openBreakCounts } from '../../src/domain/index.js';

describeEachStore('store round-trip', (ctx) => {
  it('returns 18-decimal and exponent-notation amounts identical to the last digit', async () => {
    const body = parseJsonLossless(
      '{"exOrdId": 11223344556677, "execId": 9007199254740993, "tradeId": "1", "side": "BUY", "symbol": "ETH-USD",' +
        ' "price": "0.0", "qty": 1.234567890123456789, "fee": "5.4044E-4", "timestamp": 1700000000123}',
    ) as Record<string, unknown>;
    await ctx.store.db
      .insertInto('exchange_fill')
      .values({
        exec_id: String(toDecimal(body.execId)),
        ex_ord_id: String(toDecimal(body.exOrdId)),
        trade_id: '1',
        side: 'BUY',
        symbol: 'ETH-USD',
        price: decimalText(toDecimal(body.price)),
        qty: decimalText(toDecimal(body.qty)),
        fee: decimalText(toDecimal(body.fee)),
        timestamp: new Date(1700000000123),
        raw: stringifyJsonLossless(body),
      })
      .execute();
    const row = await ctx.store.db
      .selectFrom('exchange_fill')
      .selectAll()
      .where('exec_id', '=', '9007199254740993')
      .executeTakeFirstOrThrow();
    // 2^53 + 1: a JS number would read 9007199254740992.
    expect(row.exec_id).toBe('9007199254740993');
    expect(row.ex_ord_id).toBe('11223344556677');
    expect(row.qty.toString()).toBe('1.234567890123456789');
    expect(row.fee.toString()).toBe('0.00054044');
    expect(row.price.toString()).toBe('0');
    expect(row.timestamp.getTime()).toBe(1700000000123);
    const raw = row.raw as Record<string, unknown>;
    expect(toDecimal(raw.qty).toString()).toBe('1.234567890123456789');
    expect(toDecimal(raw.execId).toString()).toBe('9007199254740993');
  });

  it('sums numeric exactly in SQL', async () => {
    const values = ['0.100000000000000001', '0.200000000000000002', '0.000000000000000007'];
    for (const [i, qty] of values.entries()) {
      await ctx.store.db
        .insertInto('exchange_fill')
        .values({
          exec_id: String(100 + i),
          ex_ord_id: '7',
          side: 'SELL',
          symbol: 'ETH-USD',
          price: '1',
          qty,
          fee: '0',
          timestamp: new Date(),
          raw: '{}',
        })
        .execute();
    }
    const { total } = await ctx.store.db
      .selectFrom('exchange_fill')
      .select((eb) => eb.fn.sum<string>('qty').as('total'))
      .where('ex_ord_id', '=', '7')
      .executeTakeFirstOrThrow();
    expect(toDecimal(total).toString()).toBe('0.30000000000000001');
  });

  it("keeps the e-mail's digest whole with its workbook: partial period and detail folder included", async () => {
    const id = 'r20261101T020000Z-digest';
    await ctx.store.db
      .insertInto('run')
      .values({
        id,
        command: 'run',
        period_from: '2026-11-01',
        period_to: '2026-11-02',
        started_at: new Date('2026-11-01T12:00:00Z'),
        status: 'running',
        counts: JSON.stringify({}),
        rule_results: JSON.stringify([]),
      })
      .execute();
    const digest = {
      period: '2026-11-01',
      partial: true,
      attachmentName: 'w.xlsx',
      detailDir: '/reports/w_detail',
      headline: { tone: 'bad' as const, text: 'NOT RECONCILED', detail: 'd', status: 'running' },
      topBreaks: [],
      writtenAt: '2026-11-01T12:00:01.000Z',
    };
    await setReportPath(ctx.store.db, id, '/reports/w.xlsx', openBreakCounts([]), digest);
    expect((await loadRun(ctx.store.db, id)).reportDigest).toEqual(digest);
  });

  it('running migrations again changes nothing', async () => {
    const again = await migrate(ctx.store);
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied).toContain('0001_initial.sql');
  });

  it.runIf(ctx.kind === 'postgres')(
    'runs its Postgres sessions without JIT compilation, every pooled one',
    async () => {
      // Six statements at once on a pool of four: every session the pool opens, not only the first.
      const rows = await Promise.all(
        Array.from({ length: 6 }, () =>
          sql<{ jit: string }>`select current_setting('jit') as jit, pg_sleep(0.05)`.execute(ctx.store.db),
        ),
      );
      expect(rows.map((r) => r.rows[0]!.jit)).toEqual(Array(6).fill('off'));
    },
  );
});
