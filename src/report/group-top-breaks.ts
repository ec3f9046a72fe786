/** The group e-mail's open breaks to look at first, over every account: pure, from each account's stored digest. */
import { Decimal } from '../decimal/decimal.js';
import { SEVERITY_RANK, type DigestBreak, type ReportDigest, type Severity } from '../domain/index.js';
import { DIGEST_BREAKS } from './digest.js';

/** A break of the group's list: an account's digest break, with its account. */
export type GroupBreak = DigestBreak & { account: string };

const size = (b: DigestBreak) => (b.usdImpact === null ? new Decimal(0) : new Decimal(b.usdImpact).abs());
const rank = (b: DigestBreak) => SEVERITY_RANK[b.severity as Severity] ?? 9;

/**
 * The group's top breaks in the order each account's digest chose its own (digest.ts topBreaks): those with a USD
 * impact first, the largest absolute impact first, explained or not; then the others, the unexplained first; ties by
 * the oldest, severity, code, key and account. Each account's list holds its first ones, so the first of all of them
 * are the group's.
 */
export function groupTopBreaks(
  accounts: ReadonlyArray<{ account: string; digest: Pick<ReportDigest, 'topBreaks'> | null }>,
  limit = DIGEST_BREAKS,
): GroupBreak[] {
  const all = accounts.flatMap((a) => (a.digest?.topBreaks ?? []).map((b) => ({ ...b, account: a.account })));
  return all
    .sort(
      (x, y) =>
        Number(x.why !== 'largest') - Number(y.why !== 'largest') ||
        size(y).comparedTo(size(x)) ||
        (x.why === 'largest' ? 0 : Number(x.explained) - Number(y.explained)) ||
        y.ageDays - x.ageDays ||
        rank(x) - rank(y) ||
        x.code.localeCompare(y.code) ||
        x.key.localeCompare(y.key) ||
        x.account.localeCompare(y.account),
    )
    .slice(0, limit);
}
