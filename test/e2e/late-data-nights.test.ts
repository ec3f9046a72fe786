import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type LateEvent, type LateRelease, type Sandbox } from '../helpers/sandbox.js';
import { storeKinds } from '../helpers/db.js';
import { breakKey, LATE_NIGHTS_SANDBOX, truthAt } from '../helpers/late-nights.js';
import { brief, openCliWorld, ROOT, runCli, type CliWorld } from './helpers.js';
import { MS_PER_DAY } from '../../src/util/dates.js';

/**
 * Issue 23, end to end: four nights of a plain `ramp-recon run` from cron (no flags: yesterday of
 * the night's calendar), while the sandbox changes the past between nights the way the real
 * services do (late events on records two days old and older, whatever night it is). After each
 * night the open breaks equal the sandbox's truth for that night, every break open since an earlier
 * night keeps its first-seen run, and the JSON names exactly the breaks of earlier days that late
 * data opened or resolved. On today's main the late ones stay as night 1 left them.
 */
const CLOCKED_CLI = join(ROOT, 'test', 'e2e', 'clocked-cli.mjs');
const NIGHT_MS = MS_PER_DAY;
/** Night 1 at 02:00 UTC ten days ago: every night lies in the past, on a calendar of its own. */
// A fixed night, whatever today is: the sandbox's records of a day depend on its date, and the late events need a
// record of the right kind on the day they age (a date chosen from today failed on 2026-11-26: no fill fitted).
// The CLI runs on the sandbox's clock (clocked-cli.mjs), so the night can be any past date.
const NIGHT_1 = new Date('2026-11-16T02:00:00Z');
const SANDBOX = LATE_NIGHTS_SANDBOX;

interface Summary {
  runId: string;
  status: string;
  period: { from: string; to: string };
  breaks: Array<{ code: string; key: string; firstSeenRun: string; inPeriod: boolean }>;
  lateData: {
    total: number;
    opened: number;
    reopened: number;
    resolved: number;
    breaks: Array<{ code: string; key: string; day: string; event: string }>;
  };
}

const key = breakKey;

for (const kind of storeKinds) {
  describe(`late data over four nights of plain \`run\` [${kind}]`, { timeout: 300_000 }, () => {
    let sandbox: Sandbox;
    let world: CliWorld | undefined;

    beforeAll(async () => {
      // Live: the clock runs on from NIGHT_1 (and elapse() jumps it a night ahead), as the CLI's does.
      sandbox = await startSandbox({
        ...SANDBOX,
        discrepancies: true,
        lateEvents: true,
        lateEventsAgeDays: 2,
        live: true,
        faults: 'none',
        now: NIGHT_1,
      });
      world = await openCliWorld(kind, 'late-nights', sandbox.env, { partner: { feeRate: sandbox.partnerFeeRate } });
    });

    afterAll(async () => {
      await world?.close();
      await sandbox?.close();
    });

    /** A night: `ramp-recon run` on the sandbox's calendar, its JSON summary. */
    const night = async (): Promise<Summary & { now: number }> => {
      const now = sandbox.data.clock();
      const env = { ...world!.env, RAMP_RECON_TEST_CLOCK_OFFSET_MS: String(now - Date.now()) };
      const r = await runCli(['run', '--json', '--no-email'], env, ROOT, CLOCKED_CLI);
      expect(r.code, brief(r.stderr)).toBe(0);
      return { ...(JSON.parse(r.stdout) as Summary), now };
    };
    /** The sandbox's truth at `now`: its planted and late breaks due by then. */
    const truth = (now: number, snapshots: number): string[] => truthAt(sandbox, now, snapshots);
    const release = (...events: LateEvent[]): LateRelease[] =>
      events.map((e) => {
        const r = sandbox.releaseLate(e);
        expect(r, e).toBeDefined();
        return r!;
      });
    const lateOf = (s: Summary) => s.lateData.breaks.map((b) => `${b.event} ${b.code} ${b.key}`).sort();
    const releasedBreaks = (rs: LateRelease[]) =>
      rs
        .flatMap((r) => [...r.opened.map((b) => `opened ${key(b)}`), ...r.resolved.map((b) => `resolved ${key(b)}`)])
        .sort();

    it('after each night the open breaks are the truth of that night, first-seen runs kept; late data is named', async () => {
      // Night 1: the account's first judgement takes every stored record (the held late cases too).
      const n1 = await night();
      expect(n1.period.from).toBe(new Date(NIGHT_1.getTime() - MS_PER_DAY).toISOString().slice(0, 10));
      expect(n1.breaks.map(key).sort()).toEqual(truth(n1.now, 1));
      for (const c of [
        'publish-fill',
        'list-deposit',
        'complete-order',
        'reject-deposit',
        'confirm-deposit',
        'refund-withdrawal',
      ])
        expect(
          sandbox.expectedBreaks().some((b) => b.case === c),
          c,
        ).toBe(true);
      expect(n1.lateData.total).toBe(0);
      const firstSeen = new Map(n1.breaks.map((b) => [key(b), b.firstSeenRun]));

      // Night 2: a fill published two days late, an order completed days later at another fee, the
      // deposit that settled a paid order rejected, a deposit listed two days late.
      sandbox.elapse(NIGHT_MS);
      const second = release('publish-fill', 'complete-order', 'reject-deposit', 'list-deposit');
      const n2 = await night();
      expect(n2.breaks.map(key).sort()).toEqual(truth(n2.now, 2));
      expect(lateOf(n2)).toEqual(releasedBreaks(second));
      expect(n2.lateData).toMatchObject({ opened: 2, resolved: 4, reopened: 0 });
      for (const b of n2.breaks) if (firstSeen.has(key(b))) expect(b.firstSeenRun, key(b)).toBe(firstSeen.get(key(b)));

      // Night 3: state changes days later, on records older than the look-back by now.
      sandbox.elapse(NIGHT_MS);
      const third = release('confirm-deposit', 'refund-withdrawal');
      const n3 = await night();
      expect(n3.breaks.map(key).sort()).toEqual(truth(n3.now, 3));
      expect(lateOf(n3)).toEqual(releasedBreaks(third));
      for (const b of n3.breaks) if (firstSeen.has(key(b))) expect(b.firstSeenRun, key(b)).toBe(firstSeen.get(key(b)));

      // Night 4: the deposit behind the planted roll-forward break is listed late, stamped inside a pair
      // of snapshots two nights back: that pair is judged again and the break resolves.
      sandbox.elapse(NIGHT_MS);
      const roll = n3.breaks.find((b) => b.code === 'E_BALANCE_ROLL');
      expect(roll, 'the planted E_BALANCE_ROLL is open after night 3').toBeDefined();
      sandbox.fixDiscrepancy('E_BALANCE_ROLL');
      const n4 = await night();
      expect(n4.breaks.map(key).sort()).toEqual(truth(n4.now, 4));
      expect(lateOf(n4)).toEqual([`resolved ${key(roll!)}`]);
      for (const b of n4.breaks) if (firstSeen.has(key(b))) expect(b.firstSeenRun, key(b)).toBe(firstSeen.get(key(b)));
    });
  });
}
