/**
 * The bench's scenario, shared by the one-account round (bench/main.ts) and the multi-account one
 * (bench/accounts.ts): the history's volumes at scale 1, the sandbox options of one account at a
 * scale, the new day's rates, the config sections of one account, and the round's database schema.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { SandboxCounts } from './sandbox-child.js';
import { DEFAULT_OPTIONS, type SandboxOptions } from '../sandbox/index.js';
import { MS_PER_DAY, toDay } from '../src/util/dates.js';

export const DAYS = 10;
/** The first run's history at scale 1, besides fills (FILLS_PER_ORDER makes them ~1,000,000). */
const HISTORY = { exchangeOrders: 200_000, partnerOrders: 100_000, deposits: 3_000, withdrawals: 1_000 };
/**
 * About 1,000 of the deposits come from partner orders paid to our wallets: 1.5% of the COMPLETED
 * BUY orders, which are ~0.65 of all (the sandbox's default, half of them, would bring 33,000).
 */
const PAID_TO_US_SHARE = 0.015;
const PARTNER_DEPOSITS = 1_000;
/** Mean fills per filled exchange order; about 0.85 of the orders fill. */
const FILLS_PER_ORDER = 6;
/**
 * The new day before the nightly run: ~100,000 fills, a day of the largest accounts (issue 47; issue 12 had 10,000,
 * which BENCH_NIGHTLY_FILLS=10000 brings back to compare with older builds); the rest at the history's daily rate
 * (deposits: besides the partner orders').
 */
const NEW_DAY = {
  fills: nightlyFills(process.env.BENCH_NIGHTLY_FILLS),
  partnerOrders: HISTORY.partnerOrders / DAYS,
  deposits: (HISTORY.deposits - PARTNER_DEPOSITS) / DAYS,
  withdrawals: HISTORY.withdrawals / DAYS,
};
function nightlyFills(text: string | undefined): number {
  if (text === undefined) return 100_000;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_NIGHTLY_FILLS must be a positive integer (got ${text})`);
  return n;
}

/** The scheduler fires at 02:00 UTC (default schedule.cron "0 2 * * *"): both runs start then. */
export const FIRE_AT_MS = 2 * 3_600_000;

/** Day X of a round: two days before today, so both runs lie in the past (see benchRound in bench/main.ts). */
export function roundDayX(): number {
  return Math.floor(Date.now() / MS_PER_DAY) * MS_PER_DAY - 2 * MS_PER_DAY;
}

/** One account's sandbox at `scale`: DAYS of history up to `firstAt`, live, on a clock offset to the calendar. */
export function sandboxOptions(scale: number, firstAt: number): Partial<SandboxOptions> & { clockOffsetMs: number } {
  const perDay = (n: number): number => Math.max(1, Math.round((n * scale) / DAYS));
  return {
    seed: 5,
    days: DAYS,
    exchangeOrdersPerDay: perDay(HISTORY.exchangeOrders),
    fillsPerOrder: FILLS_PER_ORDER,
    ordersPerDay: perDay(HISTORY.partnerOrders),
    depositsPerDay: perDay(HISTORY.deposits - PARTNER_DEPOSITS),
    paidToUsShare: PAID_TO_US_SHARE,
    withdrawalsPerDay: perDay(HISTORY.withdrawals),
    faults: 'none',
    // The operator's published spec: /orders and /trades return up to 1000 records a page.
    exchangeOrdersCap: 1000,
    live: true,
    now: new Date(firstAt),
    clockOffsetMs: firstAt - Date.now(),
  };
}

/** One account's config sections: the sandbox's fee rate, rate limits lifted, the history from its first day. */
export function accountSections(dayX: number) {
  const unlimited = 1000; // the schema's maximum: rate limits lifted for the local sandbox
  return {
    partner: {
      feeRate: DEFAULT_OPTIONS.partnerFeeRate,
      publicRateLimitPerSecond: unlimited,
      privateRateLimitPerSecond: unlimited,
    },
    exchange: { rateLimitPerSecond: unlimited, historyStart: toDay(new Date(dayX - DAYS * MS_PER_DAY)) },
  };
}

/** One account's new day at `scale`: its exchange orders from the fills per order the history shows. */
export function newDayRates(scale: number, afterFirst: SandboxCounts) {
  const fillsPerExchangeOrder = afterFirst.fills / afterFirst.exchangeOrders;
  return {
    exchangeOrdersPerDay: Math.max(1, Math.round((NEW_DAY.fills * scale) / fillsPerExchangeOrder)),
    ordersPerDay: Math.max(1, Math.round(NEW_DAY.partnerOrders * scale)),
    depositsPerDay: Math.max(1, Math.round(NEW_DAY.deposits * scale)),
    withdrawalsPerDay: Math.max(1, Math.round(NEW_DAY.withdrawals * scale)),
  };
}

export const minus = (x: SandboxCounts, y: SandboxCounts): SandboxCounts =>
  Object.fromEntries(
    Object.entries(x).map(([k, v]) => [k, v - y[k as keyof SandboxCounts]]),
  ) as unknown as SandboxCounts;

export function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

/** A fresh schema for a round; drop() drops it, or with BENCH_KEEP_SCHEMA=1 keeps it for inspection (its name is printed). */
export async function roundSchema(admin: pg.Client, baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  await admin.query(`create schema ${schema}`);
  return {
    url: withSearchPath(baseUrl, schema),
    drop: async () => {
      if (process.env.BENCH_KEEP_SCHEMA === '1') process.stdout.write(`kept schema ${schema}\n`);
      else await admin.query(`drop schema ${schema} cascade`);
    },
  };
}
