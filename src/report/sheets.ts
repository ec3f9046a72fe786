/** The data sheets: their names, column specs and the pure builders of their rows (partner, exchange, balances,
 * coverage); the Breaks sheet is in breaks-sheet.ts.
 */
import { Decimal } from '../decimal/decimal.js';
import { EXCEL_MAX_DECIMALS, amount, day, type Cell, type Row, type SheetSpec } from './cells.js';
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

/** Sheet names, in workbook order. */
export const SHEET = {
  summary: 'Summary',
  breaks: 'Breaks',
  partnerDaily: 'Partner daily',
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
  private readonly byRecord = new Map<string, string[]>();
  constructor(breaks: Iterable<Pick<Break, 'code' | 'key' | 'entity'>>) {
    for (const b of breaks) {
      const id = `${b.entity}\u0000${b.key}`;
      this.byRecord.set(id, [...(this.byRecord.get(id) ?? []), b.code]);
    }
  }

  /** Codes of the open breaks on the record of this kind and key. */
  codes(entity: RecordKindName, key: string | null | undefined): string[] {
    return key ? (this.byRecord.get(`${entity}\u0000${key}`) ?? []) : [];
  }
}

function withBreaks(cells: Cell[], codes: string[]): Row {
  cells.push(codes.length ? codes.join(', ') : null);
  return codes.length ? { cells, tone: 'break' } : { cells };
}

const BREAKS_COLUMN = { header: 'Open breaks', kind: 'text' } as const;

// ------------------------------------------------------------------ Partner daily

export const partnerDailySpec: SheetSpec = {
  name: SHEET.partnerDaily,
  columns: [
    { header: 'Day (UTC)', kind: 'day' },
    { header: 'Input currency', kind: 'text' },
    { header: 'Orders', kind: 'int' },
    { header: 'Completed', kind: 'int' },
    { header: 'Pending', kind: 'int' },
    { header: 'Withdrawing', kind: 'int' },
    { header: 'Failed', kind: 'int' },
    { header: 'Volume (input)', kind: 'amount' },
    { header: 'Processing fee', kind: 'amount' },
    { header: 'Partner fee', kind: 'amount' },
    { header: 'Network fee', kind: 'amount' },
    { header: 'Amount USD', kind: 'amount' },
    { header: 'Fees USD', kind: 'amount' },
  ],
};

export function partnerDailyRow(r: PartnerDailyRec, precision: Precision): Row {
  const dp = precision.partner(r.currency);
  return {
    cells: [
      day(r.day),
      r.currency,
      r.orders,
      r.completed,
      r.pending,
      r.withdrawing,
      r.failed,
      amount(r.volume, dp),
      amount(r.processingFee, dp),
      amount(r.partnerFee, dp),
      amount(r.networkFee, dp),
      amount(r.amountUsd, 2),
      amount(r.feesUsd, 2),
    ],
  };
}

// ------------------------------------------------------------------ Partner orders

export const partnerOrdersSpec: SheetSpec = {
  name: SHEET.partnerOrders,
  columns: [
    { header: 'Created (UTC)', kind: 'datetime' },
    { header: 'Order id', kind: 'id' },
    { header: 'Type', kind: 'text' },
    { header: 'State', kind: 'text' },
    { header: 'State updated (UTC)', kind: 'datetime' },
    { header: 'Input currency', kind: 'text' },
    { header: 'Input amount', kind: 'amount' },
    { header: 'Output currency', kind: 'text' },
    { header: 'Output amount', kind: 'amount' },
    { header: 'Amount USD', kind: 'amount' },
    { header: 'Processing fee', kind: 'amount' },
    { header: 'Processing fee USD', kind: 'amount' },
    { header: 'Partner fee', kind: 'amount' },
    { header: 'Partner fee USD', kind: 'amount' },
    { header: 'Network fee', kind: 'amount' },
    { header: 'Network fee USD', kind: 'amount' },
    { header: 'Payment method', kind: 'text' },
    { header: 'Wallet', kind: 'id' },
    { header: 'Transaction hash', kind: 'id' },
    { header: 'External reference', kind: 'id' },
    BREAKS_COLUMN,
  ],
};

export function partnerOrderRow(o: PartnerOrderRec, precision: Precision, breaks: BreakIndex): Row {
  const inDp = precision.partner(o.inputCurrency);
  const outDp = precision.partner(o.outputCurrency);
  return withBreaks(
    [
      o.createdAt,
      o.orderId,
      o.orderType,
      o.orderState,
      o.orderStateUpdatedAt,
      o.inputCurrency,
      amount(o.inputAmount, inDp),
      o.outputCurrency,
      amount(o.outputAmount, outDp),
      amount(o.amountUsd, 2),
      amount(o.processingFee, inDp),
      amount(o.processingFeeUsd, 2),
      amount(o.partnerFee, inDp),
      amount(o.partnerFeeUsd, 2),
      amount(o.networkFee, inDp),
      amount(o.networkFeeUsd, 2),
      o.paymentMethod,
      o.targetWalletAddress,
      o.transactionHash,
      o.externalReference,
    ],
    breaks.codes('partnerOrder', o.orderId),
  );
}

