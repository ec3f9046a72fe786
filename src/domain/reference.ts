/** Reference data the rules judge records against: partner currencies, exchange symbol rules and fee rates. */
import type { Decimal } from '../decimal/decimal.js';

export interface PartnerCurrency {
  code: string;
  type: string; // FIAT | CRYPTO
  precision: number;
  minBuyAmount: Decimal | null;
  maxBuyAmount: Decimal | null;
}

/** One fees snapshot: the rates in force from fetchedAt. */
export interface FeeRates {
  fetchedAt: Date;
  makerRate: Decimal;
  takerRate: Decimal;
}
export type FeeSchedule = FeeRates[];

export interface SymbolRules {
  symbol: string;
  baseCurrency: string | null;
  baseScale: number | null;
  counterCurrency: string | null;
  counterScale: number | null;
  priceIncrement: Decimal | null;
  lotSize: Decimal | null;
  minOrderSize: Decimal | null;
  /** 0 or null: no limit. */
  maxOrderSize: Decimal | null;
}
