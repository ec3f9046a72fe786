/** Partner sync step: the orders paid to our wallets, a wallet's whole history once, then the days this sync listed. */
import { getCursor, setCursor } from '../../store/sync/cursors.js';
import { listExchangeDepositAddresses } from '../../store/sync/partner-orders.js';
import { consecutivePeriods } from './plan.js';
import { walletWithoutTag } from './transform.js';
import { SOURCE, type PartnerSync } from './sync-common.js';
import { readListing } from './sync-listing.js';
import { walletHistoryCursor } from './streams.js';

/**
 * Our wallets: configured addresses plus every address seen on exchange deposits. The API matches
 * walletAddress exactly while an order may show a tagged address (XRP "addr:tag") with or without
 * its tag, so both forms are listed.
 */
async function ourWallets(env: PartnerSync): Promise<string[]> {
  const deposits = await listExchangeDepositAddresses(env.db, env.account);
  const all = [...env.config.partner.wallets, ...deposits].flatMap((a) => [a, walletWithoutTag(a)]);
  return [...new Set(all.map((a) => a.trim()).filter(Boolean))].sort();
}

/**
 * Orders paid to our wallets (docs/operations.md "What a sync asks the APIs"). A wallet's whole history is read once: the
 * first time the wallet is synced (a cursor records it once the listing is complete), or when
 * asked (--wallet-history, walletsOnly). After that each wallet is listed with the date filters
 * of the days this sync listed, one listing per run of consecutive days: a request or so per
 * wallet, where the whole history would grow every night. Days skipped as already read
 * completely are not listed again for wallets either.
 */
export async function syncWallets(env: PartnerSync, plan: { wholeHistory: boolean; days: string[] }): Promise<void> {
  const { params } = env.config.partner;
  const bounded = consecutivePeriods(plan.days);
  for (const wallet of await ourWallets(env)) {
    const cursor = walletHistoryCursor(wallet);
    // The list limit applies to wallet listings too, so they are paged like the days.
    if (plan.wholeHistory || (await getCursor(env.db, env.account, SOURCE, cursor)) === null) {
      env.progress.setStage(`wallet ${wallet}`);
      const listing = await readListing(env, { walletAddress: wallet }, `orders of wallet ${wallet}`);
      env.result.wallets++;
      env.result.walletHistories++;
      // Every page is committed as it arrives: the whole history is stored once the listing ended normally.
      if (listing.complete) await setCursor(env.db, env.account, SOURCE, cursor, env.now.toISOString());
      continue;
    }
    for (const p of bounded) {
      env.progress.setStage(`wallet ${wallet} ${p.from}..${p.to}`);
      await readListing(
        env,
        { walletAddress: wallet, [params.from]: p.from, [params.to]: p.to },
        `orders of wallet ${wallet} from ${p.from} to ${p.to}`,
      );
      env.result.wallets++;
    }
  }
}
