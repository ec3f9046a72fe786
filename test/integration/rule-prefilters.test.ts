import { expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import type { ExchangeOrderAgg, Fill } from '../../src/domain/index.js';
import { RULES, type RuleCode } from '../../src/rules/catalog.js';
import type { Judgement, RuleDef } from '../../src/rules/define.js';
import { fillPrefilter, orderPrefilter, type ReferenceData } from '../../src/rules/engine.js';
import { ratesForDay } from '../../src/rules/fill-rules.js';
import type { Verdict } from '../../src/rules/tally.js';
import { engineConfig } from '../../src/stages/reconcile.js';
import type { Db } from '../../src/store/db/database.js';
import { exchangeOrderCandidatesIn, exchangeOrdersWithFillsIn, fillsIn } from '../../src/store/recon/exchange-reads.js';
import { fillCandidatesIn } from '../../src/store/recon/fill-candidates.js';
import type { Span } from '../../src/store/db/keyset.js';
import { feeSchedule, latestSymbols } from '../../src/store/sync/snapshots.js';
import { describeEachStore } from '../helpers/db.js';
import { insertReferenceSnapshot, makeConfig, newContext } from './reconcile-seed.js';

/**
 * Every rule with a SQL pre-filter: on generated fills and orders around every edge its description names (fees at,
 * inside and past the tolerance of each day's maker and taker rates, prices and quantities on and off the grid by
 * 1e-20, price 0, sizes at the limits, VWAP at and past half an increment, statuses, sides and symbols that differ
 * from the order's, orphans, unknown symbols and symbols without increments), its pre-filter alone, run by the store,
 * keeps every record its pure check flags or skips, and every record it leaves out is one the check judges and passes
 * (the engine counts those as passed).
 */
const SPAN: Span = { from: new Date('2026-11-09T00:00:00Z'), to: new Date('2026-11-11T00:00:00Z') };
const DAYS = ['2026-11-09', '2026-11-10'];
const RATES: Record<string, { maker: string; taker: string }> = {
  '2026-11-09': { maker: '0.0008', taker: '0.001' },
  '2026-11-10': { maker: '0.0005', taker: '0.0009' },
};
const VARIANTS = [
  { account: 'counter-half-unit', file: {}, tolerance: '0.005', base: false },
  {
    account: 'base-configured',
    file: { exchange: { feeCurrency: 'base' }, tolerances: { exchangeFee: '0.0003' } },
    tolerance: '0.0003',
    base: true,
  },
];
const EPS = '1e-20';

type Rule = RuleDef<RuleCode>;
const WITH_FILL_PREFILTER = (RULES as readonly Rule[]).filter((r) => r.prefilter?.fill);
const WITH_ORDER_PREFILTER = (RULES as readonly Rule[]).filter((r) => r.prefilter?.exchangeOrder);

/** A small deterministic generator: the same cases on every run and both databases. */
function generator(seed: number) {
  let s = seed;
  const next = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  return {
    pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!,
    chance: (p: number) => next() < p,
  };
}

async function seedReference(db: Db, account: string): Promise<void> {
  const snap = (kind: string, at: string) => insertReferenceSnapshot(db, kind, 'exchange', at, account);
  const sym = await snap('symbols', '2026-11-01T00:00:00Z');
  const symbol = (name: string, inc: string | null, lot: string | null, min: string | null, max: string | null) => ({
    snapshot_id: sym,
    symbol: name,
    base_currency: name.split('-')[0]!,
    base_currency_scale: 8,
    counter_currency: 'USD',
    counter_currency_scale: 2,
    price_increment: inc,
    lot_size: lot,
    min_order_size: min,
    max_order_size: max,
  });
  await db
    .insertInto('exchange_symbol')
    .values([
      symbol('ETH-USD', '0.01', '0.0001', '0.0001', '1000'),
      symbol('ZRO-USD', '0.01', '0.0001', '0.0001', '0'),
      symbol('NUL-USD', null, null, null, null),
    ])
    .execute();
  for (const [at, day] of [
    ['2026-11-01T00:00:00Z', '2026-11-09'],
    ['2026-11-10T12:00:00Z', '2026-11-10'],
  ] as const) {
    const id = await snap('fees', at);
    await db
      .insertInto('exchange_fee_rate')
      .values({ snapshot_id: id, maker_rate: RATES[day]!.maker, taker_rate: RATES[day]!.taker })
      .execute();
  }
}

const SYMBOLS = ['ETH-USD', 'ETH-USD', 'ZRO-USD', 'NUL-USD', 'DOGE-XYZ'];
const PRICES = ['2000', '2000.01', '2000.005', `2000.01${'0'.repeat(18)}1`, '0', '1234567890.12345678901234567890'];
const QTYS = ['0.5', '0.0001', '0.00015', '0.00010000000000000001', '0.00009999999999999999', '1e-30'];
const TYPES = ['MARKET', 'STOP', 'LIMIT', 'STOPLIMIT', null];

/** Fills each on an order of its own (or none), and orders of several fills around the order rules' edges. */
async function seedRecords(db: Db, account: string, v: (typeof VARIANTS)[number]): Promise<void> {
  const g = generator(v.account.length * 7919);
  const fills: Record<string, unknown>[] = [];
  const orders: Record<string, unknown>[] = [];
  const notFound: { account: string; ex_ord_id: string }[] = [];
  let exec = 1000;
  const tolerance = new Decimal(v.tolerance);
  for (let i = 0; i < 400; i++) {
    exec += 1;
    const day = g.pick(DAYS);
    const at = g.pick([`${day}T00:00:00Z`, `${day}T13:00:00Z`, `${day}T23:59:59.999999Z`]);
    const symbol = g.pick(SYMBOLS);
    const price = g.pick(PRICES);
    const qty = g.pick(QTYS);
    const basis = v.base ? new Decimal(qty) : new Decimal(qty).times(price);
    const rate = new Decimal(g.pick([RATES[day]!.maker, RATES[day]!.taker]));
    const delta = g.pick(['0', v.tolerance, tolerance.plus(EPS).toString(), tolerance.minus(EPS).toString(), '1']);
    const fee = basis.times(rate).plus(g.chance(0.5) ? delta : new Decimal(delta).neg());
    const side = g.pick(['BUY', 'SELL']);
    const id = String(exec);
    fills.push({
      account,
      exec_id: id,
      ex_ord_id: id,
      side,
      symbol,
      price,
      qty,
      fee: fee.toString(),
      timestamp: at,
      raw: '{}',
    });
    if (g.chance(0.05)) continue; // an orphan, not yet looked up
    if (g.chance(0.03)) {
      notFound.push({ account, ex_ord_id: id }); // an orphan the exchange answered 404 for
      continue;
    }
    orders.push({
      account,
      ex_ord_id: id,
      ord_type: g.pick(TYPES),
      ord_status: 'FILLED',
      side: g.chance(0.1) ? (side === 'BUY' ? 'SELL' : 'BUY') : g.chance(0.05) ? null : side,
      symbol: g.chance(0.1) ? g.pick(SYMBOLS) : symbol,
      cum_qty: qty,
      leaves_qty: '0',
      avg_px: price,
      timestamp: at,
      raw: '{}',
    });
  }
  for (let i = 0; i < 150; i++) {
    const id = String(50_000 + i);
    const symbol = g.pick(SYMBOLS);
    const legs: [string, string][] = g.pick([
      [
        ['2000', '0.5'],
        ['2000.01', '0.5'],
      ],
      [['2000', '0.0001']],
      [['2000', '1e-20']],
      [],
    ]);
    for (const [price, qty] of legs) {
      exec += 1;
      const fee = new Decimal(qty)
        .times(v.base ? '1' : price)
        .times(RATES['2026-11-10']!.taker)
        .toString();
      fills.push({
        account,
        exec_id: String(exec),
        ex_ord_id: id,
        side: 'BUY',
        symbol,
        price,
        qty,
        fee,
        timestamp: '2026-11-10T09:00:00Z',
        raw: '{}',
      });
    }
    const sum = legs.reduce((t, [, q]) => t.plus(q), new Decimal(0));
    const vwap = sum.isZero()
      ? new Decimal('2000')
      : legs.reduce((t, [p, q]) => t.plus(new Decimal(p).times(q)), new Decimal(0)).div(sum);
    orders.push({
      account,
      ex_ord_id: id,
      ord_type: 'LIMIT',
      ord_status: g.pick(['FILLED', 'FILLED', 'REJECTED', 'CANCELED', 'EXPIRED', 'PART_FILLED']),
      side: 'BUY',
      symbol,
      cum_qty: g.pick([sum.toString(), sum.plus(EPS).toString(), sum.minus(EPS).toString(), '0', '0.5', null]),
      leaves_qty: g.pick(['0', EPS, '999', `999${'.' + '0'.repeat(19)}1`, '1e30', null]),
      avg_px: g.pick([
        vwap.toString(),
        vwap.plus('0.005').toString(),
        vwap.plus('0.00500000000000000001').toString(),
        vwap.plus('0.03').toString(),
        null,
      ]),
      timestamp: g.pick(['2026-11-10T09:00:00Z', '2026-11-12T00:00:00Z']),
      raw: '{}',
    });
  }
  for (let at = 0; at < fills.length; at += 200)
    await db
      .insertInto('exchange_fill')
      .values(fills.slice(at, at + 200) as never)
      .execute();
  for (let at = 0; at < orders.length; at += 200)
    await db
      .insertInto('exchange_order')
      .values(orders.slice(at, at + 200) as never)
      .execute();
  if (notFound.length) await db.insertInto('exchange_order_not_found').values(notFound).execute();
}

const verdictOf = (j: Judgement): Verdict => (typeof j === 'string' || Array.isArray(j) ? j : j.verdict);
/** A verdict the rule must see: a break, or an entity in scope it cannot judge. */
const mustLoad = (v: Verdict) => v === 'skipped' || (Array.isArray(v) && v.length > 0);

describeEachStore('each rule pre-filter agrees with its pure check', (ctx) => {
  const db = () => ctx.store.db;

  for (const v of VARIANTS)
    it(`keeps every record a rule could fail, leaves out only records it passes (${v.account})`, async () => {
      await seedReference(db(), v.account);
      await seedRecords(db(), v.account, v);
      const context = await newContext(ctx.store, makeConfig({ account: v.account, ...v.file }), `run-${v.account}`, {
        from: '2026-11-09',
        to: '2026-11-11',
      });
      const cfg = engineConfig(context);
      const ref: ReferenceData = {
        currencies: null,
        symbols: (await latestSymbols(db(), v.account))?.symbols ?? null,
        fees: await feeSchedule(db(), v.account),
        whitelist: null,
        balanceSnapshotCount: 0,
      };
      const x = { cfg, ref };

      const fills: Fill[] = [];
      for await (const page of fillsIn(db(), v.account, SPAN)) fills.push(...page);
      for (const rule of WITH_FILL_PREFILTER) {
        const kept = new Set<string>();
        let scanned = 0;
        const filter = fillPrefilter(cfg, ref, SPAN, [rule.code]);
        for await (const page of fillCandidatesIn(db(), v.account, SPAN, filter, 97)) {
          scanned += page.scanned;
          for (const f of page.fills) kept.add(f.execId);
        }
        expect(scanned).toBe(fills.length);
        let flagged = 0;
        for (const f of fills) {
          const rates = ref.fees ? ratesForDay(ref.fees, f.timestamp) : undefined;
          const verdict = verdictOf(rule.check.fill!(f, { ...x, symbol: ref.symbols?.get(f.symbol), rates }));
          if (mustLoad(verdict)) {
            flagged += 1;
            expect(kept.has(f.execId), `${rule.code} ${f.execId} ${JSON.stringify(verdict)}`).toBe(true);
          } else if (!kept.has(f.execId)) expect(verdict, `${rule.code} ${f.execId}`).toEqual([]);
        }
        // The cases sit on both sides of the rule's edges: some flagged, some left out.
        expect(flagged, rule.code).toBeGreaterThan(0);
        expect(kept.size, rule.code).toBeLessThan(fills.length);
      }

      const orders: ExchangeOrderAgg[] = [];
      for await (const page of exchangeOrdersWithFillsIn(db(), v.account, SPAN)) orders.push(...page);
      for (const rule of WITH_ORDER_PREFILTER) {
        const kept = new Set<string>();
        let passed = 0;
        for await (const page of exchangeOrderCandidatesIn(
          db(),
          v.account,
          SPAN,
          orderPrefilter(cfg, ref, [rule.code]),
          37,
        )) {
          passed += page.passed[rule.code] ?? 0;
          for (const o of page.orders) kept.add(o.exOrdId);
        }
        let flagged = 0;
        let leftOutJudged = 0;
        for (const o of orders) {
          const symbol = o.symbol ? ref.symbols?.get(o.symbol) : undefined;
          const verdict = verdictOf(rule.check.exchangeOrder!(o, { ...x, symbol }));
          if (mustLoad(verdict)) {
            flagged += 1;
            expect(kept.has(o.exOrdId), `${rule.code} ${o.exOrdId} ${JSON.stringify(verdict)}`).toBe(true);
          } else if (!kept.has(o.exOrdId) && verdict !== 'n/a') {
            expect(verdict, `${rule.code} ${o.exOrdId}`).toEqual([]);
            leftOutJudged += 1;
          }
        }
        // What the store counts as passed is what the check judged and passed among the orders left out.
        expect(passed, rule.code).toBe(leftOutJudged);
        expect(flagged, rule.code).toBeGreaterThan(0);
        expect(leftOutJudged, rule.code).toBeGreaterThan(0);
      }
    });
});
