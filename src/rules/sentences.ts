/** The rules whose breaks read better in words of their own than in the generic sentence (src/rules/words.ts). */
import { RECORD_KINDS } from '../domain/index.js';
import { hours, more, unitWord, withUnit, type BreakWords } from './words.js';

/** "Deposit 123 (BTC) UNCONFIRMED for 50.9 hours (limit 24)", "Partner order ord_1 PENDING for ... and no longer found". */
export function staleSentence(b: BreakWords): string {
  const noun = RECORD_KINDS[b.entity]?.noun ?? 'record';
  const kind = b.entity === 'partnerOrder' ? 'Partner order' : `${noun[0]!.toUpperCase()}${noun.slice(1)}`;
  const currency = b.currency && b.entity !== 'partnerOrder' ? ` (${b.currency})` : '';
  const gone = b.facts.gone ? ' and no longer found by the partner API' : '';
  const state = b.facts.state ?? 'open';
  return `${kind} ${b.key}${currency} ${state} for ${hours(b.actual)} hours (limit ${b.expected ?? '?'})${gone}.`;
}

/** "No exchange deposit of 0.5 BTC for paid order ord_1 (transaction hash 0xab...)". */
export function depositMissingSentence(b: BreakWords): string {
  const hash = b.facts.txHash;
  const amount = b.expected ? ` of ${withUnit(b.expected, b.currency ?? 'text')}` : '';
  return `No exchange deposit${amount} for paid order ${b.key}${hash ? ` (transaction hash ${hash})` : ''}${more(b)}.`;
}

/** "Fill 123: order 456 of the fill is not stored (not yet looked up)". */
export function orphanSentence(b: BreakWords): string {
  return `Fill ${b.key}: ${b.check || 'its exchange order is not stored'}${more(b)}.`;
}

/** "BTC balance does not roll forward off by ...: expected closing ..., actual ... (first divergent day ...)". */
export function balanceRollSentence(b: BreakWords): string {
  const day = typeof b.detail.firstDivergentDay === 'string' ? b.detail.firstDivergentDay : null;
  const off = b.difference !== null ? ` off by ${withUnit(b.difference.trim(), unitWord(b))}` : '';
  const figures = `expected closing ${b.expected ?? '?'}, actual ${b.actual ?? '?'}`;
  return `${b.key} balance does not roll forward${off}: ${figures}${day ? ` (first divergent day ${day})` : ''}${more(b)}.`;
}

/** "exchange fills of 2026-11-05 not fully synced (exchange:fills:2026-11-05): ...". */
export function coverageSentence(b: BreakWords): string {
  const [source, stream, ...rest] = b.key.split(':');
  const what =
    stream === 'cursor' ? `${source} cursor ${rest.join(':')}` : `${source} ${stream ?? ''} of ${rest.join(':')}`;
  return `${what} not fully synced (${b.key}): ${b.check}${more(b)}.`;
}
