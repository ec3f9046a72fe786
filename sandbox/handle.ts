/** Simulator: the handle every entry point returns (a Sandbox) and its read access to the generated records. */
import type { PartnerCurrencyDef, SymbolDef } from './catalog.js';
import type { LateEvent, LateRelease } from './late-events.js';
import type {
  BalanceView,
  DepositView,
  ExchangeOrderRecord,
  ExpectedBreak,
  FillRecord,
  PartnerOrderRecord,
  PartnerOrderView,
  WhitelistEntry,
  WithdrawalView,
} from './model.js';
import type { SandboxOptions } from './options.js';
import type { WebhookDelivery } from './webhooks.js';

/** Read access to the generated records as the APIs serve them right now (canonical decimal strings). */
export interface SandboxData {
  /** Partner orders visible now, in their current state, oldest first. */
  partnerOrders(): PartnerOrderView[];
  /** The records behind them, with their whole timelines (state changes = webhook events). */
  partnerOrderRecords(): readonly PartnerOrderRecord[];
  /** Exchange orders, oldest first, excluding the planted orphan's hidden order. */
  exchangeOrders(): ExchangeOrderRecord[];
  /** Every fill, oldest first (execId ascending); materialized on call (cached until fills change). */
  fills(): readonly FillRecord[];
  /** Number of fills, without materializing them (scale runs). */
  fillCount(): number;
  /** Record counts without materializing anything. */
  counts(): { fills: number; exchangeOrders: number; partnerOrders: number; deposits: number; withdrawals: number };
  /** Deposits listed by /deposits, oldest first. */
  deposits(): DepositView[];
  withdrawals(): WithdrawalView[];
  /** What /accounts returns now (does not count as a snapshot for the planted E_BALANCE_ROLL). */
  balances(): BalanceView[];
  /** Opening balances at the start of the history: balance = opening + every flow up to now. */
  openingBalances(): Record<string, string>;
  whitelist(): WhitelistEntry[];
  symbols(): readonly SymbolDef[];
  currencies(): readonly PartnerCurrencyDef[];
  fees(): { makerRate: string; takerRate: string };
  /** Our deposit address per crypto currency (XRP with its destination tag after a colon). */
  depositAddresses(): Record<string, string>;
  /** The sandbox clock (epoch ms): records with a later time are not served yet. */
  clock(): number;
}

export interface Sandbox {
  /** http://HOST:PORT */
  url: string;
  /** PARTNER_API_URL, PARTNER_PUBLIC_KEY, PARTNER_PRIVATE_KEY, EXCHANGE_API_URL, EXCHANGE_API_TOKEN. */
  env: Record<string, string>;
  options: Readonly<SandboxOptions>;
  /** The rate every normal order satisfies exactly: use it as `partner.feeRate`. */
  partnerFeeRate: string;
  /** Planted discrepancies (and S_QUARANTINE of the malformed record with faults), as [{code, key}]. */
  expectedBreaks(): ExpectedBreak[];
  /** Live step: `ms` worth of activity, stamped up to now (also POST /_sandbox/advance?ms=). */
  advance(ms: number): void;
  data: SandboxData;
  /** Changes a run-time option (bounds, orders, faults, ...); generation options have no effect after start. */
  setOption<K extends keyof SandboxOptions>(name: K, value: SandboxOptions[K]): void;
  /**
   * Adds partner orders created now (or at `at`), e.g. "orders arriving during the scan". They
   * settle within 3 ms of creation (visible once the clock passes: live mode) and are never paid
   * to our wallets, so they change no exchange record.
   */
  addPartnerOrders(count: number, at?: Date): PartnerOrderView[];
  /** Called after each partner GET /orders list page is built (before it is sent). Returns an unsubscribe. */
  onPartnerOrdersPage(cb: (info: { query: URLSearchParams; count: number; page: number }) => void): () => void;
  /** Called for each API request before it is served. Returns an unsubscribe. */
  onRequest(
    cb: (info: { api: 'partner' | 'exchange'; method: string; path: string; query: URLSearchParams }) => void,
  ): () => void;
  /**
   * Fills the rest of a resting exchange order (OPEN / PART_FILLED) now, at its limit price: an
   * old order that fills later (also POST /_sandbox/fill?exOrdId=). Returns the new fill's execId.
   */
  fillOrder(exOrdId: string): string;
  /**
   * Releases a late event planted by the `lateEvents` option (also POST /_sandbox/late?event=): the
   * past changes now on a record `lateEventsAgeDays` old. Returns what it changed and the breaks it
   * opens and resolves (expectedBreaks() follows), or undefined when it was not planted or already released.
   */
  releaseLate(event: LateEvent): LateRelease | undefined;
  /**
   * Moves the clock `ms` ahead and generates that span's activity at the configured daily volumes,
   * stamped across it (also POST /_sandbox/elapse?ms=): a night passing. In live mode the clock
   * keeps following the wall clock from the new point on.
   */
  elapse(ms: number): void;
  /** Corrects the planted case(s) of a code so the next reconcile resolves it (also POST /_sandbox/fix?code=). */
  fixDiscrepancy(code: string): void;
  /** Webhook deliveries attempted so far (when webhookUrl is set). */
  webhookDeliveries(): readonly WebhookDelivery[];
  /** Resolves when every due webhook event has been acknowledged (or given up). */
  webhooksIdle(): Promise<void>;
  close(): Promise<void>;
}
