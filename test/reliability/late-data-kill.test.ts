import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../sandbox/index.js';
import { MS_PER_DAY } from '../../src/util/dates.js';
import { storeKinds } from '../helpers/db.js';
import {
  brief,
  logLines,
  openCliWorld,
  ROOT,
  runCli,
  startCli,
  startGateProxy,
  waitFor,
  type CliWorld,
  type GateProxy,
} from '../e2e/helpers.js';
import { recordFigure } from './figures.js';

/**
 * Issue 23: a change is recorded in the transaction that writes it, so a run killed with SIGKILL
 * after its sync committed a late change and before its reconcile judged it loses nothing: the
 * next run (whose exchange sync has nothing new to fetch, the cursors having moved) judges it.
 */
const CLOCKED_CLI = join(ROOT, 'test', 'e2e', 'clocked-cli.mjs');
// A fixed night, whatever today is: the sandbox's records of a day depend on its date, and the late events need a
// record of the right kind on the day they age (a date chosen from today failed on 2026-11-26: no fill fitted).
// The CLI runs on the sandbox's clock (clocked-cli.mjs), so the night can be any past date.
const NIGHT_1 = new Date('2026-11-15T02:00:00Z');
const RUN = ['run', '--json', '--no-email', '--wait'];

interface Summary {
  runId: string;
  status: string;
  breaks: Array<{ code: string; key: string }>;
  lateData: { breaks: Array<{ code: string; key: string; event: string }> };
}

for (const kind of storeKinds) {
  describe(`kill -9 between a late change's sync and its reconcile [${kind}]`, () => {
    let sandbox: Sandbox;
    let world: CliWorld | undefined;
    const env = () => ({ ...world!.env, RAMP_RECON_TEST_CLOCK_OFFSET_MS: String(sandbox.data.clock() - Date.now()) });

    beforeAll(async () => {
      sandbox = await startSandbox({
        seed: 29,
        days: 4,
        ordersPerDay: 20,
        exchangeOrdersPerDay: 16,
        fillsPerOrder: 2,
        lateEvents: true,
        lateEventsAgeDays: 2,
        live: true,
        faults: 'none',
        now: NIGHT_1,
      });
      world = await openCliWorld(kind, 'late-kill', sandbox.env, { partner: { feeRate: sandbox.partnerFeeRate } });
    });

    afterAll(async () => {
      await world?.close();
      await sandbox?.close();
    });

    it('the next run judges the late fill the killed run stored', async () => {
      const first = await runCli(RUN, env(), ROOT, CLOCKED_CLI);
      expect(first.code, brief(first.stderr)).toBe(0);
      const held = sandbox.expectedBreaks().find((b) => b.case === 'publish-fill')!;
      expect((JSON.parse(first.stdout) as Summary).breaks.map((b) => `${b.code} ${b.key}`)).toContain(
        `${held.code} ${held.key}`,
      );

      sandbox.elapse(MS_PER_DAY);
      sandbox.releaseLate('publish-fill');
      // The Partner API behind a gate of its own, closed: the exchange sync stores the late fill (and
      // moves the fills cursor past it) and commits; the partner sync then waits on its first request,
      // and the run is killed there, before any reconcile.
      const partnerGate: GateProxy = await startGateProxy(new URL(sandbox.env.PARTNER_API_URL!).origin);
      try {
        partnerGate.close();
        const child = startCli(
          RUN,
          { ...env(), PARTNER_API_URL: partnerGate.via(sandbox.env.PARTNER_API_URL!) },
          ROOT,
          CLOCKED_CLI,
        );
        await waitFor(
          'the partner sync to wait at the gate',
          () =>
            partnerGate.requests > 0 &&
            logLines(child.stderr()).some((l) => l.msg === 'stage finished' && l.stage === 'sync.exchange'),
        );
        child.child.kill('SIGKILL');
        const killed = await child.done;
        expect(killed.signal, brief(killed.stderr)).toBe('SIGKILL');
        expect(logLines(killed.stderr).some((l) => l.msg === 'stage started' && l.stage === 'reconcile')).toBe(false);
      } finally {
        partnerGate.open();
        await partnerGate.stop();
      }

      const next = await runCli(RUN, env(), ROOT, CLOCKED_CLI);
      expect(next.code, brief(next.stderr)).toBe(0);
      const summary = JSON.parse(next.stdout) as Summary;
      expect(summary.status).toBe('succeeded');
      // Judged by the next run, whose sync fetched nothing of it: the break of two days back resolves.
      expect(summary.breaks.map((b) => `${b.code} ${b.key}`)).not.toContain(`${held.code} ${held.key}`);
      expect(summary.lateData.breaks).toContainEqual(
        expect.objectContaining({ code: held.code, key: held.key, event: 'resolved' }),
      );
      recordFigure({
        kind: 'kill',
        name: `after sync, before reconcile, with a late fill [${kind}]`,
        db: kind,
        lost: 0,
        duplicated: 0,
      });
    });
  });
}