// ------------------------------------------------------------------ Exchange orders vs fills

export const ordersVsFillsSpec: SheetSpec = {
  name: SHEET.ordersVsFills,
  columns: [
    { header: 'Exchange order id', kind: 'id' },
    { header: 'Order found', kind: 'text' },
    { header: 'Symbol', kind: 'text' },
    { header: 'Side', kind: 'text' },
    { header: 'Type', kind: 'text' },
    { header: 'Status', kind: 'text' },
    { header: 'Fills', kind: 'int' },
    { header: 'cumQty', kind: 'amount' },
    { header: 'Sum of fill qty', kind: 'amount' },
    { header: 'Qty difference', kind: 'amount' },
    { header: 'avgPx', kind: 'amount' },
    { header: 'Fill VWAP', kind: 'amount' },
    { header: 'Price difference', kind: 'amount' },
    { header: 'Notional', kind: 'amount' },
    { header: 'Fees', kind: 'amount' },
    { header: 'First fill (UTC)', kind: 'datetime' },
    { header: 'Last fill (UTC)', kind: 'datetime' },
    BREAKS_COLUMN,
  ],
};

/** VWAP decimals beyond the price's own: a quotient is rounded, so keep enough to judge half an increment. */
const VWAP_EXTRA_DECIMALS = 4;

export function orderVsFillsRow(o: OrderVsFillsRec, precision: Precision, breaks: BreakIndex): Row {
  const p = precision.symbol(o.symbol);
  // the VWAP and its difference to avgPx are shown with the decimals the VWAP is rounded to, on every row of the symbol
  const vwapDp = p.price + VWAP_EXTRA_DECIMALS;
  const vwap = o.fillQty.isZero() ? null : o.notional.div(o.fillQty).toDecimalPlaces(vwapDp, Decimal.ROUND_HALF_UP);
  const qtyDiff = o.cumQty ? o.fillQty.minus(o.cumQty) : null;
  const pxDiff = vwap && o.avgPx ? vwap.minus(o.avgPx) : null;
  return withBreaks(
    [
      o.exOrdId,
      o.found ? 'yes' : 'NO (orphan)',
      o.symbol,
      o.side,
      o.ordType,
      o.status,
      o.fills,
      amount(o.cumQty, p.qty),
      amount(o.fillQty, p.qty),
      amount(qtyDiff, p.qty),
      amount(o.avgPx, p.price),
      amount(vwap, vwapDp),
      amount(pxDiff, vwapDp),
      amount(o.notional, notionalDp(p)),
      amount(o.fees, p.counter),
      o.firstFill,
      o.lastFill,
    ],
    breaks.codes('exchangeOrder', o.exOrdId),
  );
}

// ------------------------------------------------------------------ Fills

export const fillsSpec: SheetSpec = {
  name: SHEET.fills,
  columns: [
    { header: 'Time (UTC)', kind: 'datetime' },
    { header: 'Exec id', kind: 'id' },
    { header: 'Exchange order id', kind: 'id' },
    { header: 'Trade id', kind: 'id' },
    { header: 'Symbol', kind: 'text' },
    { header: 'Side', kind: 'text' },
    { header: 'Price', kind: 'amount' },
    { header: 'Qty', kind: 'amount' },
    { header: 'Notional', kind: 'amount' },
    { header: 'Fee', kind: 'amount' },
    { header: 'Fee currency', kind: 'text' },
    BREAKS_COLUMN,
  ],
};

/**
 * Decimals of a notional (sum of qty x price): the quantity's scale plus the price's, so no notional needs its exact
 * text beside it.
 */
export function notionalDp(p: { qty: number; price: number }): number {
  return Math.min(p.qty + p.price, EXCEL_MAX_DECIMALS);
}

export function fillRow(f: FillRec, precision: Precision, breaks: BreakIndex, feeCurrency: 'counter' | 'base'): Row {
  const p = precision.symbol(f.symbol);
  const feeCode = feeCurrency === 'base' ? p.base : p.counterCode;
  const feeDp = feeCurrency === 'base' ? p.qty : p.counter;
  return withBreaks(
    [
      f.timestamp,
      f.execId,
      f.exOrdId,
      f.tradeId,
      f.symbol,
      f.side,
      amount(f.price, p.price),
      amount(f.qty, p.qty),
      // qty x price has exactly the decimals of both: every notional of a symbol shown whole, at one format
      amount(f.qty.times(f.price), notionalDp(p)),
      amount(f.fee, feeDp),
      feeCode,
    ],
    breaks.codes('fill', f.execId),
  );
}

// ------------------------------------------------------------------ Balances

