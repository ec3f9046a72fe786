/** Partner-to-exchange rules: a paid partner order matched to its exchange deposit (X_DEPOSIT_MISSING,
 * X_DEPOSIT_AMOUNT).
 */
import type { Verdict } from './types.js';
import type { Deposit, PartnerOrder } from '../domain/index.js';
import { compareTimestampText, diff, stripTag } from './util.js';

/** Our deposit addresses: partner.wallets and every stored deposit address, without `:tag`. */
export function ourAddresses(wallets: readonly string[], depositAddresses: Iterable<string>): Set<string> {
  const set = new Set<string>();
  for (const a of wallets) set.add(stripTag(a));
  for (const a of depositAddresses) set.add(stripTag(a));
  return set;
}

/** The order is a COMPLETED BUY paid on-chain to one of our deposit addresses. */
export function isPaidToUs(o: PartnerOrder, ours: ReadonlySet<string>): boolean {
  return (
    o.orderType === 'BUY' &&
    o.orderState === 'COMPLETED' &&
    !!o.transactionHash?.trim() &&
    !!o.targetWalletAddress &&
    ours.has(stripTag(o.targetWalletAddress))
  );
}

/**
 * Picks the deposit for an order among those with its transaction hash: one that agrees on
 * currency and amount when there is one (a hash may credit several deposits), else the first.
 * A REJECTED deposit was never credited and settles nothing (an UNCONFIRMED one still may: E_STALE watches it).
 */
export function matchDeposit(o: PartnerOrder, candidates: readonly Deposit[]): Deposit | undefined {
  const same = candidates.filter((d) => d.txHash === o.transactionHash && d.state !== 'REJECTED');
  return (
    same.find((d) => d.currency === o.outputCurrency && o.outputAmount !== null && d.amount.eq(o.outputAmount)) ??
    [...same].sort((a, b) => (a.depositId < b.depositId ? -1 : a.depositId > b.depositId ? 1 : 0))[0]
  );
}

/** Earliest created first (nanosecond text), then orderId: the order in which orders claim a shared hash's deposits. */
export function compareClaimants(a: PartnerOrder, b: PartnerOrder): number {
  return (
    compareTimestampText(a.createdAtText, b.createdAtText) ||
    (a.orderId < b.orderId ? -1 : a.orderId > b.orderId ? 1 : 0)
  );
}

/**
 * One deposit settles at most one order: the orders paid to us that carry one transaction hash
 * (every stored one, whatever its period, so the outcome does not depend on the period asked) take
 * the hash's deposits in claim order (compareClaimants), each by matchDeposit among those still
 * unclaimed. Returns the deposit of each claimant that got one.
 */
export function settleDeposits(
  claimants: readonly PartnerOrder[],
  deposits: readonly Deposit[],
  ours: ReadonlySet<string>,
): Map<string, Deposit> {
  const settled = new Map<string, Deposit>();
  let left = deposits;
  for (const o of [...claimants].filter((x) => isPaidToUs(x, ours)).sort(compareClaimants)) {
    const d = matchDeposit(o, left);
    if (!d) continue;
    settled.set(o.orderId, d);
    left = left.filter((x) => x !== d);
  }
  return settled;
}

/**
 * The order is paid to us, no stored deposit settles it, and it completed after the exchange's deposits were last read
 * (`depositsThrough`, epoch ms; null: unknown): its deposit may be credited after that read, so X_DEPOSIT_MISSING
 * skips it (a break it has stays as it is) and a later run judges it (docs/rules.md X_DEPOSIT_MISSING).
 */
export function awaitsDeposit(
  o: PartnerOrder,
  ours: ReadonlySet<string>,
  deposit: Deposit | undefined,
  depositsThrough: number | null | undefined,
): boolean {
  return (
    !deposit &&
    depositsThrough !== null &&
    depositsThrough !== undefined &&
    isPaidToUs(o, ours) &&
    o.orderStateUpdatedAt.getTime() > depositsThrough
  );
}

export function checkDepositMissing(
  o: PartnerOrder,
  ours: ReadonlySet<string>,
  deposit: Deposit | undefined,
  depositsThrough: number | null = null,
): Verdict {
  if (!isPaidToUs(o, ours)) return 'n/a';
  // In scope, not judgeable yet: counted as skipped, and a break it has is left as it is.
  if (awaitsDeposit(o, ours, deposit, depositsThrough)) return 'skipped';
  if (deposit) return [];
  return [
    {
      check: `no exchange deposit with txHash ${o.transactionHash}`,
      expected: o.outputAmount,
      actual: null,
      difference: null,
      currency: o.outputCurrency,
      facts: { txHash: o.transactionHash ?? '' },
    },
  ];
}

export function checkDepositAmount(o: PartnerOrder, ours: ReadonlySet<string>, deposit: Deposit | undefined): Verdict {
  if (!isPaidToUs(o, ours) || !deposit) return 'n/a';
  const failures = [];
  if (o.outputAmount === null || !deposit.amount.eq(o.outputAmount))
    failures.push({
      check: `deposit ${deposit.depositId} amount != outputAmount`,
      expected: o.outputAmount,
      actual: deposit.amount,
      difference: diff(deposit.amount, o.outputAmount),
      currency: o.outputCurrency,
    });
  if (deposit.currency !== o.outputCurrency)
    failures.push({
      check: `deposit ${deposit.depositId} currency ${deposit.currency} != outputCurrency ${o.outputCurrency}`,
      expected: o.outputCurrency,
      actual: deposit.currency,
      difference: null,
      currency: o.outputCurrency,
    });
  return failures;
}
