/** Decimals shown per currency in the workbook. */
/**
 * Decimals shown per currency: the partner's currency precision for partner amounts, the
 * exchange symbol scales for exchange amounts, else 2 for fiat and 8 for crypto.
 */
export interface PrecisionData {
  /** Latest partner currencies snapshot: code -> { precision, type FIAT|CRYPTO }. */
  partner: Map<string, { precision: number; type: string }>;
  /** Latest exchange symbols snapshot. */
  symbols: Map<string, SymbolScales>;
}

export interface SymbolScales {
  base: string | null;
  counter: string | null;
  baseScale: number | null;
  counterScale: number | null;
  /** Decimals of the price increment, when known. */
  priceScale: number | null;
}

/** Common fiat codes, for the default when no snapshot names a currency. */
const FIAT = new Set([
  'USD',
  'EUR',
  'GBP',
  'CHF',
  'JPY',
  'CAD',
  'AUD',
  'NZD',
  'SEK',
  'NOK',
  'DKK',
  'PLN',
  'CZK',
  'HUF',
  'RON',
  'BGN',
  'TRY',
  'BRL',
  'MXN',
  'ARS',
  'CLP',
  'COP',
  'PEN',
  'ZAR',
  'NGN',
  'KES',
  'INR',
  'IDR',
  'PHP',
  'THB',
  'VND',
  'MYR',
  'SGD',
  'HKD',
  'KRW',
  'CNY',
  'TWD',
  'AED',
  'SAR',
  'ILS',
  'UAH',
  'GEL',
  'ISK',
]);
export const FIAT_DEFAULT = 2;
export const CRYPTO_DEFAULT = 8;

export class Precision {
  private readonly exchangeCurrency = new Map<string, number>();

  constructor(private readonly data: PrecisionData) {
    for (const s of data.symbols.values()) {
      if (s.base && s.baseScale !== null)
        this.exchangeCurrency.set(s.base, Math.max(this.exchangeCurrency.get(s.base) ?? 0, s.baseScale));
      if (s.counter && s.counterScale !== null)
        this.exchangeCurrency.set(s.counter, Math.max(this.exchangeCurrency.get(s.counter) ?? 0, s.counterScale));
    }
  }

  static empty(): Precision {
    return new Precision({ partner: new Map(), symbols: new Map() });
  }

  /** Partner amounts (inputAmount, fees, outputAmount) in `code`. */
  partner(code: string | null | undefined): number {
    if (!code) return CRYPTO_DEFAULT;
    const p = this.data.partner.get(code);
    if (p) return p.precision;
    return this.exchangeCurrency.get(code) ?? fallback(code);
  }

  /** Exchange amounts (balances, deposits, withdrawals) in `code`. */
  exchange(code: string | null | undefined): number {
    if (!code) return CRYPTO_DEFAULT;
    return this.exchangeCurrency.get(code) ?? this.data.partner.get(code)?.precision ?? fallback(code);
  }

  symbol(symbol: string | null | undefined): {
    qty: number;
    counter: number;
    price: number;
    base: string | null;
    counterCode: string | null;
  } {
    const s = symbol ? this.data.symbols.get(symbol) : undefined;
    const [baseGuess, counterGuess] = splitSymbol(symbol);
    const base = s?.base ?? baseGuess;
    const counterCode = s?.counter ?? counterGuess;
    const qty = s?.baseScale ?? this.exchange(base);
    const counter = s?.counterScale ?? this.exchange(counterCode);
    return { qty, counter, price: s?.priceScale ?? counter, base, counterCode };
  }
}

function fallback(code: string): number {
  return FIAT.has(code.toUpperCase()) ? FIAT_DEFAULT : CRYPTO_DEFAULT;
}

/** "BTCEUR" / "BTC-EUR" / "BTC_EUR" -> base, counter when the symbol data is missing. */
export function splitSymbol(symbol: string | null | undefined): [string | null, string | null] {
  if (!symbol) return [null, null];
  const sep = symbol.split(/[-_/]/);
  if (sep.length === 2) return [sep[0] ?? null, sep[1] ?? null];
  for (const counter of ['USDT', 'USDC', 'EUR', 'USD', 'GBP', 'CHF', 'BTC']) {
    if (symbol.length > counter.length && symbol.endsWith(counter)) return [symbol.slice(0, -counter.length), counter];
  }
  return [null, null];
}
