import { figureText } from '../../src/domain/index.js';
import { expect, it } from 'vitest';
import type { Db } from '../../src/store/db/database.js';
import { Decimal } from '../../src/decimal/decimal.js';
import {
  checkExchangeOrders,
  checkFills,
  fillPrefilter,
  markNotChecked,
  orderPrefilter,
  type ReferenceData,
} from '../../src/rules/engine.js';
import { RuleTally } from '../../src/rules/tally.js';
import { engineConfig, reconcilePeriod } from '../../src/stages/reconcile.js';
import { exchangeOrderCandidatesIn, exchangeOrdersWithFillsIn, fillsIn } from '../../src/store/recon/exchange-reads.js';
import { fillCandidatesIn, fillIdHalves } from '../../src/store/recon/fill-candidates.js';
import { feeSchedule, latestSymbols, latestWhitelist } from '../../src/store/sync/snapshots.js';
import type { Span } from '../../src/store/db/keyset.js';
import { describeEachStore } from '../helpers/db.js';
import { insertReferenceSnapshot, makeConfig, markJudged, newContext } from './reconcile-seed.js';

/**
 * reconcilePeriod loads only the fills SQL pre-selects as possibly failing a per-fill rule.
 * On a dataset of fills exactly at, just inside and just past every edge (fee tolerance around
 * the maker and the taker expectation of each day's rates, price increment, lot size, price 0,
 * orphans, unknown symbols, symbols without increments) and of orders around the order rules'
 * edges (VWAP vs avgPx, cumQty vs fill sum, size limits), the breaks and rule counts it records
 * must equal those of the pure rules run over every fill and every order.
 */
const PERIOD = { from: '2026-11-09', to: '2026-11-11' };
const SPAN: Span = { from: new Date('2026-11-09T00:00:00Z'), to: new Date('2026-11-11T00:00:00Z') };
const FILL_CODES = ['E_FILL_QTY', 'E_FILL_AVGPX', 'E_ORDER_STATUS', 'E_FILL_ORPHAN', 'E_FEE_RATE', 'E_SYMBOL_RULES'];
const EPS = new Decimal('1e-20');

const VARIANTS = [
  { account: 'counter-half-unit', file: {}, tolerance: new Decimal('0.005'), base: false },
  {
    account: 'counter-configured',
    file: { tolerances: { exchangeFee: '0.003' } },
    tolerance: new Decimal('0.003'),
    base: false,
  },
  {
    account: 'base-half-unit',
    file: { exchange: { feeCurrency: 'base' } },
    tolerance: new Decimal('0.000000005'),
    base: true,
  },
];

interface FillSpec {
  exOrdId?: string;
  symbol?: string;
  price: string;
  qty: string;
  fee: Decimal | string;
  at: string;
  stored?: boolean;
  ordType?: string;
}

