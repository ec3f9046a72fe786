/** Partner sync step: buy quotes of the configured samples, for fee tracking. */
import { HttpAuthError, HttpStatusError, type HttpResponse } from '../../http/client.js';
import { saveQuote } from '../../store/sync/partner-orders.js';
import { checkAbort } from '../common/abort.js';
import { quoteSchema, formatPartnerIssues } from './schemas.js';
import { quoteToRow } from './transform.js';
import { quarantineBody, SOURCE, type PartnerSync } from './sync-common.js';

/** The quote's currency objects come wrapped in an array; the row keeps only codes and amounts. */
export async function syncQuotes(env: PartnerSync): Promise<void> {
  for (const sample of env.config.partner.quotes) {
    checkAbort(env.signal, SOURCE);
    const query = {
      quoteCurrencyCode: sample.quoteCurrencyCode,
      baseCurrencyCode: sample.baseCurrencyCode,
      quoteCurrencyAmount: sample.quoteCurrencyAmount,
      paymentMethod: sample.paymentMethod,
      countryCode: sample.countryCode,
    };
    let response: HttpResponse;
    try {
      response = await env.client.quoteBuy(query, env.signal);
    } catch (err) {
      // A quote is a sample for fee tracking: a refused pair must not fail the run; bad keys must.
      if (err instanceof HttpAuthError || !(err instanceof HttpStatusError)) throw err;
      env.result.quoteErrors++;
      env.logger.warn(
        { quote: query, status: err.status, err: { message: err.message } },
        'buy quote refused; skipped',
      );
      continue;
    }
    const parsed = quoteSchema.safeParse(response.body);
    if (!parsed.success) {
      const recordKey = `${sample.quoteCurrencyCode}-${sample.baseCurrencyCode}-${sample.quoteCurrencyAmount}`;
      await quarantineBody(env, '/quote/buy', 'partner_quote', {
        recordKey,
        position: null,
        rawText: response.text,
        reason: formatPartnerIssues(parsed.error),
      });
      continue;
    }
    const row = quoteToRow(parsed.data, response.body, { paymentMethod: sample.paymentMethod });
    if (await saveQuote(env.db, env.account, env.runId, env.now, row)) env.result.quotes++;
  }
}
