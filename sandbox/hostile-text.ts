/** Simulator: the hostileText option, texts an attacker controls planted in every free-text field of yesterday's records. */
import type { PartnerOrderRecord } from './model.js';
import { DAY_MS } from './time.js';
import type { World } from './world.js';

/**
 * Writes each text into the free-text fields of records of the last full UTC day before `now` (the period a default
 * run judges): text i goes to the i-th partner order of the day not paid to our wallets (externalReference,
 * subPartnerId, paymentMethod, userId, targetWalletAddress, the transaction hash it shows), the i-th exchange order
 * (clOrdId, text), the i-th deposit (address, txHash), the i-th withdrawal (beneficiary) and the i-th whitelist
 * entry (name). Amounts and states are left alone: a record moves no balance it did not move before, but its text
 * reaches every output (and the breaks a foreign wallet or beneficiary opens quote it).
 */
export function plantHostileText(w: World, texts: readonly string[]): void {
  const from = w.todayStart - DAY_MS;
  const inDay = (t: number) => t >= from && t < w.todayStart;
  const orders = w.partnerOrders.filter((o) => inDay(o.createdAtMs) && !o.paidToUs);
  const exOrders = w.exOrders.filter((o) => inDay(o.timestamp) && !o.hidden);
  const deposits = w.deposits.filter((d) => inDay(d.timestamp) && !d.hidden);
  const withdrawals = w.withdrawals.filter((x) => inDay(x.timestamp));
  texts.forEach((text, i) => {
    const order = orders[i];
    if (order) plantOrder(order, text);
    const exOrder = exOrders[i];
    if (exOrder) Object.assign(exOrder, { clOrdId: text, text });
    const deposit = deposits[i];
    if (deposit) Object.assign(deposit, { address: text, txHash: text });
    const withdrawal = withdrawals[i];
    if (withdrawal) withdrawal.beneficiary = text;
    const entry = w.whitelist[i];
    if (entry) entry.name = text;
  });
}

function plantOrder(o: PartnerOrderRecord, text: string): void {
  o.externalReference = text;
  o.subPartnerId = text;
  // The record types the generated methods; the wire carries any text.
  (o as { paymentMethod: string }).paymentMethod = text;
  o.userId = text;
  o.targetWalletAddress = text;
  o.txHash = text;
}
