/** The data sheets: their names, column specs and the pure builders of their rows (partner, exchange, balances,
 * coverage); the Breaks sheet is in breaks-sheet.ts.
 */
import { Decimal, roundedQuotient } from '../decimal/decimal.js';
import {
  EXCEL_MAX_DECIMALS,
  amount,
  day,
  type Cell,
  type ColumnKind,
  type ColumnSpec,
  type Row,
  type SheetSpec,
} from './cells.js';
import type { Break, RecordKindName } from '../domain/index.js';
import type {
  BalanceRec,
  BalanceRollRec,
  CoverageRec,
  DepositRec,
  FillRec,
  OrderVsFillsRec,
  PartnerDailyRec,
  PartnerOrderRec,
  WithdrawalRec,
} from '../domain/index.js';
import type { Precision } from './precision.js';
import { csvField, csvText } from './csv.js';

/** A symbol's decimals (quantity, price, counter currency) and its currencies. */
type SymbolPrecision = ReturnType<Precision['symbol']>;

/** Sheet names, in workbook order. */
export const SHEET = {
  summary: 'Summary',
  breaks: 'Breaks',
  partnerDaily: 'Partner daily',
  exchangeDaily: 'Exchange daily',
  partnerOrders: 'Partner orders',
  ordersVsFills: 'Exchange orders vs fills',
  fills: 'Fills',
  balances: 'Balances',
  deposits: 'Deposits',
  withdrawals: 'Withdrawals',
  coverage: 'Coverage',
} as const;

/**
 * Open breaks by the record they name (its kind and key), so data sheets can highlight the rows that carry one.
 * Keys are per record kind (an orderId, an execId, a currency...), see docs/rules.md "Keys".
 */
export class BreakIndex {
  // By kind, then key: asked once per data row (a million fills), so no key string is built per row.
  private readonly byRecord = new Map<string, Map<string, string[]>>();
  constructor(breaks: Iterable<Pick<Break, 'code' | 'key' | 'entity'>>) {
    for (const b of breaks) {
      let keys = this.byRecord.get(b.entity);
      if (!keys) this.byRecord.set(b.entity, (keys = new Map()));
      keys.set(b.key, [...(keys.get(b.key) ?? []), b.code]);
    }
  }

  /** Codes of the open breaks on the record of this kind and key. */
  codes(entity: RecordKindName, key: string | null | undefined): readonly string[] {
    return (key && this.byRecord.get(entity)?.get(key)) || NO_CODES;
  }

  /** The Open breaks column of every record of this kind that has one, by key, as its CSV field text (withBreaks). */
  csvFields(entity: RecordKindName): Map<string, string> {
    const fields = new Map<string, string>();
    for (const [key, codes] of this.byRecord.get(entity) ?? []) fields.set(key, csvField(codes.join(', ')));
    return fields;
  }
}

const NO_CODES: readonly string[] = [];

function withBreaks(cells: Cell[], codes: readonly string[]): Row {
  cells.push(codes.length ? codes.join(', ') : null);
  return codes.length ? { cells, tone: 'break' } : { cells };
}

const BREAKS_COLUMN = { header: 'Open breaks', kind: 'text' } as const;

/**
 * A data sheet's column: its spec and the cell it shows of a row's record `r`, given what the row worked out once for
 * the record (`x`: its decimals, a computed figure).
 */
interface Column<T, X> extends ColumnSpec {
  cell: (r: T, x: X) => Cell;
}

function columnOf(kind: ColumnKind) {
  return <T, X>(header: string, cell: (r: T, x: X) => Cell): Column<T, X> => ({ header, kind, cell });
}

/** Column constructors, one per kind. */
const col = {
  text: columnOf('text'),
  id: columnOf('id'),
  int: columnOf('int'),
  amount: columnOf('amount'),
  datetime: columnOf('datetime'),
  day: columnOf('day'),
};

