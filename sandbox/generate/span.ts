/** Simulator: generates a span of time of every kind of record (partner orders, exchange orders and fills, deposits, withdrawals), history and live. */
import { Decimal } from '../../src/decimal/decimal.js';
import { EXCHANGE_SCALES, USD_RATES, WITHDRAWAL_FEES } from '../catalog.js';
import type { DepositRecord, DepositState, WithdrawalRecord, WithdrawalState } from '../model.js';
import { createRng, uuidFrom, type Rng } from '../prng.js';
import { DAY_MS, HOUR_MS, dayText } from '../time.js';
import type { World } from '../world.js';
import { makeExchangeOrder } from './exchange.js';
import { makePartnerOrder } from './partner.js';

/** Our deposit addresses and the withdrawal whitelist: fixed per seed. */
export function setupAccount(w: World): void {
  const rng = createRng(w.opts.seed, 'account');
  w.addresses.BTC = `bc1qsandbox${rng.hex(30)}`;
  w.addresses.ETH = `0x5a4d${rng.hex(36)}`;
  w.addresses.USDC = `0x5a4e${rng.hex(36)}`;
  // XRP needs a destination tag: appended after a colon, as the exchange contract says.
  w.addresses.XRP = `rSandbox${rng.hex(25)}:${rng.int(100000, 999999)}`;
  w.whitelist = [];
  for (const currency of w.currencies()) {
    for (const name of ['Treasury', 'Cold storage'])
      w.whitelist.push({ whitelistId: uuidFrom(rng), name: `${name} ${currency}`, currency });
  }
}

interface SpanCounts {
  partner: number;
  exchange: number;
  deposits: number;
  withdrawals: number;
}

/** Expected counts for a span of `ms` at the per-day volumes; fractions resolved by the rng. */
export function countsFor(w: World, ms: number, rng: Rng): SpanCounts {
  const n = (perDay: number): number => Math.floor((perDay * ms) / DAY_MS + rng.next());
  return {
    partner: n(w.opts.ordersPerDay),
    exchange: n(w.opts.exchangeOrdersPerDay),
    deposits: n(w.opts.depositsPerDay),
    withdrawals: n(w.opts.withdrawalsPerDay),
  };
}

function sortedTimes(rng: Rng, count: number, from: number, to: number, burst: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(from + Math.floor(rng.next() * (to - from + 1)));
  out.sort((a, b) => a - b);
  // Bursts: records sharing a millisecond, so clients must page inside one millisecond.
  for (let i = 1; i < out.length; i++) if (rng.chance(burst)) out[i] = out[i - 1]!;
  return out;
}

/**
 * Generates the activity of one span (from, to] and appends it in time order. History uses one
 * span per UTC day (exact daily volumes, a PRNG stream per day so a day is the same whatever
 * `now` is); live ticks and advance() use short spans. `stampFrom/stampTo` squeeze the
 * timestamps of a span into another interval (advance: an hour of activity stamped up to now).
 */
export function generateSpan(
  w: World,
  stream: string,
  span: { from: number; to: number; counts: SpanCounts; cutoff?: number; stamp?: { from: number; to: number } },
): void {
  const { counts } = span;
  // One stream per kind of record: cutting a day at `now` changes no other kind's data.
  const rngP = createRng(w.opts.seed, `${stream}:partner`);
  const rngX = createRng(w.opts.seed, `${stream}:exchange`);
  const rngD = createRng(w.opts.seed, `${stream}:deposits`);
  const rngW = createRng(w.opts.seed, `${stream}:withdrawals`);
  const stamp = span.stamp ?? { from: span.from, to: span.to };
  const cutoff = span.cutoff ?? Number.POSITIVE_INFINITY;
  const recentFrom = w.now0 - 20 * HOUR_MS;
  const compressEnd = span.stamp ? stamp.to : undefined;
  const newDeposits: DepositRecord[] = [];

  for (const ts of sortedTimes(rngP, counts.partner, stamp.from, stamp.to, 0.02)) {
    const ctx = compressEnd !== undefined ? { recentFrom, compressEnd } : { recentFrom };
    // Squeezed: created at least 3 ms before the end so every later state fits inside the span.
    const created = compressEnd !== undefined ? Math.max(stamp.from, Math.min(ts, compressEnd - 3)) : ts;
    const { order, deposit } = makePartnerOrder(w, rngP, created, ctx);
    if (order.createdAtMs > cutoff) continue;
    w.addPartnerOrder(order);
    if (deposit) w.scheduled.push(deposit);
  }
  for (const ts of sortedTimes(rngX, counts.exchange, stamp.from, stamp.to, 0.2)) {
    if (ts > cutoff) break;
    makeExchangeOrder(w, rngX, ts, { liveFrom: w.now0 - 6 * HOUR_MS });
  }
  for (const ts of sortedTimes(rngD, counts.deposits, stamp.from, stamp.to, 0)) {
    const d = makeDeposit(w, rngD, ts, recentFrom);
    if (ts <= cutoff) newDeposits.push(d);
  }
  const end = Math.min(stamp.to, cutoff);
  // Deposits of partner orders whose completion time has come.
  const due = w.scheduled.filter((d) => d.timestamp <= end);
  w.scheduled = w.scheduled.filter((d) => d.timestamp > end);
  newDeposits.push(...due);
  newDeposits.sort((a, b) => a.timestamp - b.timestamp || (a.depositId < b.depositId ? -1 : 1));
  for (const d of newDeposits) w.addDeposit(d);
  for (const ts of sortedTimes(rngW, counts.withdrawals, stamp.from, stamp.to, 0)) {
    const wd = makeWithdrawal(w, rngW, ts, recentFrom);
    if (ts <= cutoff) w.addWithdrawal(wd);
  }
  w.generatedUntil = Math.max(w.generatedUntil, end);
}

