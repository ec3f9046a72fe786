/** The Summary's last section: how to read the workbook (colours, exact values, times, amounts, returning it). */
import { pair, section, type SummarySection } from './summary-layout.js';

const HOW_TO_READ: Array<[string, string]> = [
  [
    'Banner',
    'green: no open break; amber: open breaks, every one explained; red: unexplained open breaks or a failed run',
  ],
  [
    'Red rows (data sheets)',
    'a record with an open break; the "Open breaks" column names the rules; on the Breaks sheet, the Key links to ' +
      'that row',
  ],
  [
    'Exact values',
    'every amount is a number you can sum; where it has more digits than Excel keeps (15) or than its format shows, ' +
      'the last column "Exact values" (here: a cell note) holds the exact text',
  ],
  ['Times and days', 'UTC; the period names its first and last day, both included'],
  [
    'Amounts',
    "formatted at each currency's precision (partner currencies, exchange symbol scales; else 2 fiat / 8 crypto), " +
      'the same on every row',
  ],
  [
    'Breaks sheet',
    'fill in Owner, Explanation and Explained? (yes/no) and return the file: `ramp-recon breaks import <file>` ' +
      'records them',
  ],
  ['Sheets over 1,048,576 rows', 'continue on a sheet of the same name with (2), (3)...'],
];

export const howToRead: SummarySection = () => [
  section('How to read this workbook'),
  ...HOW_TO_READ.map(([label, text]) => pair(label, text)),
];
