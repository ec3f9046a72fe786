/** Simulator: fixed reference data (currencies, symbols, USD rates, fee rates). */
import { Decimal } from '../src/decimal/decimal.js';

/**
 * The fixed reference data the generated world is built from: partner currencies, exchange
 * symbols, USD rates and fee rates. Options select subsets by code; the values never change
 * during a run, so every derived amount can be recomputed exactly by a test.
 */

export interface PartnerCurrencyDef {
  code: string;
  name: string;
  type: 'FIAT' | 'CRYPTO';
  precision: number;
  minBuyAmount?: string;
  maxBuyAmount?: string;
  network?: string;
  supportsDestinationTag?: boolean;
  isSupportedInUS?: boolean;
  allowedUSStates?: string[];
}

export const PARTNER_CURRENCIES: readonly PartnerCurrencyDef[] = [
  { code: 'EUR', name: 'Euro', type: 'FIAT', precision: 2, minBuyAmount: '20', maxBuyAmount: '10000' },
  { code: 'USD', name: 'US Dollar', type: 'FIAT', precision: 2, minBuyAmount: '20', maxBuyAmount: '10000' },
  { code: 'GBP', name: 'Pound Sterling', type: 'FIAT', precision: 2, minBuyAmount: '15', maxBuyAmount: '8000' },
  {
    code: 'BTC',
    name: 'Bitcoin',
    type: 'CRYPTO',
    precision: 8,
    network: 'bitcoin',
    supportsDestinationTag: false,
    isSupportedInUS: true,
    allowedUSStates: ['CA', 'TX', 'FL'],
  },
  {
    code: 'ETH',
    name: 'Ether',
    type: 'CRYPTO',
    precision: 18,
    network: 'ethereum',
    supportsDestinationTag: false,
    isSupportedInUS: true,
    allowedUSStates: ['CA', 'TX'],
  },
  {
    code: 'USDC',
    name: 'USD Coin',
    type: 'CRYPTO',
    precision: 6,
    network: 'ethereum',
    supportsDestinationTag: false,
    isSupportedInUS: true,
    allowedUSStates: ['CA'],
  },
  {
    code: 'XRP',
    name: 'XRP',
    type: 'CRYPTO',
    precision: 6,
    network: 'ripple',
    supportsDestinationTag: true,
    isSupportedInUS: false,
    allowedUSStates: [],
  },
];

/** USD value of one unit; the balance `rate` and the partner's amountUsd derive from these. */
export const USD_RATES: Readonly<Record<string, string>> = {
  USD: '1',
  EUR: '1.0825',
  GBP: '1.2710',
  BTC: '91250.00',
  ETH: '3120.55',
  USDC: '0.9998',
  XRP: '0.5521',
};

/** Exchange-side scale of each currency (decimals the exchange keeps). */
export const EXCHANGE_SCALES: Readonly<Record<string, number>> = {
  USD: 2,
  EUR: 2,
  GBP: 2,
  BTC: 8,
  ETH: 8,
  USDC: 6,
  XRP: 6,
};

export interface SymbolDef {
  symbol: string;
  base: string;
  counter: string;
  baseScale: number;
  counterScale: number;
  priceInc: [number, number];
  lot: [number, number];
  minSize: [number, number];
  maxSize: [number, number];
  id: number;
}

export const SYMBOLS: readonly SymbolDef[] = [
  {
    symbol: 'BTC-USD',
    base: 'BTC',
    counter: 'USD',
    baseScale: 8,
    counterScale: 2,
    priceInc: [5, 1],
    lot: [1, 8],
    minSize: [1, 4],
    maxSize: [100, 0],
    id: 1,
  },
  {
    symbol: 'ETH-USD',
    base: 'ETH',
    counter: 'USD',
    baseScale: 8,
    counterScale: 2,
    priceInc: [1, 2],
    lot: [1, 8],
    minSize: [1, 3],
    maxSize: [5000, 0],
    id: 2,
  },
  {
    symbol: 'ETH-BTC',
    base: 'ETH',
    counter: 'BTC',
    baseScale: 8,
    counterScale: 8,
    priceInc: [1, 6],
    lot: [1, 4],
    minSize: [1, 3],
    maxSize: [0, 0],
    id: 3,
  },
  {
    symbol: 'USDC-USD',
    base: 'USDC',
    counter: 'USD',
    baseScale: 6,
    counterScale: 2,
    priceInc: [1, 4],
    lot: [1, 2],
    minSize: [1, 0],
    maxSize: [1000000, 0],
    id: 4,
  },
  {
    symbol: 'BTC-EUR',
    base: 'BTC',
    counter: 'EUR',
    baseScale: 8,
    counterScale: 2,
    priceInc: [1, 0],
    lot: [1, 8],
    minSize: [1, 4],
    maxSize: [50, 0],
    id: 5,
  },
];

export const MAKER_RATE = '0.0014';
export const TAKER_RATE = '0.0024';

/** Opening balances at the start of the history: large enough that trading never goes negative. */
export const OPENING_BALANCES: Readonly<Record<string, string>> = {
  USD: '25000000.00',
  EUR: '8000000.00',
  GBP: '500000.00',
  BTC: '400.00000000',
  ETH: '9000.00000000',
  USDC: '12000000.000000',
  XRP: '3000000.000000',
};

export const WITHDRAWAL_FEES: Readonly<Record<string, string>> = {
  USD: '25.00',
  EUR: '15.00',
  GBP: '15.00',
  BTC: '0.00020000',
  ETH: '0.00300000',
  USDC: '5.000000',
  XRP: '0.250000',
};

export function unit(pair: [number, number]): Decimal {
  return new Decimal(pair[0]).times(new Decimal(10).pow(-pair[1]));
}

/** Mid price of a symbol in its counter currency, from the USD rates, on the increment. */
export function midPrice(def: SymbolDef): Decimal {
  const raw = new Decimal(USD_RATES[def.base]!).div(USD_RATES[def.counter]!);
  return raw.toNearest(unit(def.priceInc), Decimal.ROUND_HALF_UP);
}

export const COUNTRIES = [
  { alpha2: 'DE', alpha3: 'DEU', isBuyAllowed: true, name: 'Germany' },
  { alpha2: 'FR', alpha3: 'FRA', isBuyAllowed: true, name: 'France' },
  { alpha2: 'GB', alpha3: 'GBR', isBuyAllowed: true, name: 'United Kingdom' },
  { alpha2: 'US', alpha3: 'USA', isBuyAllowed: true, name: 'United States of America' },
  { alpha2: 'NL', alpha3: 'NLD', isBuyAllowed: true, name: 'Netherlands' },
  { alpha2: 'KP', alpha3: 'PRK', isBuyAllowed: false, name: "Korea (Democratic People's Republic of)" },
  { alpha2: 'IR', alpha3: 'IRN', isBuyAllowed: false, name: 'Iran (Islamic Republic of)' },
];

export const US_STATES = [
  { alpha2: 'CA', isBuyAllowed: true, name: 'California' },
  { alpha2: 'TX', isBuyAllowed: true, name: 'Texas' },
  { alpha2: 'FL', isBuyAllowed: true, name: 'Florida' },
  { alpha2: 'NY', isBuyAllowed: false, name: 'New York' },
];
