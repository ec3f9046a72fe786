/** The break workflow's shapes (docs/working-breaks.md): a returned workbook's row, which the workbook reader fills
 * and the import of a returned workbook reads.
 */

/** One row of a returned Breaks sheet (cells as trimmed text, null when empty). */
export interface ReturnedRow {
  /** The sheet's row number, for messages ("row 12"). */
  row: number;
  code: string;
  key: string;
  /** "Amounts as reported": `expected | actual | difference | currency` when the workbook was written. */
  amounts: string | null;
  owner: string | null;
  explanation: string | null;
  /** "Explained?": yes / no as typed (the import checks the value). */
  explained: string | null;
}
