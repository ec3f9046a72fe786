/** Partner-to-exchange rules: a paid partner order matched to its exchange deposit (X_DEPOSIT_MISSING, X_DEPOSIT_AMOUNT). */
import { decimalText } from '../decimal/decimal.js';
import type { Verdict } from './tally.js';
import type { Deposit, PartnerOrder } from '../domain/index.js';
import { diff, stripTag, text } from './util.js';

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
 */
export function matchDeposit(o: PartnerOrder, candidates: readonly Deposit[]): Deposit | undefined {
  const same = candidates.filter((d) => d.txHash === o.transactionHash);
  return (
    same.find((d) => d.currency === o.outputCurrency && o.outputAmount !== null && d.amount.eq(o.outputAmount)) ??
    [...same].sort((a, b) => (a.depositId < b.depositId ? -1 : a.depositId > b.depositId ? 1 : 0))[0]
  );
}

export function checkDepositMissing(o: PartnerOrder, ours: ReadonlySet<string>, deposit: Deposit | undefined): Verdict {
  if (!isPaidToUs(o, ours)) return 'n/a';
  if (deposit) return [];
  return [{ check: `no exchange deposit with txHash ${o.transactionHash}`, expected: text(o.outputAmount), actual: null, difference: null, currency: o.outputCurrency }];
}

export function checkDepositAmount(o: PartnerOrder, ours: ReadonlySet<string>, deposit: Deposit | undefined): Verdict {
  if (!isPaidToUs(o, ours) || !deposit) return 'n/a';
  const failures = [];
  if (o.outputAmount === null || !deposit.amount.eq(o.outputAmount))
    failures.push({ check: `deposit ${deposit.depositId} amount != outputAmount`, expected: text(o.outputAmount), actual: decimalText(deposit.amount), difference: diff(deposit.amount, o.outputAmount), currency: o.outputCurrency });
  if (deposit.currency !== o.outputCurrency)
    failures.push({ check: `deposit ${deposit.depositId} currency ${deposit.currency} != outputCurrency ${o.outputCurrency}`, expected: o.outputCurrency, actual: deposit.currency, difference: null, currency: o.outputCurrency });
  return failures;
}
