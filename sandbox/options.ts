/** Simulator: every option that shapes the world and the contracts' open points, with defaults. */
import type { FaultProfile } from './faults.js';

export type Bound = 'inclusive' | 'exclusive';

/**
 * Everything that shapes the simulated world and the open points of the contracts. Each
 * contract gap (a bound, an order) has an option per plausible behaviour so clients can be
 * tested against all of them; the defaults are the documented or most common reading.
 */
export interface SandboxOptions {
  /** PRNG seed: same seed and same `now` day give the same data. */
  seed: number;
  /** Full UTC days of history before today's day (today up to `now` is generated too). */
  days: number;
  /** Partner orders per day. */
  ordersPerDay: number;
  /** Mean fills per filled exchange order (1..2n-1, uniform). */
  fillsPerOrder: number;
  exchangeOrdersPerDay: number;
  /** Exchange deposits per day besides those of partner orders paid to our wallets. */
  depositsPerDay: number;
  /** Share of the COMPLETED BUY partner orders paid to our exchange deposit addresses (each brings its deposit). */
  paidToUsShare: number;
  withdrawalsPerDay: number;
  /** Plant one case of every rule code (see expectedBreaks()). */
  discrepancies: boolean;
  /**
   * State changes between balance snapshots, as a real exchange makes them: at sandbox start a
   * deposit UNCONFIRMED (not credited) and a withdrawal PENDING (debited amount + fee) are listed;
   * on the second GET /accounts, before the balances are computed, the deposit turns COMPLETED
   * (credited) and the withdrawal REFUNDED (credited back). So the first /accounts snapshot sees
   * them UNCONFIRMED / PENDING and the second sees their final states, each balance moving when
   * the state changes, not at the record's timestamp. No break is expected from them.
   */
  stateChanges: boolean;
  /**
   * Plants the late events (late-events.ts): one held case per event on records `lateEventsAgeDays`
   * old (a fill not published yet, a deposit not listed yet, a partner order still PENDING, a
   * deposit UNCONFIRMED, the UNCONFIRMED deposit of a paid order, a withdrawal PENDING), each
   * changed when released (releaseLate, POST /_sandbox/late?event=), whatever its age by then.
   */
  lateEvents: boolean;
  /** Age in days (1 to `days`) of the records the late events are planted on. */
  lateEventsAgeDays: number;
  faults: 'none' | 'default' | FaultProfile;
  /** Keep trading as wall-clock time passes. */
  live: boolean;
  /** Live mode: how often the background tick runs (webhooks, new activity), ms. */
  liveTickMs: number;
  webhookUrl?: string;
  /** Order of a /fills page requested with fromExecId (without it: always newest first). */
  fillsOrder: 'newest-first' | 'oldest-first';
  /** Whether fromExecId / toExecId include the given execId. */
  execIdBound: Bound;
  /** Exchange `from` / `to` (epoch ms) on /orders, /trades, /fills, /deposits, /withdrawals. */
  exchangeFromBound: Bound;
  exchangeToBound: Bound;
  /** Among records of the same millisecond in a newest-first list: higher id first, or lower id first. */
  sameMsOrder: 'id-desc' | 'id-asc';
  /** A limit above the maximum: capped silently, or 400. */
  limitOverMax: 'cap' | 'error';
  /**
   * The largest page /orders and /trades really return: 100 as the contract says, or 1000 as
   * the operator's published spec allows (a larger `limit` is capped or refused per limitOverMax).
   */
  exchangeOrdersCap: number;
  /**
   * /deposits and /withdrawals take no limit and document no cap; with this set, an answer is
   * cut silently at this many records, keeping the newest (as a newest-first list would).
   */
  paymentsAnswerCap?: number;
  /**
   * Texts an attacker controls (formulas, a leading tab...), written into the free-text fields of records of the
   * last full day before `now`, one text per record (hostile-text.ts): what finance's spreadsheet must never run.
   */
  hostileText?: readonly string[];
  /**
   * Plants (besides `discrepancies`) a partner order whose COMPLETED webhook is never delivered and
   * whose last state change passes the 3-day webhook retry window this many ms after the sandbox's
   * `now` (negative: already past). It was created about a day before, so a period of the last
   * days does not contain it. Listed by expectedBreaks() with `requires: 'webhooks'` and `dueAt`.
   */
  webhookGapDueInMs?: number;
  /**
   * /fills ignores fromExecId and toExecId (an exchange that dropped or renamed the parameters):
   * every page is the newest `limit` fills. With more new fills than a page, a fills cursor cannot
   * advance although the API has newer records (S_COVERAGE exchange:cursor:fills.execId).
   */
  fillsIgnoreExecIds?: boolean;
  /** Partner `to` date: exclusive (documented) or inclusive. */
  partnerToBound: Bound;
  /** Wire names of the partner parameters the contract does not name. */
  partnerParams: { offset: string; from: string; to: string; outputCurrency: string };
  /** GET /currencies wraps the array in one extra array level, as the contract's sample does. */
  currenciesWrapped: boolean;
  /** Status of a missing or invalid key (the contracts do not say). */
  authFailureStatus: 401 | 403;
  /** Partner fiat and crypto currencies, and exchange symbols, from the catalog. */
  fiatCurrencies: string[];
  cryptoCurrencies: string[];
  symbols: string[];
  /** The partner fee rate every normal order satisfies exactly (suggested `partner.feeRate`). */
  partnerFeeRate: string;
  /** Anchor of the history; default: the wall clock at start. */
  now?: Date;
  partnerPublicKey: string;
  partnerPrivateKey: string;
  exchangeToken: string;
}

export const DEFAULT_OPTIONS: SandboxOptions = {
  seed: 1,
  days: 7,
  ordersPerDay: 40,
  fillsPerOrder: 3,
  exchangeOrdersPerDay: 40,
  depositsPerDay: 4,
  paidToUsShare: 0.5,
  withdrawalsPerDay: 3,
  discrepancies: false,
  stateChanges: false,
  lateEvents: false,
  lateEventsAgeDays: 2,
  faults: 'none',
  live: false,
  liveTickMs: 1000,
  fillsOrder: 'newest-first',
  execIdBound: 'inclusive',
  exchangeFromBound: 'inclusive',
  exchangeToBound: 'exclusive',
  sameMsOrder: 'id-desc',
  limitOverMax: 'cap',
  exchangeOrdersCap: 100,
  partnerToBound: 'exclusive',
  partnerParams: { offset: 'offset', from: 'from', to: 'to', outputCurrency: 'outputCurrency' },
  currenciesWrapped: true,
  authFailureStatus: 401,
  fiatCurrencies: ['EUR', 'USD', 'GBP'],
  cryptoCurrencies: ['BTC', 'ETH', 'USDC', 'XRP'],
  symbols: ['BTC-USD', 'ETH-USD', 'ETH-BTC', 'USDC-USD', 'BTC-EUR'],
  partnerFeeRate: '0.01',
  partnerPublicKey: 'pk_sandbox_public_0001',
  partnerPrivateKey: 'sk_sandbox_private_0001',
  exchangeToken: 'xt_sandbox_token_0001',
};