/** Columns several sheets show alike: the same header, kind and field. */
const SHARED = {
  time: col.datetime('Time (UTC)', (r: { timestamp: Date | null }) => r.timestamp),
  exOrdId: col.id('Exchange order id', (r: { exOrdId: string | null }) => r.exOrdId),
  symbol: col.text('Symbol', (r: { symbol: string | null }) => r.symbol),
  side: col.text('Side', (r: { side: string | null }) => r.side),
  currency: col.text('Currency', (r: { currency: string }) => r.currency),
  state: col.text('State', (r: { state: string | null }) => r.state),
};

/** A data sheet: its spec, and the cells of a record's row (the "Open breaks" cell is added by withBreaks). */
interface DataSheetDef<T, X> {
  spec: SheetSpec;
  cells: (r: T, x: X) => Cell[];
}

/** A data sheet defined by its columns, each header beside its cell; "Open breaks" last unless `breaks` is false. */
function dataSheet<T, X>(
  name: string,
  columns: Array<Column<T, X>>,
  options: { fitToWidth?: boolean; breaks?: boolean } = {},
): DataSheetDef<T, X> {
  const specs: ColumnSpec[] = columns.map(({ header, kind }) => ({ header, kind }));
  if (options.breaks !== false) specs.push(BREAKS_COLUMN);
  const spec: SheetSpec = { name, ...(options.fitToWidth ? { fitToWidth: true } : {}), columns: specs };
  // A plain loop into an array sized for the "Open breaks" cell too: run once per data row.
  const n = columns.length;
  return {
    spec,
    cells: (r, x) => {
      const cells = new Array<Cell>(n);
      for (let i = 0; i < n; i++) cells[i] = columns[i]!.cell(r, x);
      return cells;
    },
  };
}

// ------------------------------------------------------------------ Partner daily

/** x: the decimals of the day's input currency. */
const partnerDaily = dataSheet<PartnerDailyRec, number>(
  SHEET.partnerDaily,
  [
    col.day('Day (UTC)', (r) => day(r.day)),
    col.text('Input currency', (r) => r.currency),
    col.int('Orders', (r) => r.orders),
    col.int('Completed', (r) => r.completed),
    col.int('Pending', (r) => r.pending),
    col.int('Withdrawing', (r) => r.withdrawing),
    col.int('Failed', (r) => r.failed),
    col.amount('Volume (input)', (r, dp) => amount(r.volume, dp)),
    col.amount('Processing fee', (r, dp) => amount(r.processingFee, dp)),
    col.amount('Partner fee', (r, dp) => amount(r.partnerFee, dp)),
    col.amount('Network fee', (r, dp) => amount(r.networkFee, dp)),
    col.amount('Amount USD', (r) => amount(r.amountUsd, 2)),
    col.amount('Fees USD', (r) => amount(r.feesUsd, 2)),
  ],
  { breaks: false },
);

export const partnerDailySpec: SheetSpec = partnerDaily.spec;

export function partnerDailyRow(r: PartnerDailyRec, precision: Precision): Row {
  return { cells: partnerDaily.cells(r, precision.partner(r.currency)) };
}

// ------------------------------------------------------------------ Partner orders

/** x: the decimals of the input and of the output currency. */
const partnerOrders = dataSheet<PartnerOrderRec, { inDp: number; outDp: number }>(SHEET.partnerOrders, [
  col.datetime('Created (UTC)', (o) => o.createdAt),
  col.id('Order id', (o) => o.orderId),
  col.text('Type', (o) => o.orderType),
  col.text('State', (o) => o.orderState),
  col.datetime('State updated (UTC)', (o) => o.orderStateUpdatedAt),
  col.text('Input currency', (o) => o.inputCurrency),
  col.amount('Input amount', (o, x) => amount(o.inputAmount, x.inDp)),
  col.text('Output currency', (o) => o.outputCurrency),
  col.amount('Output amount', (o, x) => amount(o.outputAmount, x.outDp)),
  col.amount('Amount USD', (o) => amount(o.amountUsd, 2)),
  col.amount('Processing fee', (o, x) => amount(o.processingFee, x.inDp)),
  col.amount('Processing fee USD', (o) => amount(o.processingFeeUsd, 2)),
  col.amount('Partner fee', (o, x) => amount(o.partnerFee, x.inDp)),
  col.amount('Partner fee USD', (o) => amount(o.partnerFeeUsd, 2)),
  col.amount('Network fee', (o, x) => amount(o.networkFee, x.inDp)),
  col.amount('Network fee USD', (o) => amount(o.networkFeeUsd, 2)),
  col.text('Payment method', (o) => o.paymentMethod),
  col.id('Wallet', (o) => o.targetWalletAddress),
  col.id('Transaction hash', (o) => o.transactionHash),
  col.id('External reference', (o) => o.externalReference),
]);

