/** The Summary's balance table: the roll-forward per currency between its opening and closing snapshots (their times
 * and span in its title), six currencies a block, or without a roll-forward the latest snapshot; each ends with the
 * closing balances' USD total.
 */
import type { Decimal } from '../decimal/decimal.js';
import { amount, type Cell, type Row, type Tone } from './cells.js';
import type { BalanceRec, BalanceRollRec, RunInfo } from '../domain/index.js';
import { dayStart } from '../util/dates.js';
import { plural } from '../util/words.js';
import type { Precision } from './precision.js';
import type { UsdRates } from './usd-rates.js';
import { balanceTotals, periodLabel, usdSum, type BalanceTotal } from './summary.js';
import { header, muted, section, SUMMARY_COLUMNS, utcText, type SummarySection } from './summary-layout.js';

const ROLL_MEANING =
  'expected closing = opening + deposits - withdrawals + bought - sold - fees; opening of the first snapshot ' +
  'pair, actual closing of the last';

/** Currencies side by side in one block of the roll-forward: the columns after the labels. */
const PER_BLOCK = SUMMARY_COLUMNS - 1;

/** Shown with the balance rolls or the latest balances, when the report read them. */
export const balances: SummarySection = ({ balanceRolls, latestBalances, precision, rates, run }) =>
  balanceRolls || latestBalances
    ? balanceTableRows(balanceRolls ?? [], latestBalances ?? [], precision, rates, run)
    : [];

function balanceTableRows(
  rolls: BalanceRollRec[],
  latest: BalanceRec[],
  precision: Precision,
  rates: UsdRates | undefined,
  period: Pick<RunInfo, 'periodFrom' | 'periodTo'>,
): Row[] {
  const table = balanceTotals(rolls);
  if (!table.length)
    return [section('Balances per currency: the latest snapshot'), ...latestSnapshotRows(latest, precision, rates)];
  const rows: Row[] = coverageRows(table, period);
  for (let i = 0; i < table.length; i += PER_BLOCK)
    rows.push(...rollBlock(table.slice(i, i + PER_BLOCK), precision, rates));
  rows.push(muted(ROLL_MEANING));
  if (rates) rows.push(...grandTotal(table, (t) => t.actualClosing, rates));
  return rows;
}

/**
 * The table's title with what it covers: the opening and closing snapshots' times and the span between them; and a
 * warning when that span is under half the reported period (two snapshots seconds apart do not roll the period).
 */
function coverageRows(table: BalanceTotal[], period: Pick<RunInfo, 'periodFrom' | 'periodTo'>): Row[] {
  const times = (pick: (t: BalanceTotal) => Date | null) =>
    table.flatMap((t) => {
      const at = pick(t);
      return at ? [new Date(at).getTime()] : [];
    });
  const openings = times((t) => t.openingAt);
  const closings = times((t) => t.closingAt);
  if (!openings.length || !closings.length) return [section('Balances per currency: roll-forward')];
  const from = Math.min(...openings);
  const to = Math.max(...closings);
  const span = spanWords(to - from);
  const rows: Row[] = [
    section(
      `Balances per currency: roll-forward from the snapshot of ${utcText(new Date(from))} UTC to that of ` +
        `${utcText(new Date(to))} UTC (${span})`,
    ),
  ];
  const periodMs = dayStart(period.periodTo).getTime() - dayStart(period.periodFrom).getTime();
  if (to - from < periodMs / 2) {
    const which = table.every((t) => t.pairs === 1) ? 'The two snapshots are' : 'The first and last snapshots are';
    rows.push({
      cells: [
        `${which} ${span} apart: this table does not cover the period ` +
          periodLabel(period.periodFrom, period.periodTo),
      ],
      cellTones: { 0: 'medium' },
    });
  }
  return rows;
}

/** "3 seconds", "12 min", "5 h 30 min", "1 day 0 h": how far apart two snapshots are. */
export function spanWords(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return plural(seconds, 'second');
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ${minutes % 60} min`;
  return `${plural(Math.floor(hours / 24), 'day')} ${hours % 24} h`;
}

/** One block of currencies: a row per figure of the roll-forward, the residual red where it is not zero. */
function rollBlock(block: BalanceTotal[], precision: Precision, rates: UsdRates | undefined): Row[] {
  const usdOf = (value: Decimal | null, currency: string) => (rates ? rates.usd(value, currency) : null);
  const inCurrency = (figure: (t: BalanceTotal) => Decimal) => (t: BalanceTotal) =>
    amount(figure(t), precision.exchange(t.currency));
  const lines: Array<[string, (t: BalanceTotal) => Cell]> = [
    ['Opening', inCurrency((t) => t.opening)],
    ['Deposits', inCurrency((t) => t.deposits)],
    ['Withdrawals (with fees)', inCurrency((t) => t.withdrawals)],
    ['Bought (fills)', inCurrency((t) => t.bought)],
    ['Sold (fills)', inCurrency((t) => t.sold)],
    ['Fees (fills)', inCurrency((t) => t.fees)],
    ['Expected closing', inCurrency((t) => t.expectedClosing)],
    ['Actual closing', inCurrency((t) => t.actualClosing)],
    ['Residual (actual - expected)', inCurrency((t) => t.residual)],
    ['Actual closing USD', (t) => amount(usdOf(t.actualClosing, t.currency), 2)],
    ['Opening snapshot (UTC)', (t) => utcText(t.openingAt)],
    ['Closing snapshot (UTC)', (t) => utcText(t.closingAt)],
  ];
  const residualTones: Record<number, Tone> = Object.fromEntries(
    block.flatMap((t, j) => (t.residual.isZero() ? [] : [[j + 1, 'high']])),
  );
  return [
    header('Currency', ...block.map((t) => t.currency)),
    ...lines.map(([label, cell]): Row => ({
      cells: [label, ...block.map(cell)],
      cellTones: label.startsWith('Residual') ? residualTones : undefined,
      tone: label === 'Actual closing' ? 'bold' : undefined,
    })),
  ];
}

/** Fewer than two snapshots: no roll-forward, the latest snapshot's balances instead. */
function latestSnapshotRows(latest: BalanceRec[], precision: Precision, rates: UsdRates | undefined): Row[] {
  const items = [...latest].sort((a, b) => a.currency.localeCompare(b.currency));
  const rows: Row[] = [
    muted('(no roll-forward in this run: fewer than two balance snapshots; the latest snapshot follows)'),
    header('Currency', 'Balance', 'Balance USD', 'Snapshot (UTC)'),
  ];
  for (const b of items) {
    const usd = rates ? rates.usd(b.balance, b.currency) : null;
    rows.push({ cells: [b.currency, amount(b.balance, precision.exchange(b.currency)), amount(usd, 2), b.fetchedAt] });
  }
  if (!items.length) rows.push(muted('(no balance snapshot)'));
  if (rates && items.length) rows.push(...grandTotal(items, (b) => b.balance, rates));
  return rows;
}

/** The USD total of each currency's closing figure, naming the currencies without a rate. */
function grandTotal<T extends { currency: string }>(items: T[], closing: (item: T) => Decimal, rates: UsdRates): Row[] {
  const sum = usdSum(
    items.map((item) => ({ currency: item.currency, value: closing(item) })),
    rates,
  );
  const rows: Row[] = [{ cells: ['Total closing USD (all currencies)', amount(sum.usd, 2)], tone: 'bold' }];
  if (sum.unvalued.length) rows.push(muted(`not included (no USD rate): ${sum.unvalued.join(', ')}`));
  return rows;
}
