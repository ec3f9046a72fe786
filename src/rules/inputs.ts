/** What every rule may read besides its records: the run's configuration and the reference data stored for it. */
import type { Decimal } from '../decimal/decimal.js';
import type { FeeSchedule, PartnerCurrency, SymbolRules } from '../domain/index.js';

/** Config as the pure rules want it (src/stages/reconcile.ts engineConfig builds it from the zod defaults). */
export interface EngineConfig {
  now: Date;
  usdTolerance: Decimal;
  partnerFeeRate: Decimal | null;
  webhooksEnabled: boolean;
  staleAfterHours: { partnerOrder: number; deposit: number; withdrawal: number };
  feeCurrency: 'counter' | 'base';
  exchangeFeeTolerance: Decimal | null;
  balanceTolerance: Decimal;
  balanceLocalTolerance: Decimal;
}

/** Reference data available to this run; null: no snapshot stored. */
export interface ReferenceData {
  currencies: ReadonlyMap<string, PartnerCurrency> | null;
  symbols: ReadonlyMap<string, SymbolRules> | null;
  fees: FeeSchedule | null;
  whitelist: ReadonlySet<string> | null;
  /** Balance snapshots of exchange.account, oldest first (all of them: used for counting). */
  balanceSnapshotCount: number;
  /**
   * Epoch ms up to which the exchange's deposits are stored (the deposits listing's cursor): an order paid to us that
   * completed later may be credited after that read, so X_DEPOSIT_MISSING waits for a later run. Absent or null:
   * unknown, every order is judged.
   */
  depositsThrough?: number | null;
}

/** The two together: what a rule's requirements and checks read. */
export interface RuleInputs {
  cfg: EngineConfig;
  ref: ReferenceData;
}

/**
 * An input a rule needs: the reason it is "not checked" when the input is missing, else null. The rule catalog's
 * `requires` lists them; the engine asks them all before any record is read.
 */
export type Requirement = (x: RuleInputs) => string | null;

const need =
  (ok: (x: RuleInputs) => boolean, reason: string): Requirement =>
  (x) =>
    ok(x) ? null : reason;

/** The requirements rules share. */
export const needs = {
  partnerFeeRate: need((x) => x.cfg.partnerFeeRate !== null, 'partner.feeRate not configured'),
  webhooks: need((x) => x.cfg.webhooksEnabled, 'webhooks not configured'),
  currencies: need((x) => x.ref.currencies !== null, 'no partner currencies snapshot'),
  symbols: need((x) => x.ref.symbols !== null, 'no exchange symbols snapshot'),
  fees: need((x) => (x.ref.fees?.length ?? 0) > 0, 'no exchange fees snapshot'),
  whitelist: need((x) => x.ref.whitelist !== null, 'no exchange whitelist snapshot'),
  balanceSnapshot: need((x) => x.ref.balanceSnapshotCount > 0, 'no balance snapshot'),
  /** The first snapshot only opens the roll-forward's series. */
  snapshotPair: ((x) =>
    x.ref.balanceSnapshotCount >= 2
      ? null
      : `${x.ref.balanceSnapshotCount === 0 ? 'no balance snapshot' : 'only one balance snapshot'}: the first snapshot only opens the series`) as Requirement,
} as const;
