import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../helpers/sandbox.js';
import { storeKinds } from '../helpers/db.js';
import { type CliWorld, type Gates, brief, logLines, openCliWorld, runCli, startCli, waitFor } from './helpers.js';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

const SKIPPED = 'firing skipped: the previous run is still in progress';
const count = (stderr: string, msg: string) => logLines(stderr).filter((l) => l.msg === msg).length;

for (const kind of storeKinds) {
  describe(`ramp-recon schedule end to end [${kind}]`, () => {
    let sandbox: Sandbox;
    let gates: Gates;
    let env: NodeJS.ProcessEnv;
    let world: CliWorld | undefined;

    beforeAll(async () => {
      sandbox = await startSandbox({
        seed: 11,
        days: 2,
        ordersPerDay: 6,
        fillsPerOrder: 2,
        discrepancies: false,
        live: false,
        faults: 'none',
      });
      // A cron of every second: firings come much faster than a run finishes.
      world = await openCliWorld(kind, 'schedule', sandbox.env, {
        schedule: { cron: '* * * * * *', timezone: 'UTC', lookbackDays: 1 },
      });
      ({ gates, env } = world);
    });

    afterAll(async () => {
      await world?.close();
      await sandbox?.close();
    });

    it('fires by cron, never overlaps a slow run, and on SIGTERM during a run lets it finish and exits 0', async () => {
      const schedule = startCli(['schedule'], env);
      try {
        await waitFor('two scheduled runs', () => count(schedule.stderr(), 'scheduled run succeeded') >= 2, 120_000);

        // Hold the next run inside its sync: the every-second firings meanwhile must be skipped, not
        // overlapped (held at the gate, so this does not depend on how fast a run is).
        gates.close();
        // Whichever run asks the API next (the one in flight, or the next firing) is held there.
        const before = gates.requests;
        await waitFor('a run to reach the closed API gate', () => gates.requests > before, 30_000);
        const skipped = count(schedule.stderr(), SKIPPED);
        await waitFor(
          'a firing skipped while the run is held',
          () => count(schedule.stderr(), SKIPPED) > skipped,
          10_000,
        );
        expect(count(schedule.stderr(), 'scheduled run succeeded')).toBe(
          count(schedule.stderr(), 'schedule fired') - 1,
        );

        // Then ask the scheduler to stop while that run is in progress.
        schedule.child.kill('SIGTERM');
        await waitFor('the scheduler to acknowledge SIGTERM', () => /received SIGTERM/.test(schedule.stderr()), 10_000);
        await new Promise((r) => setTimeout(r, 1_500));
        expect(schedule.child.exitCode).toBeNull(); // still finishing the run in progress
        const firedAtSignal = count(schedule.stderr(), 'schedule fired');
        gates.open();
        const result = await schedule.done;
        expect(result.code, brief(result.stderr)).toBe(0);
        expect(count(result.stderr, 'schedule fired')).toBe(firedAtSignal); // no firing after the signal
        expect(count(result.stderr, 'scheduled run succeeded')).toBe(firedAtSignal);
        expect(count(result.stderr, 'schedule stopped')).toBe(1);
      } finally {
        if (schedule.child.exitCode === null) schedule.child.kill('SIGKILL');
      }

      const listed = await runCli(['runs', '--json'], env);
      expect(listed.code, listed.stderr).toBe(0);
      const runs = (
        JSON.parse(listed.stdout) as Array<{ trigger: string; status: string; startedAt: string; finishedAt: string }>
      ).reverse();
      expect(runs.length).toBeGreaterThanOrEqual(3);
      expect(runs.every((r) => r.trigger === 'schedule' && r.status === 'succeeded')).toBe(true);
      for (let i = 1; i < runs.length; i++) expect(runs[i]!.startedAt >= runs[i - 1]!.finishedAt).toBe(true);
    }, 240_000);
  });
}