export const balancesSpec: SheetSpec = {
  name: SHEET.balances,
  // A small sheet treasury prints: one page wide (landscape), like the Summary and the Breaks sheet.
  fitToWidth: true,
  columns: [
    { header: 'Currency', kind: 'text' },
    { header: 'Opening', kind: 'amount' },
    { header: 'Deposits', kind: 'amount' },
    { header: 'Withdrawals', kind: 'amount' },
    { header: 'Bought', kind: 'amount' },
    { header: 'Sold', kind: 'amount' },
    { header: 'Fees', kind: 'amount' },
    { header: 'Expected closing', kind: 'amount' },
    { header: 'Actual closing', kind: 'amount' },
    { header: 'Residual', kind: 'amount' },
    // Deposits and withdrawals move a balance when their state changes (docs/rules.md E_BALANCE_ROLL):
    // what of them was placed by a state change observed between the two snapshots, what by timestamp.
    { header: 'Deposits placed by state change', kind: 'amount' },
    { header: 'Deposits placed by timestamp', kind: 'amount' },
    { header: 'Withdrawals placed by state change', kind: 'amount' },
    { header: 'Withdrawals placed by timestamp', kind: 'amount' },
    { header: 'First divergent day', kind: 'day' },
    { header: 'Opening snapshot (UTC)', kind: 'datetime' },
    { header: 'Closing snapshot (UTC)', kind: 'datetime' },
    { header: 'Available', kind: 'amount' },
    { header: 'Rate', kind: 'amount' },
    { header: 'USD value', kind: 'amount' },
    BREAKS_COLUMN,
  ],
};

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
        [
          currency,
          amount(r?.opening, dp),
          amount(r?.deposits, dp),
          amount(r?.withdrawals, dp),
          amount(r?.bought, dp),
          amount(r?.sold, dp),
          amount(r?.fees, dp),
          amount(r?.expectedClosing, dp),
          amount(closing, dp),
          amount(r?.residual, dp),
          ...placement(r, dp),
          day(r?.firstDivergentDay),
          r?.openingAt ?? null,
          r?.closingAt ?? snap?.fetchedAt ?? null,
          amount(snap?.available, dp),
          amount(snap?.rate, RATE_DECIMALS),
          amount(usd, 2),
        ],
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

export const depositsSpec: SheetSpec = {
  name: SHEET.deposits,
  columns: [
    { header: 'Time (UTC)', kind: 'datetime' },
    { header: 'Deposit id', kind: 'id' },
    { header: 'Currency', kind: 'text' },
    { header: 'Amount', kind: 'amount' },
    { header: 'State', kind: 'text' },
    { header: 'Address', kind: 'id' },
    { header: 'Transaction hash', kind: 'id' },
    BREAKS_COLUMN,
  ],
};

export function depositRow(d: DepositRec, precision: Precision, breaks: BreakIndex): Row {
  return withBreaks(
    [
      d.timestamp,
      d.depositId,
      d.currency,
      amount(d.amount, precision.exchange(d.currency)),
      d.state,
      d.address,
      d.txHash,
    ],
    breaks.codes('deposit', d.depositId),
  );
}

export const withdrawalsSpec: SheetSpec = {
  name: SHEET.withdrawals,
  columns: [
    { header: 'Time (UTC)', kind: 'datetime' },
    { header: 'Withdrawal id', kind: 'id' },
    { header: 'Currency', kind: 'text' },
    { header: 'Amount', kind: 'amount' },
    { header: 'Fee', kind: 'amount' },
    { header: 'State', kind: 'text' },
    { header: 'Debits balance', kind: 'text' },
    { header: 'Beneficiary', kind: 'id' },
    BREAKS_COLUMN,
  ],
};

export function withdrawalRow(
  w: WithdrawalRec,
  precision: Precision,
  breaks: BreakIndex,
  debitStates: readonly string[],
): Row {
  const dp = precision.exchange(w.currency);
  return withBreaks(
    [
      w.timestamp,
      w.withdrawalId,
      w.currency,
      amount(w.amount, dp),
      amount(w.fee, dp),
      w.state,
      w.state && debitStates.includes(w.state) ? 'yes' : 'no',
      w.beneficiary,
    ],
    breaks.codes('withdrawal', w.withdrawalId),
  );
}

// ------------------------------------------------------------------ Coverage

export const coverageSpec: SheetSpec = {
  name: SHEET.coverage,
  columns: [
    { header: 'Source', kind: 'text' },
    { header: 'Stream', kind: 'text' },
    { header: 'Day (UTC)', kind: 'day' },
    // Requests made for the day by every run (a rescan adds its pages); rows and quarantined are what the store holds.
    { header: 'Pages read (all runs)', kind: 'int' },
    { header: 'Rows', kind: 'int' },
    { header: 'Quarantined', kind: 'int' },
    { header: 'Settled', kind: 'text' },
    { header: 'Synced by run', kind: 'id' },
    BREAKS_COLUMN,
  ],
};

export function coverageRow(c: CoverageRec, breaks: BreakIndex): Row {
  const row = withBreaks(
    [c.source, c.stream, day(c.day), c.pages, c.rows, c.quarantined, c.settled ? 'yes' : 'NO', c.runId],
    breaks.codes('coverage', `${c.source}:${c.stream}:${c.day}`),
  );
  if (!row.tone && c.quarantined > 0) row.cellTones = { 5: 'medium' };
  return row;
}
