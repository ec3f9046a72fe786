/** The project's one Decimal configuration and its conversions. */
import { Decimal as DecimalJs } from 'decimal.js';
import { isLosslessNumber, type LosslessNumber } from 'lossless-json';

/**
 * The one Decimal configuration of the project. decimal.js defaults to 20 significant
 * digits, which silently rounds an 8-decimal quantity times an 8-decimal price and any
 * 18-decimal ETH amount; 60 digits covers every product and quotient we form.
 * toExpNeg/toExpPos keep toString() in plain notation so strings can go straight to
 * Postgres `numeric`, to JSON output and to the report without an exponent.
 */
export const Decimal = DecimalJs.clone({
  precision: 60,
  rounding: DecimalJs.ROUND_HALF_UP,
  toExpNeg: -1_000_000,
  toExpPos: 1_000_000,
});
export type Decimal = InstanceType<typeof Decimal>;

const DECIMAL_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

export class InvalidDecimalError extends Error {
  readonly code = 'INVALID_DECIMAL';
  constructor(readonly value: unknown) {
    super(`not a decimal number: ${describe(value)}`);
    this.name = 'InvalidDecimalError';
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  if (isLosslessNumber(value)) return (value as LosslessNumber).value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Converts a wire or database value to a Decimal without losing a digit: decimal strings,
 * exponent notation ("5.4044E-4"), lossless-json numbers, bigint, and Decimals of any clone.
 * A JS number is accepted only when it is an integer that is exactly representable;
 * fractional JS numbers have already lost digits, so they are rejected.
 */
export function toDecimal(value: unknown): Decimal {
  if (value instanceof Decimal) return value;
  if (isLosslessNumber(value)) return fromText((value as LosslessNumber).value, value);
  if (typeof value === 'string') return fromText(value.trim(), value);
  if (typeof value === 'bigint') return new Decimal(value.toString());
  if (typeof value === 'number' && Number.isSafeInteger(value)) return new Decimal(value);
  if (DecimalJs.isDecimal(value)) return new Decimal((value as DecimalJs).toString());
  throw new InvalidDecimalError(value);
}

function fromText(text: string, original: unknown): Decimal {
  if (!DECIMAL_TEXT.test(text)) throw new InvalidDecimalError(original);
  return new Decimal(text);
}

/** Like toDecimal, for optional fields: null and undefined stay null. */
export function toDecimalOrNull(value: unknown): Decimal | null {
  return value === null || value === undefined ? null : toDecimal(value);
}

export function isDecimalText(value: string): boolean {
  return DECIMAL_TEXT.test(value.trim());
}

/** Plain-notation text for Postgres parameters and JSON output. */
export function decimalText(value: Decimal): string {
  return value.toString();
}

/** Number of digits after the decimal point, ignoring trailing zeros. */
export function decimalPlaces(value: Decimal): number {
  return value.decimalPlaces();
}

export const ZERO = new Decimal(0);

/** Wide enough that the integer quotients of roundedQuotient are exact for any stored amount. */
const Exact = DecimalJs.clone({
  precision: 1_000,
  rounding: DecimalJs.ROUND_DOWN,
  toExpNeg: -1_000_000,
  toExpPos: 1_000_000,
});

/**
 * n / d rounded to `dp` decimals, half away from zero (ROUND_HALF_UP), exactly: floor(|n| 10^dp / |d| + 1/2) with the
 * quotient's sign, one rounding only, where n.div(d).toDecimalPlaces(dp) rounds twice (to 60 digits, then to dp).
 * store/report/orders-vs-fills-csv.ts writes the same figure in SQL. d must not be zero.
 */
export function roundedQuotient(n: Decimal, d: Decimal, dp: number): Decimal {
  const a = new Exact(n.toString()).abs().times(new Exact(`1e${dp}`));
  const b = new Exact(d.toString()).abs();
  const k = a.times(2).plus(b).divToInt(b.times(2));
  if (k.isZero()) return new Decimal(0);
  return new Decimal(`${n.isNeg() !== d.isNeg() ? '-' : ''}${k.toFixed()}e-${dp}`);
}