async function seed(db: Db, account: string, tolerance: Decimal, base: boolean): Promise<number> {
  const snap = (kind: string, at: string) => insertReferenceSnapshot(db, kind, 'exchange', at, account);
  const sym = await snap('symbols', '2026-11-01T00:00:00Z');
  await db
    .insertInto('exchange_symbol')
    .values([
      {
        snapshot_id: sym,
        symbol: 'ETH-USD',
        base_currency: 'ETH',
        base_currency_scale: 8,
        counter_currency: 'USD',
        counter_currency_scale: 2,
        price_increment: '0.01',
        lot_size: '0.0001',
        min_order_size: '0.0001',
        max_order_size: '1000',
      },
      {
        snapshot_id: sym,
        symbol: 'ZRO-USD',
        base_currency: 'ZRO',
        base_currency_scale: 8,
        counter_currency: 'USD',
        counter_currency_scale: 2,
        price_increment: '0.01',
        lot_size: '0.0001',
        min_order_size: '0.0001',
        max_order_size: '0',
      },
      {
        snapshot_id: sym,
        symbol: 'NUL-USD',
        base_currency: 'NUL',
        base_currency_scale: 8,
        counter_currency: 'USD',
        counter_currency_scale: 2,
        price_increment: null,
        lot_size: null,
        min_order_size: null,
        max_order_size: null,
      },
    ])
    .execute();
  // 11-09 uses the first rates; 11-10 the second, fetched during that day (so also for its morning fills).
  const rates: Record<string, { maker: Decimal; taker: Decimal }> = {
    '2026-11-09': { maker: new Decimal('0.0008'), taker: new Decimal('0.001') },
    '2026-11-10': { maker: new Decimal('0.0005'), taker: new Decimal('0.0009') },
  };
  for (const [at, day] of [
    ['2026-11-01T00:00:00Z', '2026-11-09'],
    ['2026-11-10T12:00:00Z', '2026-11-10'],
  ] as const) {
    const id = await snap('fees', at);
    await db
      .insertInto('exchange_fee_rate')
      .values({ snapshot_id: id, maker_rate: rates[day]!.maker.toString(), taker_rate: rates[day]!.taker.toString() })
      .execute();
  }

  const specs: FillSpec[] = [];
  const price = '2000';
  const qty = '0.5';
  const basis = base ? new Decimal(qty) : new Decimal(qty).times(price);
  const times: Record<string, string[]> = {
    '2026-11-09': ['2026-11-09T00:00:00Z', '2026-11-09T10:00:00Z', '2026-11-09T23:59:59.999999Z'],
    '2026-11-10': ['2026-11-10T01:00:00Z', '2026-11-10T18:00:00Z'],
  };
  for (const [day, r] of Object.entries(rates))
    for (const at of times[day]!)
      for (const rate of [r.maker, r.taker]) {
        const e = basis.times(rate);
        for (const d of [tolerance.plus(EPS), tolerance, tolerance.minus(EPS), new Decimal(0)]) {
          specs.push({ price, qty, fee: e.plus(d), at });
          if (!d.isZero()) specs.push({ price, qty, fee: e.minus(d), at });
        }
      }
  // A MARKET or STOP order's fill is judged on the taker rate alone: around the maker expectation it must be loaded.
  for (const ordType of ['MARKET', 'STOP', 'STOPLIMIT', 'LIMIT'])
    for (const d of [tolerance.plus(EPS), tolerance, new Decimal(0)]) {
      specs.push({
        price,
        qty,
        fee: basis.times(rates['2026-11-10']!.maker).plus(d),
        at: '2026-11-10T02:00:00Z',
        ordType,
      });
      specs.push({
        price,
        qty,
        fee: basis.times(rates['2026-11-10']!.taker).minus(d),
        at: '2026-11-10T02:00:00Z',
        ordType,
      });
    }
  const feeOf = (p: string, q: string, day = '2026-11-10') =>
    (base ? new Decimal(q) : new Decimal(q).times(p)).times(rates[day]!.taker);
  const at = '2026-11-10T09:00:00Z';
  for (const [p, q] of [
    ['2000.01', '0.0001'],
    ['2000.005', '0.0001'],
    ['2000.00000000000000000001', '0.0001'],
    ['2000.01', '0.00010000000000000001'],
    ['2000.01', '0.00009999999999999999'],
    ['2000.01', '1e-30'],
    ['0', '0.0001'],
    ['0', '0.00015'],
    ['2000.001', '0.00011'],
    ['1234567890.12345678901234567890', '0.1234567890123456789012'],
  ] as const)
    specs.push({ price: p, qty: q, fee: feeOf(p, q), at });
  // a long product next to the tolerance: the margin for 60-digit Decimal rounding must keep it
  const longP = '1234567890.12345678901234567890';
  const longQ = '0.1234567890123456789012';
  specs.push(
    { price: longP, qty: longQ, fee: feeOf(longP, longQ).plus(tolerance), at },
    { price: longP, qty: longQ, fee: feeOf(longP, longQ).plus(tolerance).plus(new Decimal('1e-40')), at },
  );
  specs.push({
    symbol: 'NUL-USD',
    price: '1.23456789',
    qty: '0.123456789',
    fee: feeOf('1.23456789', '0.123456789'),
    at,
  });
  specs.push({ symbol: 'DOGE-XYZ', price: '0.123456', qty: '10.5', fee: feeOf('0.123456', '10.5'), at }); // unknown symbol
  specs.push({ symbol: 'DOGE-XYZ', price: '0.123456', qty: '10.5', fee: feeOf('0.123456', '10.5').plus('1'), at });
  specs.push({ price, qty, fee: feeOf(price, qty), at, stored: false }); // orphan
  specs.push({ exOrdId: '777777', price, qty, fee: feeOf(price, qty), at, stored: false }); // orphan the sync got 404 for
  specs.push({ price: '2000.001', qty, fee: '0', at: '2026-11-11T00:00:00Z' }); // after the period
  specs.push({ price: '2000.001', qty, fee: '0', at: '2026-11-08T23:59:59.999999Z' }); // before it

  let execId = 1000;
  for (const s of specs) {
    execId += 1;
    const exOrdId = s.exOrdId ?? String(execId);
    const symbol = s.symbol ?? 'ETH-USD';
    await db
      .insertInto('exchange_fill')
      .values({
        account,
        exec_id: String(execId),
        ex_ord_id: exOrdId,
        side: execId % 2 ? 'BUY' : 'SELL',
        symbol,
        price: s.price,
        qty: s.qty,
        fee: s.fee.toString(),
        timestamp: s.at,
        raw: '{}',
      })
      .execute();
    if (s.stored === false) {
      if (s.exOrdId) await db.insertInto('exchange_order_not_found').values({ account, ex_ord_id: exOrdId }).execute();
      continue;
    }
    await db
      .insertInto('exchange_order')
      .values({
        account,
        ex_ord_id: exOrdId,
        ord_type: s.ordType ?? null,
        ord_status: 'FILLED',
        side: 'BUY',
        symbol,
        cum_qty: s.qty,
        leaves_qty: '0',
        avg_px: s.price,
        timestamp: s.at,
        raw: '{}',
      })
      .execute();
  }

  // Orders with several fills around the order rules' edges: VWAP 2000.005 vs avgPx at and past
  // half an increment, cumQty at and past the fill sum, quantity at and past the size limits.
  let ordId = 50_000;
  let fills = 0;
  const order = async (o: {
    symbol?: string;
    avgPx: string | null;
    cumQty: string | null;
    leavesQty?: string;
    ordStatus?: string;
    fills?: [string, string][];
  }) => {
    ordId += 1;
    const symbol = o.symbol ?? 'ETH-USD';
    for (const [p, q] of o.fills ?? [
      ['2000', '0.5'],
      ['2000.01', '0.5'],
    ]) {
      execId += 1;
      fills += 1;
      await db
        .insertInto('exchange_fill')
        .values({
          account,
          exec_id: String(execId),
          ex_ord_id: String(ordId),
          side: 'BUY',
          symbol,
          price: p,
          qty: q,
          fee: feeOf(p, q).toString(),
          timestamp: at,
          raw: '{}',
        })
        .execute();
    }
    await db
      .insertInto('exchange_order')
      .values({
        account,
        ex_ord_id: String(ordId),
        ord_status: o.ordStatus ?? 'FILLED',
        side: 'BUY',
        symbol,
        cum_qty: o.cumQty,
        leaves_qty: o.leavesQty ?? '0',
        avg_px: o.avgPx,
        timestamp: at,
        raw: '{}',
      })
      .execute();
  };
  for (const avgPx of ['2000.005', '2000.01', '2000', '2000.0100000000000000001', '1999.9999999999999999999', null])
    await order({ avgPx, cumQty: '1' });
  for (const cumQty of ['1.00000000000000000001', '0.99999999999999999999', null])
    await order({ avgPx: '2000.005', cumQty });
  for (const leavesQty of ['999', '999.00000000000000000001'])
    await order({ avgPx: '2000.005', cumQty: '1', leavesQty });
  for (const q of ['0.0001', '0.00009999999999999999']) await order({ avgPx: '2000', cumQty: q, fills: [['2000', q]] });
  await order({ symbol: 'ZRO-USD', avgPx: '2000.005', cumQty: '1', leavesQty: '1e30' }); // max 0: no limit
  // E_ORDER_STATUS: a rejected order with fills or a filled quantity, one filled with a quantity left open; cancelled
  // and expired orders filled in part are fine.
  await order({ ordStatus: 'REJECTED', avgPx: '2000.005', cumQty: '1', leavesQty: '1' });
  await order({ ordStatus: 'REJECTED', avgPx: null, cumQty: '0', leavesQty: '1', fills: [['2000', '1e-20']] });
  await order({ ordStatus: 'FILLED', avgPx: '2000.005', cumQty: '1', leavesQty: '1e-20' });
  await order({ ordStatus: 'CANCELED', avgPx: '2000.005', cumQty: '1', leavesQty: '3' });
  await order({ ordStatus: 'EXPIRED', avgPx: '2000.005', cumQty: '1', leavesQty: '3' });
  await order({ symbol: 'NUL-USD', avgPx: '2000.2', cumQty: '1' }); // no increment: E_FILL_AVGPX skipped
  await order({ symbol: 'DOGE-XYZ', avgPx: '2000.005', cumQty: '1' }); // unknown symbol: skipped
  // Orders without any stored fill: created in the period with cumQty > 0 (their fills never
  // arrived: in scope, a break); with cumQty 0, or created outside the period: not in scope.
  for (const [cumQty, created] of [
    ['0.5', at],
    ['1e-20', at],
    ['0', at],
    ['0.5', '2026-11-11T00:00:00Z'],
    ['0.5', '2026-11-08T23:59:59.999999Z'],
  ] as const) {
    ordId += 1;
    await db
      .insertInto('exchange_order')
      .values({
        account,
        ex_ord_id: String(ordId),
        ord_type: 'LIMIT',
        ord_status: 'FILLED',
        side: 'BUY',
        symbol: 'ETH-USD',
        cum_qty: cumQty,
        leaves_qty: '0',
        avg_px: '2000',
        timestamp: created,
        raw: '{}',
      })
      .execute();
  }
  return specs.length - 2 + fills;
}

