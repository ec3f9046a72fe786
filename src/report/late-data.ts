/** What late data changed about earlier days, in words: the Summary's section, the e-mail's lines and the Breaks
 * sheet's mark.
 */
import { plural } from '../util/words.js';
import { lateCounts, sortLate, type LateBreak, type LateCounts } from '../domain/index.js';
import { ruleTitle } from '../rules/describe.js';

/** Late breaks the e-mail names one by one; the workbook's Summary lists up to CHANGES_LISTED. */
export const LATE_LISTED_IN_MAIL = 10;

/** What "late data" means, wherever the figure is shown. */
export const LATE_MEANING =
  'breaks of days before this period that this run opened, reopened or resolved because their records changed after ' +
  'those days were reconciled (a fill published late, a deposit listed late, a state or fee changed days later)';

/** "3 breaks of earlier days changed by late data: 2 opened, 1 resolved"; "none" when nothing changed. */
export function lateSentence(c: LateCounts): string {
  if (c.total === 0) return 'no break of an earlier day changed';
  const parts = [
    c.opened && `${c.opened} opened`,
    c.reopened && `${c.reopened} reopened`,
    c.resolved && `${c.resolved} resolved`,
  ].filter(Boolean);
  return `${plural(c.total, 'break')} of earlier days changed by late data: ${parts.join(', ')}`;
}

/** "2026-11-20: E_FILL_QTY 11234560000123 resolved (Fills do not add up to the order quantity)". */
export function lateLine(b: LateBreak): string {
  return `${b.day}: ${b.code} ${b.key} ${b.event} (${ruleTitle(b.code)})`;
}

/** The counts and the list (sorted, at most `limit`) the e-mail's digest stores. */
export function lateDigest(
  late: readonly LateBreak[],
  limit = LATE_LISTED_IN_MAIL,
): LateCounts & { breaks: LateBreak[] } {
  return { ...lateCounts(late), breaks: sortLate(late).slice(0, limit) };
}

/**
 * The Breaks sheet's "This period?" for a break the run opened or reopened on late data: "no: late data of 2026-11-20".
 */
export function latePeriodMark(b: LateBreak): string {
  return `no: ${b.event} by late data of ${b.day}`;
}
