/** The page both sources' clients return: one answer of a list, or of a lookup by id, with its records as received. */
import type { HttpResponse } from '../../http/client.js';

/**
 * One answer of a list endpoint (its records) or of a lookup by id (its one record), read
 * losslessly: an amount is never a JS number. Validation is per record (each source's
 * schemas.ts), so one bad record never costs its page.
 */
export interface Page {
  /** The request as the request meter names it: 'GET /fills', 'GET /orders/{id}'. */
  endpoint: string;
  /** The records of the answer as received (lossless values), one per element. */
  records: unknown[];
  response: HttpResponse;
}