/** Every time: what the account's first judgement covers (every stored record, docs/rules.md "What a run judges"). */
const ALL: Span = { from: new Date('2000-01-01T00:00:00Z'), to: new Date('2100-01-01T00:00:00Z') };

describeEachStore('reconcilePeriod fill prefilter', (ctx) => {
  const db = () => ctx.store.db;

  for (const v of VARIANTS)
    it(`records exactly the breaks and counts of the pure rules over every fill (${v.account}), of the period and of a first judgement`, async () => {
      // The period alone: the records were judged before (the watermark is set), nothing changed since.
      await checkAgainstPureRules(v, v.account, SPAN);
      // The account's first judgement: every stored record, the edges before and after the period included.
      await checkAgainstPureRules(v, `${v.account}-first`, ALL);
    });

  async function checkAgainstPureRules(v: (typeof VARIANTS)[number], account: string, judged: Span): Promise<void> {
    const inPeriod = await seed(db(), account, v.tolerance, v.base);
    if (judged === SPAN) await markJudged(ctx.store, account);
    const config = makeConfig({ account, ...v.file });
    const context = await newContext(ctx.store, config, `run-${account}`, PERIOD);
    const result = await reconcilePeriod(context, PERIOD);
    expect(result.counts.fills).toBe(inPeriod);

    // The pure rules over every fill judged, as before the prefilter.
    const cfg = engineConfig(context);
    const symbols = await latestSymbols(db(), account);
    const ref: ReferenceData = {
      currencies: null,
      symbols: symbols?.symbols ?? null,
      fees: await feeSchedule(db(), account),
      whitelist: await latestWhitelist(db(), account),
      balanceSnapshotCount: 0,
    };
    const tally = new RuleTally();
    markNotChecked(tally, cfg, ref);
    for await (const orders of exchangeOrdersWithFillsIn(db(), account, judged))
      checkExchangeOrders(tally, cfg, ref, orders);
    const fillsOnly = new RuleTally();
    for await (const fills of fillsIn(db(), account, judged)) {
      checkFills(tally, cfg, ref, fills);
      checkFills(fillsOnly, cfg, ref, fills);
    }
    const flaggedFills = [...new Set(fillsOnly.breaks().map((b) => b.key))];
    const expected = tally
      .breaks()
      .filter((b) => FILL_CODES.includes(b.code))
      .map((b) => ({
        code: b.code,
        key: b.key,
        currency: b.currency,
        expected: figureText(b.expected),
        actual: figureText(b.actual),
        difference: figureText(b.difference),
        message: b.message,
      }))
      .sort((a, b) => (a.code + a.key < b.code + b.key ? -1 : 1));

    const recorded = await db()
      .selectFrom('break')
      .select(['code', 'key', 'currency', 'expected', 'actual', 'difference', 'message'])
      .where('account', '=', account)
      .where('status', '=', 'open')
      .where('code', 'in', FILL_CODES)
      .execute();
    expect(recorded.sort((a, b) => (a.code + a.key < b.code + b.key ? -1 : 1))).toEqual(expected);
    const reference = tally.results().filter((r) => FILL_CODES.includes(r.code));
    expect(result.ruleResults.filter((r) => FILL_CODES.includes(r.code))).toEqual(reference);

    // The data does sit on both sides of every edge, and the prefilter does leave fills out.
    const byCode = (code: string) => expected.filter((b) => b.code === code).length;
    expect(byCode('E_FEE_RATE')).toBeGreaterThanOrEqual(20);
    expect(byCode('E_SYMBOL_RULES')).toBeGreaterThanOrEqual(6);
    expect(byCode('E_FILL_ORPHAN')).toBe(2);
    expect(reference.find((r) => r.code === 'E_SYMBOL_RULES')?.skipped).toBe(5);
    expect(reference.find((r) => r.code === 'E_FILL_AVGPX')?.skipped).toBe(5);
    expect(byCode('E_FILL_AVGPX')).toBe(2);
    // Orders created outside the period with cumQty 0.5 and no fill: breaks of their own days, judged on a first judgement.
    const outside = judged === SPAN ? [] : ['0.5', '0.5'];
    // (the rejected order with a fill of 1e-20 and cumQty 0 fails E_FILL_QTY too)
    expect(byCode('E_FILL_QTY')).toBe(6 + outside.length);
    // Two rejected orders with a fill or a filled quantity; FILLED with a quantity left open: the 1e-20 one, the two
    // at the size limit (999) and the one without a size limit (1e30).
    expect(byCode('E_ORDER_STATUS')).toBe(6);
    expect(
      expected
        .filter((b) => b.code === 'E_FILL_QTY' && b.actual === '0')
        .map((b) => b.expected)
        .sort(),
    ).toEqual(['0.00000000000000000001', '0.5', ...outside]);
    // The fills before and after the period (price off the increment) are breaks of their days on a first judgement only.
    expect(expected.filter((b) => b.code === 'E_SYMBOL_RULES' && b.actual === '2000.001').length).toBe(
      judged === SPAN ? 1 : 3,
    );
    // MARKET and STOP fills at the maker expectation (within tolerance): loaded and flagged.
    expect(byCode('E_FEE_RATE')).toBeGreaterThanOrEqual(20 + 8);
    // The same pages at any page size: the period's records, or (first judgement) every stored one.
    const changedSince = judged === SPAN ? undefined : null;
    const judgedFills =
      judged === SPAN
        ? inPeriod
        : Number(
            (
              await db()
                .selectFrom('exchange_fill')
                .select((eb) => eb.fn.countAll<string>().as('n'))
                .where('account', '=', account)
                .executeTakeFirstOrThrow()
            ).n,
          );
    let ordersLoaded = 0;
    for (const scanSize of [1, 4, 1000])
      for await (const page of exchangeOrderCandidatesIn(
        db(),
        account,
        SPAN,
        orderPrefilter(cfg, ref),
        scanSize,
        changedSince,
      ))
        ordersLoaded += page.orders.length;
    expect(ordersLoaded).toBeGreaterThan(0);
    expect(ordersLoaded).toBeLessThan(3 * reference.find((r) => r.code === 'E_FILL_QTY')!.checked);
    for (const scanSize of [1, 3, 1000]) {
      let scanned = 0;
      const loaded: string[] = [];
      const prefilter = fillPrefilter(
        cfg,
        ref,
        judged === SPAN ? SPAN : { from: new Date('2026-11-08T00:00:00Z'), to: new Date('2026-11-12T00:00:00Z') },
      );
      for await (const page of fillCandidatesIn(db(), account, SPAN, prefilter, scanSize, changedSince)) {
        scanned += page.scanned;
        loaded.push(...page.fills.map((f) => f.execId));
      }
      expect(scanned).toBe(judgedFills);
      expect(new Set(loaded).size).toBe(loaded.length);
      expect(loaded.length).toBeLessThan(judgedFills);
      for (const key of flaggedFills) expect(loaded).toContain(key);
      // Pages asked for two ahead (the reconcile's on a server) give the same fills in the same order.
      let aheadScanned = 0;
      const aheadLoaded: string[] = [];
      for await (const page of fillCandidatesIn(db(), account, SPAN, prefilter, scanSize, changedSince, { ahead: 2 })) {
        aheadScanned += page.scanned;
        aheadLoaded.push(...page.fills.map((f) => f.execId));
      }
      expect(aheadScanned).toBe(judgedFills);
      expect(aheadLoaded).toEqual(loaded);
      // The two halves of the id range (the reconcile scans them side by side on a server) give the same fills in
      // the same order, one half after the other, and scan every judged fill once.
      const halves = await fillIdHalves(db(), account);
      expect(halves).not.toBeNull();
      let halvesScanned = 0;
      const halvesLoaded: string[] = [];
      const perHalf: number[] = [];
      for (const bounds of halves!) {
        let inHalf = 0;
        for await (const page of fillCandidatesIn(db(), account, SPAN, prefilter, scanSize, changedSince, { bounds })) {
          halvesScanned += page.scanned;
          inHalf += page.scanned;
          halvesLoaded.push(...page.fills.map((f) => f.execId));
        }
        perHalf.push(inHalf);
      }
      expect(halvesScanned).toBe(judgedFills);
      expect(halvesLoaded).toEqual(loaded);
      expect(Math.min(...perHalf)).toBeGreaterThan(0);
    }
  }
});