function cryptoAmount(rng: Rng, currency: string, usdMin: number, usdMax: number): string {
  const usd = new Decimal(rng.int(usdMin, usdMax)).plus(rng.next().toFixed(2));
  // ETH arrives with full 18-decimal wei amounts half of the time.
  const scale = currency === 'ETH' && rng.chance(0.5) ? 18 : (EXCHANGE_SCALES[currency] ?? 8);
  return usd.div(USD_RATES[currency]!).toDecimalPlaces(scale, Decimal.ROUND_DOWN).toString();
}

function makeDeposit(w: World, rng: Rng, ts: number, recentFrom: number): DepositRecord {
  const currency = rng.pick(w.opts.cryptoCurrencies.filter((c) => w.addresses[c]));
  const r = rng.next();
  // UNCONFIRMED only on recent deposits, and it only ever turns REJECTED: a state change that
  // never moves the balance, so roll-forward stays exact whichever state a poll saw.
  let timeline: Array<{ state: DepositState; atMs: number }>;
  if (r < 0.06) timeline = [{ state: 'REJECTED', atMs: ts }];
  else if (r < 0.12 && ts >= recentFrom)
    timeline = [
      { state: 'UNCONFIRMED', atMs: ts },
      { state: 'REJECTED', atMs: ts + rng.int(HOUR_MS, 20 * HOUR_MS) },
    ];
  else timeline = [{ state: 'COMPLETED', atMs: ts }];
  const d: DepositRecord = {
    depositId: `D${w.seq.deposit++}`,
    amount: cryptoAmount(rng, currency, 100, 50000),
    currency,
    address: w.addresses[currency]!,
    txHash: currency === 'BTC' || currency === 'XRP' ? rng.hex(64) : `0x${rng.hex(64)}`,
    timestamp: ts,
    timeline,
  };
  return d;
}

function makeWithdrawal(w: World, rng: Rng, ts: number, recentFrom: number): WithdrawalRecord {
  const currency = rng.pick(['USD', 'EUR', 'BTC', 'ETH', 'USDC'].filter((c) => w.opening.has(c)));
  const scale = EXCHANGE_SCALES[currency] ?? 8;
  const amount = new Decimal(rng.int(100, 20000))
    .div(USD_RATES[currency]!)
    .toDecimalPlaces(scale, Decimal.ROUND_DOWN)
    .toString();
  const beneficiary = rng.pick(w.whitelist.filter((e) => e.currency === currency)).whitelistId;
  // PENDING then COMPLETED: both debit amount + fee, so the balance moves once, at the timestamp.
  const done = ts >= recentFrom ? ts + rng.int(10 * 60_000, 20 * HOUR_MS) : ts + rng.int(10 * 60_000, 2 * HOUR_MS);
  const timeline: Array<{ state: WithdrawalState; atMs: number }> = [
    { state: 'PENDING', atMs: ts },
    { state: 'COMPLETED', atMs: done },
  ];
  return {
    withdrawalId: `W${w.seq.withdrawal++}`,
    amount,
    fee: WITHDRAWAL_FEES[currency]!,
    currency,
    beneficiary,
    timestamp: ts,
    timeline,
  };
}

/** The whole history: `days` full days plus today up to now, one PRNG stream per day. */
export function generateHistory(w: World): void {
  setupAccount(w);
  // Filled orders average ~0.85 of all orders (the rest are rejected, expired or cancelled unfilled).
  w.fills.reserve(Math.ceil(w.opts.exchangeOrdersPerDay * (w.opts.days + 1) * w.opts.fillsPerOrder * 0.85) + 1024);
  for (let day = w.historyStart; day <= w.todayStart; day += DAY_MS) {
    const counts = {
      partner: w.opts.ordersPerDay,
      exchange: w.opts.exchangeOrdersPerDay,
      deposits: w.opts.depositsPerDay,
      withdrawals: w.opts.withdrawalsPerDay,
    };
    generateSpan(w, `day:${dayText(day)}`, { from: day, to: day + DAY_MS - 1, counts, cutoff: w.now0 });
  }
}

/** Live activity for (generatedUntil, to]; `stampTo` set by advance() to squeeze more activity in. */
export function generateLive(w: World, to: number, simulatedMs?: number): void {
  const from = w.generatedUntil + 1;
  if (to < from) return;
  const stream = `live:${from}:${to}:${simulatedMs ?? 0}`;
  const counts = countsFor(w, simulatedMs ?? to - from + 1, createRng(w.opts.seed, stream));
  generateSpan(w, stream, { from, to, counts, stamp: simulatedMs !== undefined ? { from, to } : undefined });
  w.generatedUntil = to;
}