export const partnerOrdersSpec: SheetSpec = partnerOrders.spec;

export function partnerOrderRow(o: PartnerOrderRec, precision: Precision, breaks: BreakIndex): Row {
  const dps = { inDp: precision.partner(o.inputCurrency), outDp: precision.partner(o.outputCurrency) };
  return withBreaks(partnerOrders.cells(o, dps), breaks.codes('partnerOrder', o.orderId));
}

// ------------------------------------------------------------------ Exchange orders vs fills

/** VWAP decimals beyond the price's own: a quotient is rounded, so keep enough to judge half an increment. */
const VWAP_EXTRA_DECIMALS = 4;

/** What a row of the sheet works out once: the symbol's decimals, the fills' VWAP and the differences. */
interface OrderVsFillsFigures {
  p: SymbolPrecision;
  vwapDp: number;
  vwap: Decimal | null;
  qtyDiff: Decimal | null;
  pxDiff: Decimal | null;
}

const ordersVsFills = dataSheet<OrderVsFillsRec, OrderVsFillsFigures>(SHEET.ordersVsFills, [
  SHARED.exOrdId,
  col.text('Order found', (o) => (o.found ? 'yes' : 'NO (orphan)')),
  SHARED.symbol,
  SHARED.side,
  col.text('Type', (o) => o.ordType),
  col.text('Status', (o) => o.status),
  col.int('Fills', (o) => o.fills),
  col.amount('cumQty', (o, x) => amount(o.cumQty, x.p.qty)),
  col.amount('Sum of fill qty', (o, x) => amount(o.fillQty, x.p.qty)),
  col.amount('Qty difference', (_o, x) => amount(x.qtyDiff, x.p.qty)),
  col.amount('avgPx', (o, x) => amount(o.avgPx, x.p.price)),
  col.amount('Fill VWAP', (_o, x) => amount(x.vwap, x.vwapDp)),
  col.amount('Price difference', (_o, x) => amount(x.pxDiff, x.vwapDp)),
  col.amount('Notional', (o, x) => amount(o.notional, notionalDp(x.p))),
  col.amount('Fees', (o, x) => amount(o.fees, x.p.counter)),
  col.datetime('First fill (UTC)', (o) => o.firstFill),
  col.datetime('Last fill (UTC)', (o) => o.lastFill),
]);

export const ordersVsFillsSpec: SheetSpec = ordersVsFills.spec;

/** The decimals a symbol's VWAP is rounded to (store/report/orders-vs-fills-csv.ts rounds it alike). */
export function vwapDecimals(precision: Precision, symbol: string | null): number {
  return precision.symbol(symbol).price + VWAP_EXTRA_DECIMALS;
}

export function orderVsFillsRow(o: OrderVsFillsRec, precision: Precision, breaks: BreakIndex): Row {
  const p = precision.symbol(o.symbol);
  // the VWAP and its difference to avgPx are shown with the decimals the VWAP is rounded to, on every row of the symbol
  const vwapDp = vwapDecimals(precision, o.symbol);
  const vwap = o.fillQty.isZero() ? null : roundedQuotient(o.notional, o.fillQty, vwapDp);
  const qtyDiff = o.cumQty ? o.fillQty.minus(o.cumQty) : null;
  const pxDiff = vwap && o.avgPx ? vwap.minus(o.avgPx) : null;
  return withBreaks(
    ordersVsFills.cells(o, { p, vwapDp, vwap, qtyDiff, pxDiff }),
    breaks.codes('exchangeOrder', o.exOrdId),
  );
}

