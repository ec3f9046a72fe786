/** The reporting period: whole UTC days, `from` inclusive, `to` exclusive. */

/** A reporting period of UTC days: `from` inclusive, `to` exclusive, both YYYY-MM-DD. */
export interface Period {
  from: string;
  to: string;
}
