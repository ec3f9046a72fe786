/** The group e-mail's open breaks to look at first, over every account: pure, from each account's stored digest. */
import { Decimal } from '../decimal/decimal.js';
import type { DigestBreak, ReportDigest } from '../domain/index.js';
import { DIGEST_BREAKS } from './digest.js';

/** A break of the group's list: an account's digest break, with its account. */
export type GroupBreak = DigestBreak & { account: string };

const size = (b: DigestBreak) => (b.usdImpact === null ? new Decimal(0) : new Decimal(b.usdImpact).abs());

/**
 * The group's top breaks in the order each account's digest chose its own (unexplained first, the largest absolute
 * USD impact, then the oldest): each account's list holds its first ones, so the first of all of them are the group's.
 */
export function groupTopBreaks(
  accounts: ReadonlyArray<{ account: string; digest: Pick<ReportDigest, 'topBreaks'> | null }>,
  limit = DIGEST_BREAKS,
): GroupBreak[] {
  const all = accounts.flatMap((a) => (a.digest?.topBreaks ?? []).map((b) => ({ ...b, account: a.account })));
  return all
    .sort(
      (x, y) =>
        Number(x.explained) - Number(y.explained) ||
        size(y).comparedTo(size(x)) ||
        y.ageDays - x.ageDays ||
        x.account.localeCompare(y.account),
    )
    .slice(0, limit);
}