/**
 * What the sheet works out per order, for the detail whose lines Postgres writes (store/report/orders-vs-fills-csv.ts): the
 * VWAP decimals of a symbol and the Open breaks field. Held to orderVsFillsRow's CSV byte for byte by
 * test/integration/orders-vs-fills-csv.test.ts.
 */
export function orderVsFillsCsvPrint(
  precision: Precision,
  breaks: BreakIndex,
): { vwapDp: (symbol: string | null) => number; breakFields: ReadonlyMap<string, string> } {
  return { vwapDp: (symbol) => vwapDecimals(precision, symbol), breakFields: breaks.csvFields('exchangeOrder') };
}

// ------------------------------------------------------------------ Fills

/**
 * Decimals of a notional (sum of qty x price): the quantity's scale plus the price's, so no notional needs its exact
 * text beside it.
 */
export function notionalDp(p: { qty: number; price: number }): number {
  return Math.min(p.qty + p.price, EXCEL_MAX_DECIMALS);
}

/** x: the symbol's decimals, and the fee's currency and decimals. */
const fills = dataSheet<FillRec, { p: SymbolPrecision; feeCode: string | null; feeDp: number }>(SHEET.fills, [
  SHARED.time,
  col.id('Exec id', (f) => f.execId),
  SHARED.exOrdId,
  col.id('Trade id', (f) => f.tradeId),
  SHARED.symbol,
  SHARED.side,
  col.amount('Price', (f, x) => amount(f.price, x.p.price)),
  col.amount('Qty', (f, x) => amount(f.qty, x.p.qty)),
  // qty x price has exactly the decimals of both: every notional of a symbol shown whole, at one format
  col.amount('Notional', (f, x) => amount(f.qty.times(f.price), notionalDp(x.p))),
  col.amount('Fee', (f, x) => amount(f.fee, x.feeDp)),
  col.text('Fee currency', (_f, x) => x.feeCode),
]);

export const fillsSpec: SheetSpec = fills.spec;

export function fillRow(f: FillRec, precision: Precision, breaks: BreakIndex, feeCurrency: 'counter' | 'base'): Row {
  const p = precision.symbol(f.symbol);
  const feeCode = feeCurrency === 'base' ? p.base : p.counterCode;
  const feeDp = feeCurrency === 'base' ? p.qty : p.counter;
  return withBreaks(fills.cells(f, { p, feeCode, feeDp }), breaks.codes('fill', f.execId));
}

/**
 * What the Fills sheet works out per fill, as CSV field texts for the detail whose lines Postgres writes
 * (store/report/exchange-sheets.ts fillCsvPages): the fee's currency per symbol, as fillRow prints it, and the Open breaks
 * field. Held to fillRow's CSV byte for byte by test/integration/report-detail-csv.test.ts.
 */
export function fillCsvFields(
  precision: Precision,
  breaks: BreakIndex,
  feeCurrency: 'counter' | 'base',
): { feeField: (symbol: string) => string; breakFields: ReadonlyMap<string, string> } {
  return {
    feeField: (symbol) => {
      const p = precision.symbol(symbol);
      return csvField(csvText(feeCurrency === 'base' ? p.base : p.counterCode));
    },
    breakFields: breaks.csvFields('fill'),
  };
}

// ------------------------------------------------------------------ Balances

/**
 * What a row of a currency works out once: its decimals, the latest snapshot (on the currency's first row only), the
 * actual closing balance, its USD value, and the pair's deposits and withdrawals by placement.
 */
interface BalanceFigures {
  currency: string;
  dp: number;
  snap: BalanceRec | undefined;
  closing: Decimal | null;
  usd: Decimal | null;
  placed: Cell[];
}

