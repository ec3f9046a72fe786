/** Partner sync step: the orders of each UTC day of the period, each day listed until its passes settle. */
import { addDays } from '../../util/dates.js';
import { allSettledOrThrow } from '../../util/side-by-side.js';
import { listClosedDays, saveCoverage } from '../../store/sync/partner-orders.js';
import { ORDERS_STREAM } from './streams.js';
import { dayIsOver } from './plan.js';
import type { DayCoverage, PartnerSync } from './sync-common.js';
import { readListing } from './sync-listing.js';

/** A day that can still drift is scanned until two consecutive passes agree, at most this often. */
const MAX_DAY_PASSES = 4;
/** Day listings in flight at once on a Postgres server. */
const DAYS_AT_ONCE = 3;

function sameSet(a: Set<string>, b: Set<string>): boolean {
  if (a.size !== b.size) return false;
  for (const v of a) if (!b.has(v)) return false;
  return true;
}

/**
 * The days of the period this sync lists: each one unless its stored listing is final (closed by an earlier run;
 * `relist` lists it anyway). A closed day keeps its coverage row, which is still true: it stays settled for
 * S_COVERAGE and the Coverage sheet shows the run that read it. The days skipped are noted on the result.
 */
export async function daysToList(env: PartnerSync, days: string[], relist: boolean): Promise<string[]> {
  const closed = relist ? new Set<string>() : await listClosedDays(env.db, env.account, ORDERS_STREAM, days);
  env.result.skippedDays.push(...days.filter((day) => closed.has(day)));
  return days.filter((day) => !closed.has(day));
}

/** Lists the given days (daysToList), each until its passes settle, and records each day's coverage. */
export async function syncDays(env: PartnerSync, listed: string[]): Promise<void> {
  // Days are independent listings: on a Postgres server a few run side by side (each page
  // commits on its own pooled session; the private rate limit still paces them all). PGlite has
  // one session, so there they run one after another. A failure stops new days from starting.
  const atOnce = env.parallelWrites ? DAYS_AT_ONCE : 1;
  let next = 0;
  let failed = false;
  // For the progress line: the days listed so far, as a part of the time from the first day to the end of the last.
  const span = daysSpan(env, listed);
  const worker = async () => {
    while (!failed && next < listed.length) {
      const day = listed[next++]!;
      try {
        env.result.coverage.push(await syncDay(env, day));
        span.done++;
        span.reach.cover((span.lengthMs * span.done) / listed.length);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await allSettledOrThrow(Array.from({ length: Math.min(atOnce, listed.length) }, worker));
  span.reach.end();
  env.result.coverage.sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
  if (env.result.skippedDays.length)
    env.logger.debug(
      { days: env.result.skippedDays },
      'partner days already read completely after they ended: not listed again',
    );
}

function daysSpan(env: PartnerSync, listed: string[]) {
  const fromMs = listed.length ? Date.parse(`${listed[0]}T00:00:00Z`) : 0;
  const toMs = listed.length ? Date.parse(`${addDays(listed[listed.length - 1]!, 1)}T00:00:00Z`) : 0;
  return { reach: env.progress.span('days', fromMs, toMs), lengthMs: toMs - fromMs, done: 0 };
}

/**
 * One UTC day. Offset paging over a newest-first list shifts when orders arrive during the scan
 * (a row repeats, or one is skipped). A day that is over cannot drift any more: one complete
 * pass settles it, unless the pass itself shows the list moved (a repeated row) or the date
 * filters did not apply (orders of other days). A day not over yet (today) is read again until
 * two consecutive passes return the same orders; every pass's orders are stored, so the union is
 * complete once it settles. A day that never settles is recorded settled=false (an S_COVERAGE
 * break). A settled day that was over is recorded closed: later runs skip it.
 */
async function syncDay(env: PartnerSync, day: string): Promise<DayCoverage> {
  const { params } = env.config.partner;
  env.progress.setStage(day);
  const query = { [params.from]: day, [params.to]: addDays(day, 1) };
  // The run's start: every pass of this run begins after it.
  const over = dayIsOver(day, env.now);
  const seen = new Set<string>();
  const passes: DayCoverage['passes'] = [];
  let previous: Set<string> | null = null;
  let settled = false;
  let pages = 0;
  let quarantined = 0;
  let outsideDay = 0;
  for (let pass = 1; pass <= MAX_DAY_PASSES; pass++) {
    const listing = await readListing(env, query, `orders of ${day}`, { day });
    if (listing.outsideDay > 0 && pass === 1)
      env.logger.warn(
        { day, outsideDay: listing.outsideDay, params: { from: params.from, to: params.to } },
        'the day listing returned orders created on other days: check partner.params (the wire names of the date filters) and whether the API treats "to" as exclusive',
      );
    pages += listing.pages;
    quarantined = listing.quarantined;
    outsideDay = listing.outsideDay;
    for (const id of listing.ids) seen.add(id);
    passes.push({
      pages: listing.pages,
      rows: listing.rows,
      distinct: listing.ids.size,
      duplicates: listing.duplicates,
      outsideDay: listing.outsideDay,
    });
    if (!listing.complete) break;
    if (over && pass === 1 && listing.duplicates === 0 && listing.outsideDay === 0) {
      settled = true;
      break;
    }
    if (previous && sameSet(previous, listing.ids)) {
      settled = true;
      break;
    }
    previous = listing.ids;
  }
  // A quarantined record keeps its day open: a later listing may find it fixed.
  const closed = settled && over && quarantined === 0 && outsideDay === 0;
  const coverage: DayCoverage = { day, pages, rows: seen.size, quarantined, settled, closed, passes };
  const detail = { passes, maxPasses: MAX_DAY_PASSES, ...(closed ? { closedAt: env.now.toISOString() } : {}) };
  await saveCoverage(
    env.db,
    env.account,
    env.runId,
    { day, stream: ORDERS_STREAM, pages, rows: seen.size, quarantined, settled, detail },
    env.now,
  );
  if (!settled)
    env.logger.warn(
      { day, passes },
      'partner orders of the day did not settle: the count kept changing between passes',
    );
  else env.logger.debug({ day, rows: seen.size, pages, passes: passes.length, closed }, 'partner day synced');
  return coverage;
}
