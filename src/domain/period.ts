/** The reporting period: whole UTC days, `from` inclusive, `to` exclusive. */
export type { Break } from './index.js';

/** A reporting period of UTC days: `from` inclusive, `to` exclusive, both YYYY-MM-DD. */
export interface Period {
  from: string;
  to: string;
}
