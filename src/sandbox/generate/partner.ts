import { Decimal } from '../../decimal/decimal.js';
import { COUNTRIES, USD_RATES, US_STATES } from '../catalog.js';
import type { DepositRecord, PartnerOrderRecord, PartnerOrderState, StateStep } from '../model.js';
import { uuidFrom, type Rng } from '../prng.js';
import { HOUR_MS, msText, timeText } from '../time.js';
import type { World } from '../world.js';

const H = Decimal.ROUND_HALF_UP;
const DOWN = Decimal.ROUND_DOWN;

/** Fee twin in USD: fee x amountUsd / inputAmount rounded to the cent (within the 0.01 rule). */
export function usdTwin(fee: string, amountUsd: string, inputAmount: string): string {
  return new Decimal(fee).times(amountUsd).div(inputAmount).toDecimalPlaces(2, H).toFixed(2);
}

export interface PartnerGenContext {
  /** Squeeze every state change into (created, end]: activity of advance() stamped up to now. */
  compressEnd?: number;
  /** Orders created before this instant are never left PENDING/WITHDRAWING by a long delay. */
  recentFrom: number;
}

/**
 * One partner order with its whole life (timeline). Amounts follow one recipe so that every
 * rule holds exactly: partnerFee = round(input x feeRate, precision), USD twins from
 * amountUsd / inputAmount rounded to cents, output floored to the output precision.
 */
