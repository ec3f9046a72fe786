/** The Summary's opening sections: the verdict banner, a failure or a partial period, the money at stake, where the
 * detail is.
 */
import type { Decimal } from '../decimal/decimal.js';
import { amount, type Row, type Tone } from './cells.js';
import type { ReportedBreak } from '../domain/index.js';
import { shownUsd, type UsdRates } from './usd-rates.js';
import { moneyAtStake, type UsdSplit } from './money-at-stake.js';
import {
  failedRunNextStep,
  FAILED_RUN_KEPT,
  HEADLINE_ROW_TONE,
  LAST_KNOWN_MEANING,
  PARTIAL_MEANING,
  partialRun,
  STAKE_MEANING,
} from './summary.js';
import { muted, pad, SUMMARY_COLUMNS, type SummarySection } from './summary-layout.js';

/**
 * What the data sheets of the mailed workbook hold, and where the rest is: short lines, the Summary prints one page
 * wide.
 */
export const DETAIL_MEANING = [
  'the data sheets here list the records open breaks point at, with those that explain them (an order with its fills,',
  'a partner order with its deposit); the folder above holds every record of the period, one gzip CSV per data sheet',
  '(`ramp-recon report <run id> --detail` also writes them there as a workbook)',
];

/** The banner across the whole width, in the verdict's colour, and the line under it. */
export const verdict: SummarySection = ({ head }) => [
  { cells: [head.text, ...pad(SUMMARY_COLUMNS - 1)], tone: HEADLINE_ROW_TONE[head.tone] },
  { cells: [head.detail] },
];

/** Under the banner of a failed run: the stage, why, what was kept, what the open breaks are, what to do. */
export const failureDetails: SummarySection = ({ run, failure }) =>
  failure
    ? [
        { cells: ['Run failed in stage', failure.stage], tone: 'bold', cellTones: { 1: 'break' } },
        { cells: ['Why', failure.error ?? '(no error recorded)'] },
        { cells: ['What was kept', FAILED_RUN_KEPT] },
        ...(failure.judged ? [] : [{ cells: ['Open breaks', LAST_KNOWN_MEANING] }]),
        { cells: ['What to do', failedRunNextStep(run)] },
      ]
    : [];

export const partialPeriod: SummarySection = ({ run }) =>
  partialRun(run) ? [{ cells: ['Partial period', PARTIAL_MEANING], cellTones: { 1: 'medium' } }] : [];

/** The money at stake in USD (needs the rates). */
export const moneyAtStakeSection: SummarySection = ({ openBreaks, rates }) =>
  rates ? stakeRows(openBreaks, rates) : [];

/**
 * The money at stake's rows (money-at-stake.ts): shortfalls, surpluses, and the open breaks without a USD figure or
 * moving no money, each in total, this period and carried over.
 */
function stakeRows(openBreaks: readonly ReportedBreak[], rates: UsdRates): Row[] {
  const m = moneyAtStake(openBreaks, rates);
  // the exact sum, shown at two decimals (a smaller non-zero one to its first significant digit)
  const usd = (v: Decimal) => amount(v, shownUsd(v).dp);
  const money = (label: string, s: UsdSplit, tone?: Tone): Row => ({
    cells: [label, usd(s.total), usd(s.inPeriod), usd(s.carriedOver)],
    ...(tone && !s.total.isZero() ? { cellTones: { 1: tone } } : {}),
  });
  const noFigure = 'they move money, but have no USD rate or no amount recorded: not in the sums above';
  return [
    { cells: ['Money at stake (USD)', 'Total', 'This period', 'Carried over'], tone: 'bold', alignRight: true },
    money('Shortfalls: money missing or gone', m.shortfalls, 'high'),
    money('Surpluses: money extra', m.surpluses),
    {
      cells: [
        'Open breaks without a USD figure',
        m.noFigure.total,
        m.noFigure.inPeriod,
        m.noFigure.carriedOver,
        noFigure,
      ],
    },
    {
      cells: ['Open breaks that move no money', m.noMoney.total, m.noMoney.inPeriod, m.noMoney.carriedOver],
    },
    { cells: [STAKE_MEANING], tone: 'muted' },
  ];
}

/** Where every record of the period is: the detail folder, or on the detail workbook's own Summary its data sheets. */
export const detailPointer: SummarySection = ({ detail }) => {
  if (!detail) return [];
  if (detail.files === null)
    return [{ cells: ['Every record of the period', `on the data sheets here, and as gzip CSV in ${detail.dir}`] }];
  return [{ cells: ['Every record of the period', detail.dir] }, ...DETAIL_MEANING.map((line) => muted(line))];
};
