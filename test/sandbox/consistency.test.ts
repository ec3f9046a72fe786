import { afterEach, describe, expect, it } from 'vitest';
import { Decimal } from '../../src/decimal/decimal.js';
import { LATE_EVENTS, startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { flowsBetween, reconcile, snapshot, sortBreaks } from './recon-oracle.js';

const NOW = new Date('2026-11-21T15:30:00Z');
const small = {
  days: 6,
  ordersPerDay: 30,
  exchangeOrdersPerDay: 30,
  depositsPerDay: 4,
  withdrawalsPerDay: 3,
  now: NOW,
};
let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('generated data is consistent to the last digit', () => {
  it('clean data: an exact reconciliation finds nothing, balances = opening + every flow', async () => {
    sb = await startSandbox({ ...small, seed: 11 });
    const s1 = await snapshot(sb);
    await sleep(5);
    const s2 = await snapshot(sb);
    expect(reconcile(sb, { feeRate: sb.partnerFeeRate, webhooks: true, snapshots: [s1, s2] })).toEqual([]);
    expect(sb.expectedBreaks()).toEqual([]);
    const flows = flowsBetween(sb, 0, sb.data.clock());
    for (const [c, open] of Object.entries(sb.data.openingBalances())) {
      expect(s1.balances.get(c)!.toString(), c).toBe(new Decimal(open).plus(flows.get(c) ?? 0).toString());
    }
  });

  it.each([3, 5, 8])(
    'planted discrepancies (seed %i): exactly the expected breaks, each code at least once',
    async (seed) => {
      sb = await startSandbox({ ...small, seed, discrepancies: true });
      const s1 = await snapshot(sb);
      await sleep(5);
      const s2 = await snapshot(sb);
      const found = reconcile(sb, { feeRate: sb.partnerFeeRate, webhooks: true, snapshots: [s1, s2] });
      expect(sortBreaks(found)).toEqual(sortBreaks(sb.expectedBreaks()));
      const codes = new Set(sb.expectedBreaks().map((b) => b.code));
      for (const code of [
        'P_FEE_USD',
        'P_AMOUNT_USD',
        'P_PARTNER_FEE_RATE',
        'P_FEE_BOUNDS',
        'P_PRECISION',
        'P_STATE',
        'P_STALE',
        'P_WEBHOOK_GAP',
        'X_DEPOSIT_MISSING',
        'X_DEPOSIT_AMOUNT',
        'E_FILL_QTY',
        'E_FILL_AVGPX',
        'E_FILL_ORPHAN',
        'E_FEE_RATE',
        'E_SYMBOL_RULES',
        'E_BALANCE_ROLL',
        'E_BALANCE_SANITY',
        'E_STALE',
        'E_WITHDRAWAL_BENEFICIARY',
      ]) {
        expect(codes.has(code), code).toBe(true);
      }
    },
  );

  it('every code is planted with narrower catalogs too (no USD orders, no BTC)', async () => {
    sb = await startSandbox({
      ...small,
      seed: 6,
      discrepancies: true,
      fiatCurrencies: ['EUR', 'GBP'],
      cryptoCurrencies: ['ETH', 'USDC', 'XRP'],
      symbols: ['ETH-USD', 'USDC-USD'],
    });
    const s1 = await snapshot(sb);
    await sleep(5);
    const s2 = await snapshot(sb);
    const found = reconcile(sb, { feeRate: sb.partnerFeeRate, webhooks: true, snapshots: [s1, s2] });
    expect(sortBreaks(found)).toEqual(sortBreaks(sb.expectedBreaks()));
    expect(new Set(sb.expectedBreaks().map((b) => b.code)).size).toBe(21);
  });

  it('fixDiscrepancy corrects every planted case, and served balances stay a consistent series', async () => {
    sb = await startSandbox({ ...small, seed: 4, discrepancies: true });
    const s1 = await snapshot(sb);
    await sleep(5);
    const s2 = await snapshot(sb);
    for (const b of sb.expectedBreaks()) sb.fixDiscrepancy(b.code);
    expect(sb.expectedBreaks()).toEqual([]);
    await sleep(5);
    const s3 = await snapshot(sb);
    expect(reconcile(sb, { feeRate: sb.partnerFeeRate, webhooks: true, snapshots: [s1, s2, s3] })).toEqual([]);
    // The corrected history still adds up: balance = opening + every flow.
    const flows = flowsBetween(sb, 0, Number.MAX_SAFE_INTEGER);
    for (const [c, open] of Object.entries(sb.data.openingBalances())) {
      expect(s3.balances.get(c)!.toString(), c).toBe(new Decimal(open).plus(flows.get(c) ?? 0).toString());
    }
  });

  it("late events: exactly the expected breaks before and after each release, whatever the records' age", async () => {
    sb = await startSandbox({ ...small, seed: 12, discrepancies: true, lateEvents: true, lateEventsAgeDays: 4 });
    const s1 = await snapshot(sb);
    await sleep(5);
    const s2 = await snapshot(sb);
    const truth = () =>
      sortBreaks(sb!.expectedBreaks().filter((b) => !b.dueAt || Date.parse(b.dueAt) <= sb!.data.clock()));
    const found = () =>
      sortBreaks(reconcile(sb!, { feeRate: sb!.partnerFeeRate, webhooks: true, snapshots: [s1, s2] }));
    expect(found()).toEqual(truth());
    expect(
      sb.expectedBreaks().filter((b) => b.case !== undefined && (LATE_EVENTS as readonly string[]).includes(b.case))
        .length,
    ).toBe(LATE_EVENTS.length);
    const fillsBefore = sb.data.fills().length;
    for (const event of LATE_EVENTS) {
      const released = sb.releaseLate(event)!;
      expect(released.resolved.length, event).toBe(1);
      expect(found(), event).toEqual(truth());
    }
    // The fill published late: one fill more, its execId above every other, its time days back.
    const fills = sb.data.fills();
    expect(fills.length).toBe(fillsBefore + 1);
    const latest = fills.reduce((a, f) => (BigInt(f.execId) > BigInt(a.execId) ? f : a));
    expect(latest.timestamp).toBeLessThan(sb.data.clock() - 3 * 86_400_000);
    expect(sb.releaseLate('publish-fill')).toBeUndefined();
  });

  it('same seed and day: same data', async () => {
    sb = await startSandbox({ ...small, seed: 21, discrepancies: true });
    const a = {
      fills: JSON.stringify(sb.data.fills()),
      orders: JSON.stringify(sb.data.partnerOrders()),
      breaks: sb.expectedBreaks(),
    };
    await sb.close();
    sb = await startSandbox({ ...small, seed: 21, discrepancies: true });
    expect(JSON.stringify(sb.data.fills())).toBe(a.fills);
    expect(JSON.stringify(sb.data.partnerOrders())).toBe(a.orders);
    expect(sb.expectedBreaks()).toEqual(a.breaks);
  });

  it('paidToUsShare sets how many partner orders pay to our wallets; fills and the other deposits stay, the data stays clean', async () => {
    sb = await startSandbox({ ...small, seed: 31 });
    expect(sb.data.partnerOrderRecords().filter((o) => o.paidToUs).length).toBeGreaterThan(10);
    const fills = JSON.stringify(sb.data.fills());
    const partnerTx = new Set(sb.data.partnerOrderRecords().map((o) => o.txHash));
    const others = sb.data
      .deposits()
      .filter((d) => !partnerTx.has(d.txHash ?? ''))
      .map((d) => `${d.txHash} ${d.amount} ${d.timestamp}`);
    await sb.close();

    sb = await startSandbox({ ...small, seed: 31, paidToUsShare: 0 });
    expect(sb.data.partnerOrderRecords().filter((o) => o.paidToUs)).toEqual([]);
    expect(sb.data.deposits().map((d) => `${d.txHash} ${d.amount} ${d.timestamp}`)).toEqual(others);
    expect(JSON.stringify(sb.data.fills())).toBe(fills);
    const s1 = await snapshot(sb);
    await sleep(5);
    const s2 = await snapshot(sb);
    expect(reconcile(sb, { feeRate: sb.partnerFeeRate, webhooks: true, snapshots: [s1, s2] })).toEqual([]);
  });

  it('live mode: the clock follows the wall clock and orders added during a scan stay consistent', async () => {
    sb = await startSandbox({ ...small, seed: 10, live: true, liveTickMs: 20, now: undefined });
    const c0 = sb.data.clock();
    const s1 = await snapshot(sb);
    sb.addPartnerOrders(5);
    await sleep(60);
    expect(sb.data.clock()).toBeGreaterThan(c0 + 40);
    const s2 = await snapshot(sb);
    const found = reconcile(sb, { feeRate: sb.partnerFeeRate, webhooks: false, snapshots: [s1, s2] });
    expect(found).toEqual([]);
    expect(
      sb.data
        .partnerOrders()
        .slice(-5)
        .every((o) => o.orderState === 'COMPLETED' || o.orderState === 'FAILED'),
    ).toBe(true);
  });

  it('live mode: advance() adds activity and two snapshots roll forward exactly', async () => {
    sb = await startSandbox({ ...small, seed: 9, live: true, now: undefined });
    const before = sb.data.fills().length;
    const s1 = await snapshot(sb);
    sb.advance(6 * 3_600_000);
    await sleep(3);
    const s2 = await snapshot(sb);
    expect(sb.data.fills().length).toBeGreaterThan(before);
    expect(reconcile(sb, { feeRate: sb.partnerFeeRate, webhooks: false, snapshots: [s1, s2] })).toEqual([]);
    const moved = [...s2.balances].some(([c, v]) => !v.eq(s1.balances.get(c)!));
    expect(moved).toBe(true);
  });
});
