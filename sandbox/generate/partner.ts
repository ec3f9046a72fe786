/** Simulator: generates partner orders and their fee twins. */
import { Decimal } from '../../src/decimal/decimal.js';
import { COUNTRIES, USD_RATES, US_STATES } from '../catalog.js';
import type { DepositRecord, PartnerOrderRecord, PartnerOrderState, StateStep } from '../model.js';
import { flat, uuidFrom, type Rng } from '../prng.js';
import { div, mul, parseFx, rescale, round, sub, toFixed, type Fx } from '../fixed.js';
import { HOUR_MS, msText, timeKey, timeText } from '../time.js';
import type { World } from '../world.js';

const H = Decimal.ROUND_HALF_UP;

/** Fee twin in USD: fee x amountUsd / inputAmount rounded to the cent (within the 0.01 rule). */
export function usdTwin(fee: string, amountUsd: string, inputAmount: string): string {
  return new Decimal(fee).times(amountUsd).div(inputAmount).toDecimalPlaces(2, H).toFixed(2);
}

export interface PartnerGenContext {
  /** Squeeze every state change into (created, end]: activity of advance() stamped up to now. */
  compressEnd?: number;
  /** Orders created before this instant are never left PENDING/WITHDRAWING by a long delay. */
  recentFrom: number;
  /** Never pay to our wallets (orders added by tests: no deposit appears behind a balance snapshot). */
  external?: boolean;
}

/**
 * One partner order with its whole life (timeline). Amounts follow one recipe so that every
 * rule holds exactly: partnerFee = round(input x feeRate, precision), USD twins from
 * amountUsd / inputAmount rounded to cents, output floored to the output precision.
 */
