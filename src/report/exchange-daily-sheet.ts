/** The Exchange daily sheet: per UTC day, the fills of each symbol, the deposits and withdrawals of each currency. */
import type { Decimal } from '../decimal/decimal.js';
import { amount, day, type Cell, type ColumnKind, type ColumnSpec, type Row, type SheetSpec } from './cells.js';
import type { ExchangeDailyAgg } from '../domain/index.js';
import type { Precision } from './precision.js';
import { notionalDp, SHEET } from './sheets.js';
import { feeCurrencyOf } from './summary.js';
import type { UsdRates } from './usd-rates.js';

/** The movements in the order a day lists them. */
const MOVEMENTS = ['Fills', 'Deposits', 'Withdrawals'] as const;
type Movement = (typeof MOVEMENTS)[number];

/**
 * One row of the sheet, whatever its movement: each amount with the currency it is in and the decimals it is shown
 * with, so the three kinds share one table.
 */
interface DailyLine {
  day: string;
  movement: Movement;
  /** The symbol of fills, the currency of deposits and withdrawals. */
  key: string;
  count: number;
  /** Records the amounts sum: every fill, COMPLETED deposits, withdrawals in a debit state. */
  settled: number;
  qty: Decimal;
  qtyCode: string;
  qtyDp: number;
  volume: Decimal | null;
  volumeCode: string | null;
  volumeDp: number;
  fees: Decimal | null;
  feeCode: string | null;
  feeDp: number;
  feesUsd: Decimal | null;
}

interface Column extends ColumnSpec {
  cell: (l: DailyLine) => Cell;
}

const column =
  (kind: ColumnKind) =>
  (header: string, cell: (l: DailyLine) => Cell): Column => ({ header, kind, cell });
const col = { text: column('text'), int: column('int'), amount: column('amount'), day: column('day') };

// Each header beside its cell, as sheets.ts's dataSheet has them; no "Open breaks": breaks name records, not days.
const COLUMNS: Column[] = [
  col.day('Day (UTC)', (l) => day(l.day)),
  col.text('Movement', (l) => l.movement),
  col.text('Symbol or currency', (l) => l.key),
  col.int('Count', (l) => l.count),
  col.int('Settled', (l) => l.settled),
  col.amount('Quantity', (l) => amount(l.qty, l.qtyDp)),
  col.text('Quantity currency', (l) => l.qtyCode),
  col.amount('Volume', (l) => amount(l.volume, l.volumeDp)),
  col.text('Volume currency', (l) => l.volumeCode),
  col.amount('Fees', (l) => amount(l.fees, l.feeDp)),
  col.text('Fee currency', (l) => l.feeCode),
  col.amount('Fees (USD)', (l) => amount(l.feesUsd, 2)),
];

export const exchangeDailySpec: SheetSpec = {
  name: SHEET.exchangeDaily,
  columns: COLUMNS.map(({ header, kind }) => ({ header, kind })),
};

/**
 * A day's deposits or withdrawals of one currency: every amount in that currency and its decimals; `fee` null for
 * deposits, which carry none.
 */
function transferLine(
  movement: 'Deposits' | 'Withdrawals',
  t: { day: string; currency: string; count: number; amount: Decimal },
  settled: number,
  fee: Decimal | null,
  precision: Precision,
  rates: UsdRates,
): DailyLine {
  const dp = precision.exchange(t.currency);
  return {
    day: t.day,
    movement,
    key: t.currency,
    count: t.count,
    settled,
    qty: t.amount,
    qtyCode: t.currency,
    qtyDp: dp,
    volume: null,
    volumeCode: null,
    volumeDp: dp,
    fees: fee,
    feeCode: fee === null ? null : t.currency,
    feeDp: dp,
    feesUsd: fee === null ? null : rates.usd(fee, t.currency),
  };
}

/**
 * The sheet's rows, by day, then movement (fills, deposits, withdrawals), then symbol or currency. Fill fees are in
 * the currency exchange.feeCurrency names (feeCurrencyOf), a withdrawal's in its own currency; a fee currency without
 * a USD rate gets no USD value.
 */
export function exchangeDailyRows(
  agg: ExchangeDailyAgg,
  precision: Precision,
  rates: UsdRates,
  feeCurrency: 'counter' | 'base',
): Row[] {
  const lines: DailyLine[] = [];
  for (const f of agg.fills) {
    const p = precision.symbol(f.symbol);
    const fee = feeCurrencyOf(f.symbol, precision, feeCurrency);
    lines.push({
      day: f.day,
      movement: 'Fills',
      key: f.symbol,
      count: f.fills,
      settled: f.fills,
      qty: f.qty,
      qtyCode: p.base ?? '?',
      qtyDp: p.qty,
      volume: f.notional,
      volumeCode: p.counterCode ?? '?',
      // a sum of qty x price has at most the decimals of both: shown whole, as the Fills sheet shows each notional
      volumeDp: notionalDp(p),
      fees: f.fees,
      feeCode: fee.code,
      feeDp: fee.dp,
      feesUsd: rates.usd(f.fees, fee.code),
    });
  }
  for (const d of agg.deposits) lines.push(transferLine('Deposits', d, d.completed, null, precision, rates));
  for (const w of agg.withdrawals) lines.push(transferLine('Withdrawals', w, w.debited, w.fee, precision, rates));
  // Code-point order, not the locale's: the same order on every machine.
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  lines.sort(
    (a, b) => cmp(a.day, b.day) || MOVEMENTS.indexOf(a.movement) - MOVEMENTS.indexOf(b.movement) || cmp(a.key, b.key),
  );
  return lines.map((l) => ({ cells: COLUMNS.map((c) => c.cell(l)) }));
}