/** A row per pair of the roll-forward (r), or one without a pair for a currency only in the snapshot. */
const balances = dataSheet<BalanceRollRec | undefined, BalanceFigures>(
  SHEET.balances,
  [
    col.text('Currency', (_r, x) => x.currency),
    col.amount('Opening', (r, x) => amount(r?.opening, x.dp)),
    col.amount('Deposits', (r, x) => amount(r?.deposits, x.dp)),
    col.amount('Withdrawals', (r, x) => amount(r?.withdrawals, x.dp)),
    col.amount('Bought', (r, x) => amount(r?.bought, x.dp)),
    col.amount('Sold', (r, x) => amount(r?.sold, x.dp)),
    col.amount('Fees', (r, x) => amount(r?.fees, x.dp)),
    col.amount('Expected closing', (r, x) => amount(r?.expectedClosing, x.dp)),
    col.amount('Actual closing', (_r, x) => amount(x.closing, x.dp)),
    col.amount('Residual', (r, x) => amount(r?.residual, x.dp)),
    // Deposits and withdrawals move a balance when their state changes (docs/rules.md E_BALANCE_ROLL):
    // what of them was placed by a state change observed between the two snapshots, what by timestamp.
    col.amount('Deposits placed by state change', (_r, x) => x.placed[0]!),
    col.amount('Deposits placed by timestamp', (_r, x) => x.placed[1]!),
    col.amount('Withdrawals placed by state change', (_r, x) => x.placed[2]!),
    col.amount('Withdrawals placed by timestamp', (_r, x) => x.placed[3]!),
    col.day('First divergent day', (r) => day(r?.firstDivergentDay)),
    col.datetime('Opening snapshot (UTC)', (r) => r?.openingAt ?? null),
    col.datetime('Closing snapshot (UTC)', (r, x) => r?.closingAt ?? x.snap?.fetchedAt ?? null),
    col.amount('Available', (_r, x) => amount(x.snap?.available, x.dp)),
    col.amount('Rate', (_r, x) => amount(x.snap?.rate, RATE_DECIMALS)),
    col.amount('USD value', (_r, x) => amount(x.usd, 2)),
  ],
  // A small sheet treasury prints: one page wide (landscape), like the Summary and the Breaks sheet.
  { fitToWidth: true },
);

export const balancesSpec: SheetSpec = balances.spec;

/** Decimals of the Balances "Rate" column (USD per unit: a small coin's rate has many). */
export const RATE_DECIMALS = 8;

/**
 * One row per currency and snapshot pair of the roll-forward, the latest pair first; the latest
 * snapshot's available, rate and USD value go on each currency's first row. A currency only in
 * the snapshot still gets its row.
 */
export function balanceRows(
  rolls: BalanceRollRec[],
  latest: BalanceRec[],
  precision: Precision,
  breaks: BreakIndex,
): Row[] {
  const currencies = [...new Set([...rolls.map((r) => r.currency), ...latest.map((b) => b.currency)])].sort();
  const rows: Row[] = [];
  for (const currency of currencies) {
    const pairs = rolls
      .filter((x) => x.currency === currency)
      .sort((x, y) => (y.closingAt?.getTime() ?? 0) - (x.closingAt?.getTime() ?? 0));
    const b = latest.find((x) => x.currency === currency);
    const dp = precision.exchange(currency);
    const codes = breaks.codes('balance', currency);
    (pairs.length ? pairs : [undefined]).forEach((r, i) => {
      const snap = i === 0 ? b : undefined;
      const closing = r?.actualClosing ?? snap?.balance ?? null;
      // balance x rate of the latest snapshot (the exchange's local currency, assumed USD: see Summary, Assumptions)
      const usd = snap && closing ? closing.times(snap.rate).toDecimalPlaces(2, Decimal.ROUND_HALF_UP) : null;
      const row = withBreaks(
        balances.cells(r, { currency, dp, snap, closing, usd, placed: placement(r, dp) }),
        // the break belongs to the currency; only pairs that diverge are marked
        i === 0 || (r?.residual && !r.residual.isZero()) ? codes : [],
      );
      if (r?.residual && !r.residual.isZero()) row.cellTones = { 9: 'high' };
      rows.push(row);
    });
  }
  return rows;
}

