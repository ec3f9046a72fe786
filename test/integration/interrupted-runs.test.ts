import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore, storeKinds, type TestStore } from '../helpers/db.js';
import { createRun, failInterruptedRuns, getRun, markStageStarted, recordStage } from '../../src/store/runs/runs.js';

/** Issue 17 item 5: a run left 'running' by a process that died is marked failed in the stage it was in. */
for (const kind of storeKinds) {
  describe(`interrupted runs [${kind}]`, () => {
    let t: TestStore;
    beforeAll(async () => {
      t = await createTestStore(kind);
    });
    afterAll(() => t?.drop());

    it('names the last stage started and not finished, or "run" between stages', async () => {
      const db = t.store.db;
      const at = new Date('2026-11-20T02:00:00Z');
      const inStage = await createRun(db, { account: 'default', command: 'run', startedAt: at });
      await markStageStarted(db, inStage, 'sync.exchange');
      await recordStage(db, inStage, 'sync.exchange', { startedAt: at, finishedAt: at, status: 'succeeded' });
      await markStageStarted(db, inStage, 'report');
      const between = await createRun(db, {
        account: 'default',
        command: 'sync',
        startedAt: new Date('2026-11-21T02:00:00Z'),
      });
      await markStageStarted(db, between, 'sync.partner');
      await recordStage(db, between, 'sync.partner', { startedAt: at, finishedAt: at, status: 'succeeded' });

      const marked = await failInterruptedRuns(db, 'default', new Date('2026-11-22T02:00:00Z'));
      expect(marked.sort((a, b) => a.id.localeCompare(b.id))).toEqual([
        { id: inStage, failedStage: 'report' },
        { id: between, failedStage: 'run' },
      ]);
      const a = await getRun(db, inStage);
      expect(a).toMatchObject({ status: 'failed', failed_stage: 'report', current_stage: null });
      expect(a!.error).toMatch(/^interrupted in stage report: the process ended/);
      const b = await getRun(db, between);
      expect(b).toMatchObject({ status: 'failed', failed_stage: 'run' });
      expect(b!.error).toMatch(/^interrupted: the process ended/);
    });
  });
}
