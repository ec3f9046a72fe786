import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.js';
import { createTestStore, storeKinds, type TestStore } from '../helpers/db.js';
import { brief, childEnv, gateSandboxEnv, logLines, runCli, startCli, waitFor, type Gates } from './helpers.js';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

const count = (stderr: string, msg: string) => logLines(stderr).filter((l) => l.msg === msg).length;

for (const kind of storeKinds) {
  describe(`ramp-recon schedule end to end [${kind}]`, () => {
    let sandbox: Sandbox;
    let gates: Gates;
    let pg: TestStore | undefined;
    let dir: string;
    let env: NodeJS.ProcessEnv;

    beforeAll(async () => {
      sandbox = await startSandbox({ seed: 11, days: 2, ordersPerDay: 6, fillsPerOrder: 2, discrepancies: false, live: false, faults: 'none' });
      gates = await gateSandboxEnv(sandbox.env);
      dir = mkdtempSync(join(tmpdir(), `rr-e2e-schedule-${kind}-`));
      // A cron of every second: firings come much faster than a run finishes.
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ schedule: { cron: '* * * * * *', timezone: 'UTC', lookbackDays: 1 } }));
      if (kind === 'postgres') pg = await createTestStore('postgres');
      env = childEnv({
        ...gates.env,
        RAMP_RECON_DATA_DIR: join(dir, 'data'),
        REPORTS_DIR: join(dir, 'reports'),
        RAMP_RECON_CONFIG: join(dir, 'config.json'),
        DATABASE_URL: pg?.url,
        LOG_LEVEL: 'info',
      });
    });

    afterAll(async () => {
      gates?.open();
      await gates?.stop();
      await sandbox?.close();
      await pg?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('fires by cron, never overlaps a slow run, and on SIGTERM during a run lets it finish and exits 0', async () => {
      const schedule = startCli(['schedule'], env);
      try {
        await waitFor('two scheduled runs', () => count(schedule.stderr(), 'scheduled run succeeded') >= 2, 120_000);
        // Every second fired, but a run lasts longer: those firings were skipped, not overlapped.
        expect(count(schedule.stderr(), 'firing skipped: the previous run is still in progress')).toBeGreaterThan(0);

        // Hold the next run inside its sync, then ask the scheduler to stop.
        gates.close();
        const fired = count(schedule.stderr(), 'schedule fired');
        const before = gates.requests;
        await waitFor('the next run to reach the API', () => count(schedule.stderr(), 'schedule fired') > fired && gates.requests > before, 30_000);
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
      const runs = (JSON.parse(listed.stdout) as Array<{ trigger: string; status: string; startedAt: string; finishedAt: string }>).reverse();
      expect(runs.length).toBeGreaterThanOrEqual(3);
      expect(runs.every((r) => r.trigger === 'schedule' && r.status === 'succeeded')).toBe(true);
      for (let i = 1; i < runs.length; i++) expect(runs[i]!.startedAt >= runs[i - 1]!.finishedAt).toBe(true);
    }, 240_000);
  });
}