export function makePartnerOrder(
  w: World,
  rng: Rng,
  createdMs: number,
  ctx: PartnerGenContext,
): { order: PartnerOrderRecord; deposit?: DepositRecord } {
  const fiats = w.partnerCurrencies.filter((c) => c.type === 'FIAT');
  const cryptos = w.partnerCurrencies.filter((c) => c.type === 'CRYPTO');
  const fiat = rng.pick(fiats);
  const crypto = rng.pick(cryptos);
  const orderType = rng.chance(0.75) ? 'BUY' : 'SELL';
  const paymentMethod = rng.pick(['CARD', 'CARD', 'CARD', 'APPLE_PAY', 'GOOGLE_PAY'] as const);
  const feeRate = parseFx(w.opts.partnerFeeRate);
  const input = orderType === 'BUY' ? fiat : crypto;
  const output = orderType === 'BUY' ? crypto : fiat;
  // Integer fixed-point throughout (exact, and fast enough for 100,000 orders a run).
  const jitter: Fx = { v: BigInt(1_000_000 + rng.int(-2000, 2000)), s: 6 };
  const usdIn = parseFx(USD_RATES[input.code]!);
  const usdOut = parseFx(USD_RATES[output.code]!);
  let inputAmount: Fx;
  let processingFee: Fx;
  let networkFee: Fx;
  if (orderType === 'BUY') {
    const min = rescale(parseFx(fiat.minBuyAmount ?? '20'), fiat.precision);
    const maxAll = rescale(parseFx(fiat.maxBuyAmount ?? '10000'), fiat.precision);
    const cap = rescale(parseFx('2500'), fiat.precision);
    const max = maxAll < cap ? maxAll : cap;
    inputAmount = { v: min + BigInt(Math.floor(rng.next() * Number(max - min))), s: fiat.precision };
    processingFee = round(mul(inputAmount, parseFx(paymentMethod === 'CARD' ? '0.0299' : '0.0249')), fiat.precision);
    networkFee = round({ v: BigInt(rng.int(10, 300)), s: 2 }, fiat.precision);
  } else {
    const usd: Fx = { v: BigInt(rng.int(3000, 500000)), s: 2 };
    inputAmount = div(usd, usdIn, crypto.precision, 'down');
    processingFee = round(mul(inputAmount, parseFx('0.0199')), crypto.precision);
    networkFee = div({ v: BigInt(rng.int(50, 200)), s: 2 }, usdIn, crypto.precision);
  }
  const partnerFee = round(mul(inputAmount, feeRate), input.precision);
  const net = sub(sub(sub(inputAmount, processingFee), partnerFee), networkFee);
  // The partner's spread: 0.4% against the user on both sides.
  const outputAmount =
    orderType === 'BUY'
      ? div(mul(net, usdIn), mul(usdOut, parseFx('1.004')), output.precision, 'down')
      : div(mul(mul(net, usdIn), parseFx('0.996')), usdOut, output.precision, 'down');
  const inputText = toFixed(inputAmount);
  const amountUsdText = input.code === 'USD' ? inputText : toFixed(round(mul(mul(inputAmount, usdIn), jitter), 2));
  const amountUsdFx = parseFx(amountUsdText);
  const twin = (fee: Fx): string => toFixed(div(mul(fee, amountUsdFx), inputAmount, 2));
  const fees = {
    processingFee: toFixed(processingFee),
    partnerFee: toFixed(partnerFee),
    networkFee: toFixed(networkFee),
  };

  const created = timeText(createdMs, rng);
  const finalState: PartnerOrderState = rng.chance(0.87) ? 'COMPLETED' : 'FAILED';
  // Most orders settle in minutes; a few take hours (those are the ones a poll sees PENDING).
  const delay = (): number =>
    createdMs >= ctx.recentFrom && rng.chance(0.08) ? rng.int(HOUR_MS, 18 * HOUR_MS) : rng.int(5_000, 900_000);
  const steps: StateStep<PartnerOrderState>[] = [{ state: 'PENDING', at: created.at, atMs: created.atMs }];
  let t = created.atMs;
  const next = (state: PartnerOrderState): void => {
    t = ctx.compressEnd !== undefined ? Math.min(t + rng.int(1, 2), ctx.compressEnd) : t + delay();
    const prev = steps[steps.length - 1]!;
    let step = timeText(Math.max(t, prev.atMs), rng);
    // Each state's text must sort strictly after the previous one (receivers order events by
    // it, to the nanosecond); a whole-second text could otherwise fall before a ms text.
    if (step.atKey <= timeKey(prev.at)) step = msText(prev.atMs + 1);
    t = step.atMs;
    steps.push({ state, at: step.at, atMs: step.atMs });
  };
  if (finalState === 'COMPLETED') {
    next('WITHDRAWING');
    next('COMPLETED');
  } else next('FAILED');

  const country = rng.pick(COUNTRIES.filter((c) => c.isBuyAllowed));
  const paidToUs =
    !ctx.external && orderType === 'BUY' && finalState === 'COMPLETED' && rng.chance(w.opts.paidToUsShare);
  const ours = w.addresses[crypto.code]!;
  // Our XRP address carries a destination tag; the order shows it without, or (rarely) a tag on the order side.
  const target = paidToUs
    ? ours.includes(':')
      ? rng.chance(0.5)
        ? ours.split(':')[0]!
        : ours
      : rng.chance(0.1)
        ? `${ours}:${rng.int(1, 99999)}`
        : ours
    : externalAddress(rng, crypto.code);
  const txHash = crypto.code === 'ETH' || crypto.code === 'USDC' ? flat(`0x${rng.hex(64)}`) : rng.hex(64);
  const order: PartnerOrderRecord = {
    orderId: uuidFrom(rng),
    externalReference: flat(`ref-${rng.hex(10)}`),
    orderType,
    paymentMethod,
    inputCurrency: input.code,
    inputAmount: inputText,
    outputCurrency: output.code,
    outputAmount: toFixed(outputAmount),
    amountUsd: amountUsdText,
    ...fees,
    processingFeeUsd: input.code === 'USD' ? fees.processingFee : twin(processingFee),
    partnerFeeUsd: input.code === 'USD' ? fees.partnerFee : twin(partnerFee),
    networkFeeUsd: input.code === 'USD' ? fees.networkFee : twin(networkFee),
    userId: uuidFrom(rng),
    userCountry: country.alpha2,
    targetWalletAddress: target,
    txHash,
    createdAt: created.at,
    createdAtMs: created.atMs,
    timeline: steps,
    paidToUs,
  };
  if (country.alpha2 === 'US') order.userState = `US-${rng.pick(US_STATES.filter((s) => s.isBuyAllowed)).alpha2}`;
  if (rng.chance(0.3)) order.subPartnerId = `sub-${rng.int(1, 20)}`;
  let deposit: DepositRecord | undefined;
  if (paidToUs) {
    const completedAt = steps[steps.length - 1]!.atMs;
    // The exchange credits on the same confirmation the partner reports: at or just before
    // COMPLETED, never before the instant the order was generated at (a whole-second text
    // floors atMs, which could put the credit behind a balance snapshot already taken).
    const ts = Math.max(createdMs, completedAt - rng.int(0, 20_000));
    deposit = {
      depositId: `D${w.seq.deposit++}`,
      amount: order.outputAmount,
      currency: order.outputCurrency,
      address: ours,
      txHash,
      timestamp: ts,
      timeline: [{ state: 'COMPLETED', atMs: ts }],
    };
  }
  return { order, deposit };
}

export function externalAddress(rng: Rng, currency: string): string {
  if (currency === 'BTC') return flat(`bc1q${rng.hex(38)}`);
  if (currency === 'XRP') return flat(`r${rng.hex(32)}`);
  return flat(`0x${rng.hex(40)}`);
}