/**
 * A pair's deposits and withdrawals split by how the roll-forward placed them: by a state change
 * observed between the two snapshots, or by the record's timestamp. Empty for figures stored
 * before the split existed.
 */
function placement(r: BalanceRollRec | undefined, dp: number) {
  if (!r || r.depositsByState == null || r.withdrawalsByState == null || !r.deposits || !r.withdrawals)
    return [null, null, null, null];
  return [
    amount(r.depositsByState, dp),
    amount(r.deposits.minus(r.depositsByState), dp),
    amount(r.withdrawalsByState, dp),
    amount(r.withdrawals.minus(r.withdrawalsByState), dp),
  ];
}

// ------------------------------------------------------------------ Deposits / withdrawals

/** x: the decimals of the deposit's currency. */
const deposits = dataSheet<DepositRec, number>(SHEET.deposits, [
  SHARED.time,
  col.id('Deposit id', (d) => d.depositId),
  SHARED.currency,
  col.amount('Amount', (d, dp) => amount(d.amount, dp)),
  SHARED.state,
  col.id('Address', (d) => d.address),
  col.id('Transaction hash', (d) => d.txHash),
]);

export const depositsSpec: SheetSpec = deposits.spec;

export function depositRow(d: DepositRec, precision: Precision, breaks: BreakIndex): Row {
  return withBreaks(deposits.cells(d, precision.exchange(d.currency)), breaks.codes('deposit', d.depositId));
}

/** x: the decimals of the withdrawal's currency, and the states in which a withdrawal debits the balance. */
const withdrawals = dataSheet<WithdrawalRec, { dp: number; debitStates: readonly string[] }>(SHEET.withdrawals, [
  SHARED.time,
  col.id('Withdrawal id', (w) => w.withdrawalId),
  SHARED.currency,
  col.amount('Amount', (w, x) => amount(w.amount, x.dp)),
  col.amount('Fee', (w, x) => amount(w.fee, x.dp)),
  SHARED.state,
  col.text('Debits balance', (w, x) => (w.state && x.debitStates.includes(w.state) ? 'yes' : 'no')),
  col.id('Beneficiary', (w) => w.beneficiary),
]);

export const withdrawalsSpec: SheetSpec = withdrawals.spec;

export function withdrawalRow(
  w: WithdrawalRec,
  precision: Precision,
  breaks: BreakIndex,
  debitStates: readonly string[],
): Row {
  const x = { dp: precision.exchange(w.currency), debitStates };
  return withBreaks(withdrawals.cells(w, x), breaks.codes('withdrawal', w.withdrawalId));
}

// ------------------------------------------------------------------ Coverage

const coverage = dataSheet<CoverageRec, void>(SHEET.coverage, [
  col.text('Source', (c) => c.source),
  col.text('Stream', (c) => c.stream),
  col.day('Day (UTC)', (c) => day(c.day)),
  // Requests made for the day by every run (a rescan adds its pages); rows and quarantined are what the store holds.
  col.int('Pages read (all runs)', (c) => c.pages),
  col.int('Rows', (c) => c.rows),
  col.int('Quarantined', (c) => c.quarantined),
  col.text('Settled', (c) => (c.settled ? 'yes' : 'NO')),
  col.id('Synced by run', (c) => c.runId),
]);

export const coverageSpec: SheetSpec = coverage.spec;

export function coverageRow(c: CoverageRec, breaks: BreakIndex): Row {
  const row = withBreaks(coverage.cells(c), breaks.codes('coverage', `${c.source}:${c.stream}:${c.day}`));
  if (!row.tone && c.quarantined > 0) row.cellTones = { 5: 'medium' };
  return row;
}
