/** The Summary's totals of the period: partner orders by input currency, exchange fills by symbol, deposits and
 * withdrawals by currency, and the fees earned and paid per day.
 */
import { amount, day, type Cell, type Row } from './cells.js';
import type { FeeDayRec } from '../domain/index.js';
import type { Precision } from './precision.js';
import type { UsdRates } from './usd-rates.js';
import { feeCurrencyOf } from './summary.js';
import { header, muted, section, sumOf, type SummarySection } from './summary-layout.js';

export const partnerTotals: SummarySection = ({ totals, precision }) => {
  const rows: Row[] = [
    section('Totals: partner orders by input currency'),
    header(
      'Input currency',
      'Orders',
      'Volume',
      'Fees',
      'Amount USD',
      'Fees USD',
      'Volume and fees are in the input currency',
    ),
  ];
  for (const t of totals.partner) {
    const dp = precision.partner(t.currency);
    const cells = [t.currency, t.orders, amount(t.volume, dp), amount(t.fees, dp), amount(t.amountUsd, 2)];
    rows.push({ cells: [...cells, amount(t.feesUsd, 2)] });
  }
  if (!totals.partner.length) return [...rows, muted('(none)')];
  const orders = totals.partner.reduce((a, t) => a + t.orders, 0);
  const amountUsd = amount(sumOf(totals.partner.map((t) => t.amountUsd)), 2);
  const feesUsd = amount(sumOf(totals.partner.map((t) => t.feesUsd)), 2);
  return [...rows, { cells: ['all (USD)', orders, null, null, amountUsd, feesUsd], tone: 'bold' }];
};

export const fillTotals: SummarySection = ({ totals, precision, feeCurrency = 'counter' }) => {
  const rows: Row[] = [
    section('Totals: exchange fills by symbol'),
    header('Symbol', 'Fills', 'Quantity', 'Notional', 'Fees', 'Fee currency', 'Currencies'),
  ];
  for (const t of totals.fills) {
    const p = precision.symbol(t.symbol);
    const fee = feeCurrencyOf(t.symbol, precision, feeCurrency);
    const currencies = `quantity in ${p.base ?? '?'}, notional in ${p.counterCode ?? '?'}, fees in ${fee.code}`;
    const figures = [amount(t.qty, p.qty), amount(t.notional, p.counter), amount(t.fees, fee.dp)];
    rows.push({ cells: [t.symbol, t.fills, ...figures, fee.code, currencies] });
  }
  if (!totals.fills.length) rows.push(muted('(none)'));
  return rows;
};

export const transferTotals: SummarySection = ({ totals, precision }) => {
  const rows: Row[] = [
    section('Totals: deposits and withdrawals by currency'),
    header(
      'Currency',
      'Deposits',
      'Deposited',
      'Withdrawals',
      'Withdrawn',
      'Withdrawal fees',
      'Amounts are in the currency of the row',
    ),
  ];
  const currencies = [
    ...new Set([...totals.deposits.map((d) => d.currency), ...totals.withdrawals.map((w) => w.currency)]),
  ].sort();
  for (const c of currencies) {
    const d = totals.deposits.find((x) => x.currency === c);
    const w = totals.withdrawals.find((x) => x.currency === c);
    const dp = precision.exchange(c);
    rows.push({
      cells: [c, d?.count ?? 0, amount(d?.amount, dp), w?.count ?? 0, amount(w?.amount, dp), amount(w?.fee, dp)],
    });
  }
  if (!currencies.length) rows.push(muted('(none)'));
  return rows;
};

/**
 * "Partner fees earned and exchange fees paid per day": one row per day and currency, a USD total per day and for the
 * period (when the report read the fees of each day).
 */
export const feesPerDay: SummarySection = ({ feeDays, precision, rates }) =>
  feeDays ? feeDayRows(feeDays, precision, rates) : [];

function feeDayRows(days: FeeDayRec[], precision: Precision, rates: UsdRates | undefined): Row[] {
  const rows: Row[] = [
    section('Partner fees earned and exchange fees paid per day'),
    header(
      'Day',
      'Currency',
      'Partner fees earned',
      'Partner fees USD',
      'Exchange fees paid',
      'Exchange fees USD',
      'partner fee of COMPLETED orders (by creation day); fill fees (by fill day)',
    ),
  ];
  if (!days.length) return [...rows, muted('(none)')];
  const exchangeUsd = (d: FeeDayRec) => (rates && d.exchangeFee ? rates.usd(d.exchangeFee, d.currency) : null);
  const total = (list: FeeDayRec[], label: string, dayCell: Cell): Row => {
    const unvalued = [
      ...new Set(
        list.filter((d) => d.exchangeFee && !d.exchangeFee.isZero() && exchangeUsd(d) === null).map((d) => d.currency),
      ),
    ];
    const partnerUsd = amount(sumOf(list.map((d) => d.partnerFeeUsd)), 2);
    const exchangeTotal = amount(sumOf(list.map(exchangeUsd)), 2);
    const note = unvalued.length ? `exchange fees without a USD rate not included: ${unvalued.join(', ')}` : null;
    return { cells: [dayCell, label, null, partnerUsd, null, exchangeTotal, note], tone: 'bold' };
  };
  for (const d of [...new Set(days.map((x) => x.day))]) {
    const list = days.filter((x) => x.day === d);
    for (const x of list) {
      const partner = [amount(x.partnerFee, precision.partner(x.currency)), amount(x.partnerFeeUsd, 2)];
      const exchange = [amount(x.exchangeFee, precision.exchange(x.currency)), amount(exchangeUsd(x), 2)];
      rows.push({ cells: [day(x.day), x.currency, ...partner, ...exchange] });
    }
    rows.push(total(list, 'day total USD', day(d)));
  }
  rows.push(total(days, 'period total USD', 'all days'));
  return rows;
}