export function makePartnerOrder(w: World, rng: Rng, createdMs: number, ctx: PartnerGenContext): { order: PartnerOrderRecord; deposit?: DepositRecord } {
  const fiats = w.partnerCurrencies.filter((c) => c.type === 'FIAT');
  const cryptos = w.partnerCurrencies.filter((c) => c.type === 'CRYPTO');
  const fiat = rng.pick(fiats);
  const crypto = rng.pick(cryptos);
  const orderType = rng.chance(0.75) ? 'BUY' : 'SELL';
  const paymentMethod = rng.pick(['CARD', 'CARD', 'CARD', 'APPLE_PAY', 'GOOGLE_PAY'] as const);
  const feeRate = new Decimal(w.opts.partnerFeeRate);
  const input = orderType === 'BUY' ? fiat : crypto;
  const output = orderType === 'BUY' ? crypto : fiat;
  const jitter = new Decimal(rng.next()).minus(0.5).times(0.004).plus(1);
  let inputAmount: Decimal;
  let processingFee: Decimal;
  let networkFee: Decimal;
  if (orderType === 'BUY') {
    const min = new Decimal(fiat.minBuyAmount ?? '20');
    const max = Decimal.min(new Decimal(fiat.maxBuyAmount ?? '10000'), 2500);
    inputAmount = new Decimal(rng.next()).times(max.minus(min)).plus(min).toDecimalPlaces(fiat.precision, DOWN);
    processingFee = inputAmount.times(paymentMethod === 'CARD' ? '0.0299' : '0.0249').toDecimalPlaces(fiat.precision, H);
    networkFee = new Decimal(rng.int(10, 300)).div(100).toDecimalPlaces(fiat.precision, H);
  } else {
    const usd = new Decimal(rng.int(30, 5000)).plus(rng.next());
    inputAmount = usd.div(USD_RATES[crypto.code]!).toDecimalPlaces(crypto.precision, DOWN);
    processingFee = inputAmount.times('0.0199').toDecimalPlaces(crypto.precision, H);
    networkFee = new Decimal(rng.int(50, 200)).div(100).div(USD_RATES[crypto.code]!).toDecimalPlaces(crypto.precision, H);
  }
  const partnerFee = inputAmount.times(feeRate).toDecimalPlaces(input.precision, H);
  const net = inputAmount.minus(processingFee).minus(partnerFee).minus(networkFee);
  const usdPerInput = new Decimal(USD_RATES[input.code]!);
  const usdPerOutput = new Decimal(USD_RATES[output.code]!);
  // The partner's spread: 0.4% against the user on both sides.
  const outputAmount =
    orderType === 'BUY'
      ? net.times(usdPerInput).div(usdPerOutput.times('1.004')).toDecimalPlaces(output.precision, DOWN)
      : net.times(usdPerInput).times('0.996').div(usdPerOutput).toDecimalPlaces(output.precision, DOWN);
  const amountUsd = input.code === 'USD' ? inputAmount : inputAmount.times(usdPerInput).times(jitter).toDecimalPlaces(2, H);

  const fix = (d: Decimal, p: number): string => d.toFixed(p);
  const inputText = fix(inputAmount, input.precision);
  const amountUsdText = input.code === 'USD' ? inputText : amountUsd.toFixed(2);
  const fees = { processingFee: fix(processingFee, input.precision), partnerFee: fix(partnerFee, input.precision), networkFee: fix(networkFee, input.precision) };

  const created = timeText(createdMs, rng);
  const finalState: PartnerOrderState = rng.chance(0.87) ? 'COMPLETED' : 'FAILED';
  // Most orders settle in minutes; a few take hours (those are the ones a poll sees PENDING).
  const delay = (): number => (createdMs >= ctx.recentFrom && rng.chance(0.08) ? rng.int(HOUR_MS, 18 * HOUR_MS) : rng.int(5_000, 900_000));
  const steps: StateStep<PartnerOrderState>[] = [{ state: 'PENDING', ...created }];
  let t = created.atMs;
  const next = (state: PartnerOrderState): void => {
    t = ctx.compressEnd !== undefined ? Math.min(t + rng.int(1, 2), ctx.compressEnd) : t + delay();
    const prev = steps[steps.length - 1]!;
    let step = timeText(Math.max(t, prev.atMs), rng);
    // Each state's text must sort strictly after the previous one (receivers order events by
    // it, to the nanosecond); a whole-second text could otherwise fall before a ms text.
    if (step.atKey <= prev.atKey) step = msText(prev.atMs + 1);
    t = step.atMs;
    steps.push({ state, ...step });
  };
  if (finalState === 'COMPLETED') {
    next('WITHDRAWING');
    next('COMPLETED');
  } else next('FAILED');

  const country = rng.pick(COUNTRIES.filter((c) => c.isBuyAllowed));
  const paidToUs = orderType === 'BUY' && finalState === 'COMPLETED' && rng.chance(0.5);
  const ours = w.addresses[crypto.code]!;
  // Our XRP address carries a destination tag; the order shows it without, or (rarely) a tag on the order side.
  const target = paidToUs ? (ours.includes(':') ? (rng.chance(0.5) ? ours.split(':')[0]! : ours) : rng.chance(0.1) ? `${ours}:${rng.int(1, 99999)}` : ours) : externalAddress(rng, crypto.code);
  const txHash = crypto.code === 'ETH' || crypto.code === 'USDC' ? `0x${rng.hex(64)}` : rng.hex(64);
  const order: PartnerOrderRecord = {
    orderId: uuidFrom(rng),
    externalReference: `ref-${rng.hex(10)}`,
    orderType,
    paymentMethod,
    inputCurrency: input.code,
    inputAmount: inputText,
    outputCurrency: output.code,
    outputAmount: fix(outputAmount, output.precision),
    amountUsd: amountUsdText,
    ...fees,
    processingFeeUsd: input.code === 'USD' ? fees.processingFee : usdTwin(fees.processingFee, amountUsdText, inputText),
    partnerFeeUsd: input.code === 'USD' ? fees.partnerFee : usdTwin(fees.partnerFee, amountUsdText, inputText),
    networkFeeUsd: input.code === 'USD' ? fees.networkFee : usdTwin(fees.networkFee, amountUsdText, inputText),
    userId: uuidFrom(rng),
    userCountry: country.alpha2,
    targetWalletAddress: target,
    txHash,
    createdAt: created.at,
    createdAtMs: created.atMs,
    createdKey: created.atKey,
    timeline: steps,
    paidToUs,
  };
  if (country.alpha2 === 'US') order.userState = `US-${rng.pick(US_STATES.filter((s) => s.isBuyAllowed)).alpha2}`;
  if (rng.chance(0.3)) order.subPartnerId = `sub-${rng.int(1, 20)}`;
  let deposit: DepositRecord | undefined;
  if (paidToUs) {
    const completedAt = steps[steps.length - 1]!.atMs;
    // The exchange credits on the same confirmation the partner reports: at or just before COMPLETED.
    const ts = Math.max(created.atMs, completedAt - rng.int(0, 20_000));
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
  if (currency === 'BTC') return `bc1q${rng.hex(38)}`;
  if (currency === 'XRP') return `r${rng.hex(32)}`;
  return `0x${rng.hex(40)}`;
}
