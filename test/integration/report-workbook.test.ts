import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import ExcelJS from 'exceljs';
import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { Store } from '../../src/store/db/database.js';
import { silentLogger } from '../../src/log/logger.js';
import type { StageContext } from '../../src/stages/context.js';
import { DATETIME_FORMAT, numberFormat, textWidth } from '../../src/report/cells.js';
import { SHEET, writeReport } from '../../src/stages/report.js';
import { EXACT_NOTE_PREFIX, EXACT_VALUES_HEADER } from '../../src/report/write-workbook.js';
import { describeEachStore } from '../helpers/db.js';

const RUN = 'r20261102T020000Z-000002';
const PREV = 'r20261102T010000Z-000001';
const OLD = 'r20261020T020000Z-000000';
const NOW = new Date('2026-11-02T02:00:00Z');
const LONG_QTY = '0.123456789012345678'; // 18 significant digits: more than Excel keeps
const LONG_ETH = '1234567.123456789012345678'; // 25 significant digits, 18 decimals (ETH is shown with 8)

async function seed(store: Store): Promise<void> {
  const { db } = store;
  const counts = JSON.stringify({
    partnerOrders: 3,
    fills: 4,
    exchangeOrders: 2,
    deposits: 1,
    withdrawals: 1,
    balanceSnapshots: 2,
    quarantined: 0,
  });
  const rules = JSON.stringify([
    {
      code: 'P_FEE_USD',
      severity: 'medium',
      description: 'USD fee equals fee x rate',
      status: 'breaks',
      checked: 3,
      breaks: 1,
    },
    {
      code: 'E_FEE_RATE',
      severity: 'medium',
      description: 'fill fee equals notional x rate',
      status: 'breaks',
      checked: 4,
      breaks: 1,
    },
    {
      code: 'P_PARTNER_FEE_RATE',
      severity: 'medium',
      description: 'partner fee rate',
      status: 'not_checked',
      checked: 0,
      breaks: 0,
      reason: 'partner.feeRate not configured',
    },
    {
      code: 'E_FILL_QTY',
      severity: 'high',
      description: 'sum of fills equals cumQty',
      status: 'passed',
      checked: 2,
      breaks: 0,
    },
  ]);
  for (const [id, startedAt, from, to] of [
    [OLD, '2026-10-20T02:00:00Z', '2026-10-19', '2026-10-20'],
    [PREV, '2026-11-02T01:00:00Z', '2026-11-01', '2026-11-02'],
    [RUN, '2026-11-02T02:00:00Z', '2026-11-01', '2026-11-02'],
  ] as const) {
    await db
      .insertInto('run')
      .values({
        id,
        command: 'run',
        period_from: from,
        period_to: to,
        started_at: startedAt,
        status: id === RUN ? 'running' : 'succeeded',
        counts,
        rule_results: rules,
        stages: JSON.stringify({ sync: { status: 'succeeded', ms: 1234, startedAt, finishedAt: startedAt } }),
        requests: JSON.stringify({
          exchange: { 'GET /fills': { requests: 41, retries: 0, perSecond: 20 } },
          partner: {
            'GET /orders': { requests: 412, retries: 1, perSecond: 100 },
            'GET /currencies': { requests: 1, retries: 0, perSecond: 10 },
          },
        }),
        ruleset_version: '1',
        config_hash: 'abc',
      })
      .execute();
  }
  const brk = (
    code: string,
    key: string,
    severity: string,
    first: string,
    firstAt: string,
    extra: Record<string, unknown> = {},
  ) => ({
    code,
    key,
    // what the rule's descriptor says its key names and its figures are
    entity:
      code.startsWith('P_') || code.startsWith('X_') ? 'partnerOrder' : code === 'E_FEE_RATE' ? 'fill' : 'balance',
    unit: code === 'P_STALE' ? 'hours' : 'amount',
    severity,
    currency: 'EUR',
    expected: '1.23',
    actual: '1.73',
    difference: '0.50',
    message: `${code} on ${key}`,
    detail: JSON.stringify({ checks: [{ field: 'fee', n: 1 }] }),
    status: 'open',
    first_seen_run: first,
    first_seen_at: firstAt,
    last_seen_run: RUN,
    last_seen_at: NOW,
    ...extra,
  });
  await db
    .insertInto('break')
    .values([
      brk('P_FEE_USD', 'ord-1', 'medium', OLD, '2026-10-20T02:00:00Z'),
      brk('E_FEE_RATE', '1000000000002', 'medium', RUN, '2026-11-02T02:00:00Z', {
        currency: 'EUR',
        expected: '0.012345678901234567891',
        actual: '0.02',
        difference: '0.007654321098765432109',
      }),
      brk('E_BALANCE_ROLL', 'BTC', 'high', PREV, '2026-11-02T01:00:00Z', {
        currency: 'BTC',
        expected: '1.5',
        actual: '1.49',
        difference: '-0.01',
      }),
      brk('P_STALE', 'ord-old', 'low', OLD, '2026-10-20T02:00:00Z'),
      brk('X_DEPOSIT_MISSING', 'ord-2', 'high', OLD, '2026-10-20T02:00:00Z', {
        currency: 'BTC',
        expected: '0.01',
        actual: null,
        difference: null,
      }),
      brk('P_STATE', 'ord-3', 'medium', PREV, '2026-11-02T01:00:00Z', {
        status: 'resolved',
        resolved_run: RUN,
        resolved_at: NOW,
      }),
    ])
    .execute();
  await db
    .insertInto('break_event')
    .values({ code: 'X_DEPOSIT_MISSING', key: 'ord-2', run_id: RUN, event: 'reopened' })
    .execute();

  const pc = await db
    .insertInto('reference_snapshot')
    .values({
      source: 'partner',
      kind: 'currencies',
      fetched_at: '2026-11-01T00:00:00Z',
      content_hash: 'h1',
      body: '[]',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('partner_currency')
    .values([
      { snapshot_id: pc.id, code: 'EUR', type: 'FIAT', precision: 2 },
      { snapshot_id: pc.id, code: 'BTC', type: 'CRYPTO', precision: 8 },
    ])
    .execute();
  const sym = await db
    .insertInto('reference_snapshot')
    .values({ source: 'exchange', kind: 'symbols', fetched_at: '2026-11-01T00:00:00Z', content_hash: 'h2', body: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('exchange_symbol')
    .values({
      snapshot_id: sym.id,
      symbol: 'BTC-EUR',
      base_currency: 'BTC',
      base_currency_scale: 8,
      counter_currency: 'EUR',
      counter_currency_scale: 2,
      price_increment: '0.01',
      lot_size: '0.00000001',
    })
    .execute();

  const order = (id: string, createdAt: string, input: string, fee: string) => ({
    order_id: id,
    order_type: 'BUY',
    created_at: createdAt,
    created_at_text: createdAt,
    order_state: 'COMPLETED',
    order_state_updated_at: createdAt,
    order_state_updated_at_text: createdAt,
    input_currency: 'EUR',
    input_amount: input,
    output_currency: 'BTC',
    output_amount: '0.01000000',
    amount_usd: '108.40',
    processing_fee: fee,
    processing_fee_usd: '1.08',
    partner_fee: '0.50',
    partner_fee_usd: '0.54',
    network_fee: '0.10',
    network_fee_usd: '0.11',
    transaction_hash: `0x${id}`,
    raw: '{}',
  });
  await db
    .insertInto('partner_order')
    .values([
      order('ord-1', '2026-11-01T08:00:00Z', '100.00', '1.00'),
      order('ord-2', '2026-11-01T09:00:00Z', '250.00', '2.50'),
      order('ord-4', '2026-11-01T23:59:59Z', '1234567.89', '12.34'),
      order('ord-out', '2026-11-02T00:00:00Z', '5.00', '0.05'),
    ])
    .execute();

  await db
    .insertInto('exchange_order')
    .values([
      {
        ex_ord_id: '1000000000001',
        ord_status: 'FILLED',
        side: 'BUY',
        symbol: 'BTC-EUR',
        cum_qty: '0.3',
        avg_px: '43210.12',
        raw: '{}',
      },
      {
        ex_ord_id: '1000000000002',
        ord_status: 'FILLED',
        side: 'BUY',
        symbol: 'BTC-EUR',
        cum_qty: '0.2',
        avg_px: '43000',
        raw: '{}',
      },
    ])
    .execute();
  const fill = (exec: string, ord: string, ts: string, price: string, qty: string, fee: string) => ({
    exec_id: exec,
    ex_ord_id: ord,
    trade_id: '1',
    side: 'BUY',
    symbol: 'BTC-EUR',
    price,
    qty,
    fee,
    timestamp: ts,
    raw: '{}',
  });
  await db
    .insertInto('exchange_fill')
    .values([
      fill('9007199254740993', '1000000000001', '2026-11-01T10:00:00.123Z', '43210.12', '0.12345678', '5.33'),
      fill('9007199254740994', '1000000000001', '2026-11-01T10:00:00.123Z', '43210.12', '0.17654322', '7.63'),
      fill('1000000000002', '1000000000002', '2026-11-01T11:00:00Z', '43000', LONG_QTY, '0.02'),
      fill('1000000000003', '1000000000002', '2026-11-01T12:00:00Z', '43000', '0.07654321', '3.29'),
      fill('1000000000009', '1000000000002', '2026-10-31T12:00:00Z', '43000', '0.00000001', '0'),
    ])
    .execute();
  await db
    .insertInto('exchange_deposit')
    .values({
      deposit_id: 'dep-1',
      amount: '0.01000000',
      currency: 'BTC',
      address: 'bc1q',
      tx_hash: '0xord-1',
      state: 'COMPLETED',
      timestamp: '2026-11-01T09:30:00Z',
      raw: '{}',
    })
    .execute();
  await db
    .insertInto('exchange_deposit')
    .values({
      deposit_id: 'dep-eth',
      amount: LONG_ETH,
      currency: 'ETH',
      address: '0xeth',
      tx_hash: '0xeth-1',
      state: 'COMPLETED',
      timestamp: '2026-11-01T18:00:00Z',
      raw: '{}',
    })
    .execute();
  await db
    .insertInto('exchange_withdrawal')
    .values({
      withdrawal_id: 'wd-1',
      amount: '1000.00',
      fee: '1.50',
      currency: 'EUR',
      beneficiary: 'bank-1',
      state: 'COMPLETED',
      timestamp: '2026-11-01T15:00:00Z',
      raw: '{}',
    })
    .execute();
  const snaps: string[] = [];
  for (const [at, btc] of [
    ['2026-11-01T00:00:00Z', '1.2'],
    ['2026-11-02T00:00:00Z', '1.49'],
  ] as const) {
    const snap = await db
      .insertInto('balance_snapshot')
      .values({ exchange_account: 'primary', fetched_at: at, raw: '{}' })
      .returning('id')
      .executeTakeFirstOrThrow();
    snaps.push(snap.id);
    await db
      .insertInto('balance')
      .values([
        {
          snapshot_id: snap.id,
          currency: 'BTC',
          balance: btc,
          available: btc,
          balance_local: '64000.00',
          available_local: '64000.00',
          rate: '43000.00',
        },
        {
          snapshot_id: snap.id,
          currency: 'EUR',
          balance: '5000.00',
          available: '5000.00',
          balance_local: '5400.00',
          available_local: '5400.00',
          rate: '1.08',
        },
      ])
      .execute();
  }
  await sql`insert into balance_roll (run_id, currency, opening_snapshot_id, closing_snapshot_id, opening_at, closing_at, opening, deposits,
      withdrawals, bought, sold, fees, expected_closing, actual_closing, residual, first_divergent_day)
    values (${RUN}, 'BTC', ${snaps[0]}, ${snaps[1]}, '2026-11-01T00:00:00Z', '2026-11-02T00:00:00Z', 1.2, 0.01, 0, 0.29, 0, 0, 1.5, 1.49, -0.01, '2026-11-01')`.execute(
    db,
  );
  // a treasury balance with more digits than Excel keeps: the opening of issue 15 that could not be summed
  await sql`insert into balance_roll (run_id, currency, opening_snapshot_id, closing_snapshot_id, opening_at, closing_at, opening, deposits,
      withdrawals, bought, sold, fees, expected_closing, actual_closing, residual, first_divergent_day)
    values (${RUN}, 'ETH', ${snaps[0]}, ${snaps[1]}, '2026-11-01T00:00:00Z', '2026-11-02T00:00:00Z', ${LONG_ETH}, ${LONG_ETH}, 0, 0, 0, 0,
      2469134.246913578024691356, 2469134.246913578024691356, 0, null)`.execute(db);
  await db
    .insertInto('sync_coverage')
    .values([
      { source: 'partner', stream: 'orders', day: '2026-11-01', pages: 2, rows: 3, quarantined: 0, run_id: RUN },
      { source: 'exchange', stream: 'fills', day: '2026-11-01', pages: 1, rows: 4, quarantined: 1, run_id: RUN },
      { source: 'exchange', stream: 'fills', day: '2026-10-31', pages: 1, rows: 1, quarantined: 0, run_id: RUN },
    ])
    .execute();
  // The fill that scan quarantined, still open: the Coverage sheet counts quarantined records from the store.
  await db
    .insertInto('quarantine')
    .values({
      source: 'exchange',
      endpoint: 'GET /fills',
      entity: 'fill',
      record_key: '9001',
      position: null,
      raw_text: JSON.stringify({ execId: 9001, timestamp: Date.parse('2026-11-01T12:00:00Z'), qty: 'x' }),
      raw_hash: 'fill-9001',
      reason: 'qty: must be a decimal number (got "x")',
    })
    .execute();
}

async function seedWebhooks(store: Store): Promise<void> {
  const event = (id: string, extra: string[], dup = 0) => ({
    event_id: id,
    order_id: 'ord-1',
    order_state: 'COMPLETED',
    order_state_updated_at: '2026-11-01T08:05:00Z',
    order_state_updated_at_text: '2026-11-01T08:05:00.123456789Z',
    received_at: '2026-11-01T08:05:01Z',
    duplicate_count: dup,
    extra_fields: extra,
    raw: '{}',
  });
  await store.db
    .insertInto('webhook_event')
    .values([event('e1', [], 2), event('e2', ['riskScore'])])
    .execute();
  // e1 delivered again with another body (issue 17): a conflict the Summary counts.
  await sql`insert into webhook_event_conflict (event_id, body_hash, raw_bytes, raw_text, first_seen_at, last_seen_at)
    values ('e1', 'other', ${Buffer.from('{"eventId":"e1"}')}, '{"eventId":"e1"}', '2026-11-01T09:00:00Z', '2026-11-01T09:00:00Z')`.execute(
    store.db,
  );
}

async function readBack(path: string): Promise<ExcelJS.Workbook> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path);
  return wb;
}

/** Header texts of a sheet's first row. */
function headers(ws: ExcelJS.Worksheet): string[] {
  return (ws.getRow(1).values as unknown[]).slice(1).map(String);
}

/** Data rows as objects keyed by header. */
function records(ws: ExcelJS.Worksheet): Array<Record<string, ExcelJS.Cell>> {
  const h = headers(ws);
  const out: Array<Record<string, ExcelJS.Cell>> = [];
  for (let r = 2; r <= ws.rowCount; r++) {
    const row = ws.getRow(r);
    out.push(Object.fromEntries(h.map((name, i) => [name, row.getCell(i + 1)])));
  }
  return out;
}

describeEachStore('report workbook', (t) => {
  let ctx: StageContext;
  let reportsDir: string;
  beforeAll(async () => {
    await seed(t.store);
    await seedWebhooks(t.store);
    reportsDir = mkdtempSync(join(tmpdir(), 'rr-report-'));
    ctx = {
      store: t.store,
      config: loadConfig({ env: { REPORTS_DIR: reportsDir } }),
      logger: silentLogger(),
      runId: RUN,
      now: NOW,
    };
  });

  /** Rows of the mailed workbook's data sheets: the records open breaks point at and those that explain them. */
  const MAILED = { partnerOrders: 2, fills: 1, ordersVsFills: 1 };

  it('writes every sheet, readable back, with the figures of the period', async () => {
    const written = await writeReport(ctx, RUN, { detail: true });
    const { path } = written;
    expect(basename(path)).toBe(`ramp-recon_2026-11-01_${RUN}.xlsx`);
    expect(path.startsWith(reportsDir)).toBe(true);
    const run = await t.store.db
      .selectFrom('run')
      .select('report_path')
      .where('id', '=', RUN)
      .executeTakeFirstOrThrow();
    expect(run.report_path).toBe(path);

    const SHEETS = [
      'Summary',
      'Breaks',
      'Balances',
      'Partner daily',
      'Exchange daily',
      'Coverage',
      'Partner orders',
      'Exchange orders vs fills',
      'Fills',
      'Deposits',
      'Withdrawals',
    ];
    // The mailed workbook: its data sheets hold the records the open breaks point at, with those explaining them
    // (ord-1 and ord-2 have breaks; the fill 1000000000002 has one, and its order brings no other fill of its own).
    const mailed = await readBack(path);
    expect(mailed.worksheets.map((w) => w.name)).toEqual(SHEETS);
    expect(written.sheets).toMatchObject({
      [SHEET.breaks]: 5,
      [SHEET.partnerOrders]: MAILED.partnerOrders,
      [SHEET.fills]: MAILED.fills,
      [SHEET.ordersVsFills]: MAILED.ordersVsFills,
      [SHEET.coverage]: 2,
    });
    // The detail workbook (report --detail): every record of the period; the sheets below are read from it.
    const wb = await readBack(written.detail.workbook!.path);
    expect(wb.worksheets.map((w) => w.name)).toEqual(SHEETS);
    expect(written.detail.workbook!.sheets).toMatchObject({
      [SHEET.breaks]: 5,
      [SHEET.partnerOrders]: 3,
      [SHEET.fills]: 4,
      [SHEET.ordersVsFills]: 2,
      [SHEET.coverage]: 2,
    });
    expect(written.detail.files.map((f) => [f.sheet, f.rows])).toEqual([
      [SHEET.partnerOrders, 3],
      [SHEET.ordersVsFills, 2],
      [SHEET.fills, 4],
      [SHEET.deposits, 2],
      [SHEET.withdrawals, 1],
    ]);

    // Summary: headline first, red, with the severities
    const summary = mailed.getWorksheet('Summary')!;
    expect(summary.getCell('A1').value).toBe('NOT RECONCILED: 5 open breaks (2 high, 2 medium, 1 low)');
    expect((summary.getCell('A1').fill as ExcelJS.FillPattern).fgColor?.argb).toBe('FFFFC7CE');
    expect(summary.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    const summaryText = new Map<string, unknown[]>();
    summary.eachRow((row) => {
      const v = row.values as unknown[];
      if (typeof v[1] === 'string' && !summaryText.has(v[1])) summaryText.set(v[1], v.slice(2));
    });
    expect(summaryText.get('Previous run')?.[0]).toBe(PREV);
    expect(summaryText.get('New breaks')?.[0]).toBe(1);
    expect(summaryText.get('Reopened breaks')?.[0]).toBe(1);
    expect(summaryText.get('Resolved breaks')?.[0]).toBe(1);
    expect(summaryText.get('Still open')?.[0]).toBe(3);
    expect(summaryText.get('P_PARTNER_FEE_RATE')?.[1]).toBe('not checked');
    expect(String(summaryText.get('P_PARTNER_FEE_RATE')?.[5])).toContain('partner.feeRate not configured');
    expect(summaryText.get('Fill fee currency')?.[0]).toContain('counter');
    expect(summaryText.get('Partner fee rate')?.[0]).toContain('not configured');
    expect(summaryText.get('Partner orders (created in period)')?.[0]).toBe(3);
    expect(summaryText.get('Webhook events received')?.[0]).toBe(2);
    expect(summaryText.get('Webhook duplicates acknowledged')?.[0]).toBe(2);
    expect(summaryText.get('Webhook conflicts (eventId reused, other body)')?.[0]).toBe(1);
    expect(summaryText.get('Webhook events with schema drift')?.slice(0, 2)).toEqual([1, 'extra fields: riskScore']);
    // issue 25: the first screen holds the verdict, the money at stake and the balance table, before the run's details
    const firstColumn: unknown[] = [];
    summary.eachRow({ includeEmpty: true }, (row) => firstColumn.push(row.getCell(1).value));
    const rowOf = (text: string) => firstColumn.findIndex((v) => typeof v === 'string' && v.startsWith(text)) + 1;
    expect(rowOf('Money at stake (USD)')).toBe(3);
    // its header, then the shortfalls and surpluses as numbers (read back), and the breaks without a figure
    expect(summary.getCell(`B${rowOf('Money at stake (USD)')}`).value).toBe('Total');
    expect(rowOf('Shortfalls: money missing or gone')).toBe(4);
    expect(summary.getCell('B4').type).toBe(ExcelJS.ValueType.Number);
    expect(Number(summary.getCell('B4').value)).toBeLessThanOrEqual(0);
    expect(Number(summary.getCell('B5').value)).toBeGreaterThanOrEqual(0);
    expect(firstColumn.slice(5, 7)).toEqual(['Open breaks without a USD figure', 'Open breaks that move no money']);
    expect(rowOf('Open breaks')).toBeLessThan(rowOf('Balances per currency'));
    expect(rowOf('Balances per currency')).toBeLessThan(rowOf('Run'));
    // issue 45: the first printed page (verdict, money at stake, severities, the largest five) comes before it
    expect(rowOf('Largest 5 open breaks by USD impact')).toBeLessThan(rowOf('Balances per currency'));
    expect(rowOf('Balances per currency')).toBeLessThanOrEqual(55);
    // every table header (the bold row under a section title) stands right-aligned over its figures, and left over
    // text (indented as the text is when a figure column precedes it)
    let headerRows = 0;
    let textTitles = 0;
    summary.eachRow((row, n) => {
      const above = summary.getRow(n - 1).getCell(1);
      const underSection = (above.fill as ExcelJS.FillPattern | undefined)?.fgColor?.argb === 'FFD9E1F2';
      if (!underSection || !row.getCell(1).font?.bold || row.cellCount < 2) return;
      headerRows += 1;
      const below = summary.getRow(n + 1);
      row.eachCell((cell, col) => {
        if (col === 1 || cell.value === '') return;
        const under = below.getCell(col);
        const where = `${cell.address} ${String(cell.value)} over ${String(under.value)}`;
        if (typeof under.value === 'number') expect(cell.alignment?.horizontal, where).toBe('right');
        if (typeof under.value === 'string' && under.value !== '') {
          textTitles += 1;
          expect(cell.alignment?.horizontal, where).not.toBe('right');
          expect(cell.alignment?.indent ?? 0, where).toBe(under.alignment?.indent ?? 0);
        }
      });
    });
    expect(headerRows).toBeGreaterThanOrEqual(6);
    expect(textTitles).toBeGreaterThanOrEqual(3);
    // nothing cut: a text with a cell beside it fits its column
    summary.eachRow((row) => {
      row.eachCell((cell, col) => {
        const next = row.getCell(col + 1).value;
        if (typeof cell.value !== 'string' || next === null || next === undefined || next === '') return;
        // bold text is a little wider (the section and header rows)
        const wide = textWidth(cell.value) * (cell.font?.bold ? 1.08 : 1);
        expect(wide, `${cell.address} "${cell.value}" beside ${String(next)}`).toBeLessThanOrEqual(
          summary.getColumn(col).width!,
        );
      });
    });
    // API requests: per endpoint (APIs in order, endpoints by name), per API and over all, with the time at each rate
    const apiRows: unknown[][] = [];
    summary.eachRow((row) => apiRows.push((row.values as unknown[]).slice(1, 7)));
    const at = apiRows.findIndex((r) => r[0] === 'API requests');
    expect(apiRows.slice(at + 1, at + 8)).toEqual([
      ['API', 'Endpoint', 'Requests', 'Retries', 'Rate limit (/s)', 'Time at that rate (s)'],
      ['Partner API', 'GET /currencies', 1, 0, 10, 0.1],
      ['Partner API', 'GET /orders', 412, 1, 100, 4.12],
      ['Partner API', 'total', 413, 1, undefined, 4.22],
      ['Exchange API', 'GET /fills', 41, 0, 20, 2.05],
      ['Exchange API', 'total', 41, 0, undefined, 2.05],
      ['All APIs', 'total', 454, 1, undefined, 6.27],
    ]);
    // totals per input currency, at EUR precision: 100 + 250 + 1234567.89
    expect(summaryText.get('EUR')?.[1]).toBe(1234917.89);
    // issue 15's Must show: every Summary totals amount is a number cell at its currency's format (none is text);
    // an amount with more digits than Excel keeps carries its exact text in a note
    let section = '';
    let totalsAmounts = 0;
    const notes: string[] = [];
    summary.eachRow((row) => {
      const first = row.getCell(1).value;
      if (
        typeof first === 'string' &&
        (row.getCell(1).fill as ExcelJS.FillPattern | undefined)?.fgColor?.argb === 'FFD9E1F2'
      )
        section = first;
      if (!section.startsWith('Totals') || row.font?.bold || first === section) return;
      row.eachCell((cell, col) => {
        if (col === 1) return;
        if (typeof cell.value === 'string')
          expect(cell.value, `${section} ${String(first)} column ${col}`).not.toMatch(/^[-+]?\d[\d,]*(\.\d+)?$/);
        if (typeof cell.value === 'number' && cell.numFmt?.startsWith('#,##0.')) {
          totalsAmounts += 1;
          expect(cell.type).toBe(ExcelJS.ValueType.Number);
          if (cell.note) notes.push(String(cell.note));
        }
      });
    });
    expect(totalsAmounts).toBeGreaterThanOrEqual(8);
    expect(notes).toContain(`${EXACT_NOTE_PREFIX}${LONG_ETH}`);
    const ethTotals = summaryText.get('ETH');
    expect(ethTotals?.[1]).toBe(1234567.12345679);

    // Breaks: every open break, high first then the oldest
    const breaks = wb.getWorksheet('Breaks')!;
    expect(headers(breaks)).toEqual(
      expect.arrayContaining([
        'Severity',
        'Rule',
        'Rule code',
        'Key',
        'What happened',
        'Unit',
        'Expected',
        'Actual',
        'Difference',
        'USD impact',
        'Age (days)',
      ]),
    );
    expect(breaks.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    expect(breaks.autoFilter).toBeTruthy();
    const br = records(breaks);
    expect(br.map((r) => `${r['Rule code']!.value}:${r.Key!.text}`)).toEqual([
      'X_DEPOSIT_MISSING:ord-2',
      'E_BALANCE_ROLL:BTC',
      'P_FEE_USD:ord-1',
      'E_FEE_RATE:1000000000002',
      'P_STALE:ord-old',
    ]);
    expect(br.map((r) => r['Age (days)']!.value)).toEqual([13, 0, 13, 0, 13]);
    const feeRate = br[3]!;
    expect(feeRate.Expected!.value).toBe(0.0123456789012346);
    expect(feeRate[EXACT_VALUES_HEADER]!.value).toContain('Expected = 0.012345678901234567891');
    expect(feeRate.Actual!.value).toBe(0.02);
    expect((br[0]!.Severity!.fill as ExcelJS.FillPattern).fgColor?.argb).toBe('FFC00000');
    expect(br[1]!.Difference!.value).toBe(-0.01);
    // the unit beside the figure, in its format (issue 45)
    expect(br[1]!.Difference!.numFmt).toBe(numberFormat(8, 'BTC'));
    expect(br[0]!['First seen (UTC)']!.value).toEqual(new Date('2026-10-20T02:00:00Z'));

    // Partner orders: in the period only, amounts at currency precision, break rows red
    const po = records(wb.getWorksheet('Partner orders')!);
    expect(po.map((r) => r['Order id']!.value)).toEqual(['ord-1', 'ord-2', 'ord-4']);
    expect(po[2]!['Input amount']!.value).toBe(1234567.89);
    expect(po[2]!['Input amount']!.numFmt).toBe(numberFormat(2));
    expect(po[0]!['Output amount']!.numFmt).toBe(numberFormat(8));
    expect(po[0]!['Open breaks']!.value).toBe('P_FEE_USD');
    expect((po[0]!['Order id']!.fill as ExcelJS.FillPattern).fgColor?.argb).toBe('FFFFC7CE');
    expect(po[2]!['Open breaks']!.value).toBeNull();
    expect(po[0]!['Created (UTC)']!.value).toEqual(new Date('2026-11-01T08:00:00Z'));

    // Fills: a known amount to the last digit, ids exact, the 18-digit quantity kept in full
    const fills = wb.getWorksheet('Fills')!;
    expect(headers(fills)).toEqual([
      'Time (UTC)',
      'Exec id',
      'Exchange order id',
      'Trade id',
      'Symbol',
      'Side',
      'Price',
      'Qty',
      'Notional',
      'Fee',
      'Fee currency',
      'Open breaks',
      EXACT_VALUES_HEADER,
    ]);
    const fr = records(fills);
    expect(fr.map((r) => r['Exec id']!.value)).toEqual([
      '9007199254740993',
      '9007199254740994',
      '1000000000002',
      '1000000000003',
    ]);
    expect(fr[0]!.Price!.value).toBe(43210.12);
    expect(fr[0]!.Price!.numFmt).toBe(numberFormat(2));
    expect(fr[0]!.Qty!.value).toBe(0.12345678);
    expect(fr[0]!.Qty!.numFmt).toBe(numberFormat(8));
    expect(fr[0]!['Time (UTC)']!.value).toEqual(new Date('2026-11-01T10:00:00.123Z'));
    // one date-time format on every row, with or without milliseconds
    expect(fr.map((r) => r['Time (UTC)']!.numFmt)).toEqual(fr.map(() => DATETIME_FORMAT));
    // 43210.12 x 0.12345678, exact in 14 digits: the notional's format has the decimals of price and qty (2 + 8),
    // the same for every fill of the symbol, so it shows the number whole and needs no exact text beside it
    expect(fr[0]!.Notional!.value).toBe(5334.5822786136);
    expect(fr[0]!.Notional!.numFmt).toBe(numberFormat(10));
    expect(fr[0]![EXACT_VALUES_HEADER]?.value ?? null).toBeNull();
    // 18 significant digits: a number rounded to Excel's 15, at the symbol's format, never text
    expect(fr[2]!.Qty!.value).toBe(0.123456789012346);
    expect(fr[2]!.Qty!.numFmt).toBe(numberFormat(8));
    expect(fr[2]!.Notional!.value).toBe(5308.64192753086);
    expect(fr[2]![EXACT_VALUES_HEADER]!.value).toBe(`Qty = ${LONG_QTY}; Notional = 5308.641927530864154`);
    // every amount of the sheet is a number: the same format down each column of one symbol
    for (const r of fr)
      for (const h of ['Price', 'Qty', 'Notional', 'Fee']) expect(r[h]!.type).toBe(ExcelJS.ValueType.Number);
    expect(new Set(fr.map((r) => r.Qty!.numFmt))).toEqual(new Set([numberFormat(8)]));
    expect(fr[2]!['Open breaks']!.value).toBe('E_FEE_RATE');

    // Orders vs fills: all stored fills of the order, including the one before the period
    const ovf = records(wb.getWorksheet('Exchange orders vs fills')!);
    expect(ovf.map((r) => r['Exchange order id']!.value)).toEqual(['1000000000001', '1000000000002']);
    expect(ovf[0]!['Sum of fill qty']!.value).toBe(0.3);
    expect(ovf[0]!['Qty difference']!.value).toBe(0);
    expect(ovf[1]!.Fills!.value).toBe(3);

    // Balances: roll-forward with the residual, and the USD value from the latest snapshot
    const bal = records(wb.getWorksheet('Balances')!);
    expect(bal.map((r) => r.Currency!.value)).toEqual(['BTC', 'ETH', 'EUR']);
    // issue 15's Must show: every Balances amount cell is a number at its currency's format, so treasury can sum them
    const balanceAmounts = [
      'Opening',
      'Deposits',
      'Withdrawals',
      'Bought',
      'Sold',
      'Fees',
      'Expected closing',
      'Actual closing',
      'Residual',
      'Available',
      'Rate',
      'USD value',
    ];
    let amountCells = 0;
    for (const r of bal) {
      const dp = r.Currency!.value === 'EUR' ? 2 : 8;
      for (const h of balanceAmounts) {
        const cell = r[h]!;
        if (cell.value === null) continue;
        amountCells += 1;
        expect(cell.type, `${String(r.Currency!.value)} ${h}`).toBe(ExcelJS.ValueType.Number);
        const format = numberFormat(h === 'USD value' ? 2 : h === 'Rate' ? 8 : dp);
        // a residual flagged white on dark red keeps its own colour: [Red] would paint it the colour of its fill
        const flagged = cell.font?.color?.argb === 'FFFFFFFF';
        expect(cell.numFmt, `${String(r.Currency!.value)} ${h}`).toBe(flagged ? format.replace('[Red]', '') : format);
      }
    }
    expect(amountCells).toBeGreaterThanOrEqual(20);
    const eth = bal[1]!;
    expect(eth.Opening!.value).toBe(1234567.12345679);
    expect(eth[EXACT_VALUES_HEADER]!.value).toBe(
      `Opening = ${LONG_ETH}; Deposits = ${LONG_ETH}; Expected closing = 2469134.246913578024691356; Actual closing = 2469134.246913578024691356`,
    );
    // the column fits "1,234,567.12345679" (the value at ETH's 8 decimals), not cut to ###
    expect(wb.getWorksheet('Balances')!.getColumn(2).width).toBeGreaterThanOrEqual('1,234,567.12345679'.length + 1);
    expect(bal[0]!.Residual!.value).toBe(-0.01);
    expect(bal[0]!['Actual closing']!.value).toBe(1.49);
    expect(bal[0]!['USD value']!.value).toBe(64070);
    expect(bal[0]!['First divergent day']!.value).toEqual(new Date('2026-11-01T00:00:00Z'));
    expect(bal[0]!['Open breaks']!.value).toBe('E_BALANCE_ROLL');

    const dep = records(wb.getWorksheet('Deposits')!);
    expect(dep[0]!.Amount!.value).toBe(0.01);
    expect(dep[0]!.Amount!.numFmt).toBe(numberFormat(8));
    expect(dep[1]!.Amount!.value).toBe(1234567.12345679);
    expect(dep[1]![EXACT_VALUES_HEADER]!.value).toBe(`Amount = ${LONG_ETH}`);
    // "COMPLETED" is not cut: capitals count wider than digits
    expect(wb.getWorksheet('Deposits')!.getColumn(5).width).toBeGreaterThanOrEqual(
      Math.ceil('COMPLETED'.length * 1.2) + 1,
    );
    const wd = records(wb.getWorksheet('Withdrawals')!);
    expect(wd[0]!.Fee!.value).toBe(1.5);
    expect(wd[0]!['Debits balance']!.value).toBe('yes');

    const cov = records(wb.getWorksheet('Coverage')!);
    expect(cov.map((r) => [r.Source!.value, r.Stream!.value, r.Rows!.value, r.Quarantined!.value])).toEqual([
      ['exchange', 'fills', 4, 1],
      ['partner', 'orders', 3, 0],
    ]);

    const daily = wb.getWorksheet('Partner daily')!;
    expect(records(daily)[0]!.Orders!.value).toBe(3);
    expect(records(daily)[0]!['Volume (input)']!.value).toBe(1234917.89);
  });

  it('continues a sheet past the row limit on a second sheet', async () => {
    const { detail } = await writeReport(ctx, RUN, { maxRowsPerSheet: 3, detail: true });
    const { path, sheets } = detail.workbook!;
    const wb = await readBack(path);
    const names = wb.worksheets.map((w) => w.name);
    expect(names).toContain('Fills (2)');
    expect(sheets['Fills']).toBe(2);
    expect(sheets['Fills (2)']).toBe(2);
    const second = wb.getWorksheet('Fills (2)')!;
    expect(headers(second)[1]).toBe('Exec id');
    expect(second.getCell('B2').value).toBe('1000000000002');
  });

  it('says reconciled in green when nothing is open', async () => {
    const { db } = t.store;
    const other = 'r20261020T020000Z-000000';
    // OLD's period has no open break once they are all resolved; reuse a copy of the store state
    await db.updateTable('break').set({ status: 'resolved', resolved_run: RUN, resolved_at: NOW }).execute();
    const { path } = await writeReport(ctx, other);
    const summary = (await readBack(path)).getWorksheet('Summary')!;
    expect(summary.getCell('A1').value).toBe('RECONCILED: 2026-10-19, no open breaks');
    expect((summary.getCell('A1').fill as ExcelJS.FillPattern).fgColor?.argb).toBe('FFC6EFCE');
    expect((await readBack(path)).getWorksheet('Breaks')!.rowCount).toBe(1);
  });
});
