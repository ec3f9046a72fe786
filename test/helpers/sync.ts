/** One source's sync as the tests drive it, through the sync stage's own syncSource: its figures, in its terms. */
import type { StageContext } from '../../src/stages/context.js';
import { syncSource, type SyncRequest } from '../../src/stages/sync.js';
import { exchangeSource, type ExchangeClient, type ExchangeFigures } from '../../src/sources/exchange/index.js';
import { partnerSource, type PartnerClient, type PartnerFigures } from '../../src/sources/partner/index.js';
import type { Period } from '../../src/domain/period.js';

export { SyncAbortedError } from '../../src/stages/sync.js';
export type { ExchangeFigures, PartnerFigures };

export interface ExchangeSyncOptions {
  backfill?: SyncRequest['backfill'];
  /** Injected client (not closed at the end); by default one is built from ctx.config. */
  client?: ExchangeClient;
  progress?: 'log' | 'off';
}

export type PartnerSyncOptions = Pick<SyncRequest, 'externalReferences' | 'walletsOnly' | 'relist' | 'walletHistory'>;

export async function syncExchange(ctx: StageContext, options: ExchangeSyncOptions = {}): Promise<ExchangeFigures> {
  const request: SyncRequest = { period: null, ...(options.backfill ? { backfill: options.backfill } : {}) };
  const result = await syncSource(ctx, exchangeSource, request, {
    ...(options.client ? { client: options.client } : {}),
    progressMode: options.progress,
  });
  return result.figures;
}

export async function syncPartner(
  ctx: StageContext,
  period: Period | null,
  options: PartnerSyncOptions = {},
  deps: { client?: PartnerClient } = {},
): Promise<PartnerFigures> {
  return (await syncSource(ctx, partnerSource, { period, ...options }, deps)).figures;
}
