import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  utimesSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../sandbox/index.js';
import { createTestStore, storeKinds, type TestStore } from '../helpers/db.js';
import { CLI, brief, childEnv, runCli, startCli } from '../e2e/helpers.js';
import { openStore, type Store } from '../../src/store/db/database.js';
import { recordFigure } from './figures.js';

/**
 * Issue 17, item 5: kills leave no traces. The CLI's `run` is killed with SIGKILL while its
 * workbook is being written (the moment its `.partial` file appears in REPORTS_DIR); once that file is a day old the
 * next run, of another period, must remove it (issue 42: a fresher one may be another worker's, being written), and
 * mark the killed run failed in stage `report`.
 */

/** Sets the times of a file, or of a folder and every file in it, `ms` back. */
function age(path: string, ms: number): void {
  const t = new Date(Date.now() - ms);
  if (statSync(path).isDirectory()) for (const name of readdirSync(path)) age(join(path, name), ms);
  utimesSync(path, t, t);
}
describe.skipIf(!existsSync(CLI))('no leftovers after a kill -9 during report', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({
      seed: 5,
      days: 2,
      ordersPerDay: 20,
      exchangeOrdersPerDay: 300,
      fillsPerOrder: 3,
      discrepancies: true,
      stateChanges: false,
      live: false,
      faults: 'none',
    });
  });
  afterAll(() => sb?.close());

  for (const kind of storeKinds) {
    it(`the next run removes the killed report's day-old .partial workbook, not a fresh one, and names the stage the killed run was in [${kind}]`, async () => {
      const dir = mkdtempSync(join(tmpdir(), `rr-leftovers-${kind}-`));
      const reports = join(dir, 'reports');
      let pg: TestStore | undefined;
      try {
        if (kind === 'postgres') {
          pg = await createTestStore('postgres');
          await pg.store.close();
        }
        const env = childEnv({
          ...sb.env,
          DATABASE_URL: pg?.url,
          RAMP_RECON_DATA_DIR: join(dir, 'data'),
          REPORTS_DIR: reports,
          LOG_LEVEL: 'warn',
        });
        const open = (): Promise<Store> =>
          pg ? openStore({ url: pg.url, schema: pg.schema }) : openStore({ dataDir: join(dir, 'data') });

        // The reports folder exists before the run, so it can be watched from the start.
        mkdirSync(reports, { recursive: true });
        // The killed run: the two days before yesterday (the sandbox's history), a workbook of thousands of rows.
        const day = (back: number) => new Date(Date.now() - back * 86_400_000).toISOString().slice(0, 10);
        const cli = startCli(['run', '--from', day(3), '--to', day(1), '--json', '--no-email'], env);
        const partials = () => readdirSync(reports).filter((n) => n.endsWith('.partial'));
        const watcher = watch(reports, () => {
          if (partials().length) cli.child.kill('SIGKILL');
        });
        let killed;
        try {
          killed = await cli.done;
        } finally {
          watcher.close();
        }
        expect(killed.signal, brief(killed.stderr)).toBe('SIGKILL');
        const left = partials();
        expect(left.length, 'the killed report left its .partial workbook').toBe(1);

        // A day later, the next run, of another period (yesterday by default), while another worker sharing the
        // folder is writing its own workbook (a fresh partial file of process 1 on another host).
        age(join(reports, left[0]!), 24 * 3600_000 + 60_000);
        const foreign = 'other.xlsx.worker-b-1-0123abcd.partial';
        writeFileSync(join(reports, foreign), 'half a workbook');
        const next = await runCli(['run', '--json', '--no-email'], env);
        expect(next.code, brief(next.stderr)).toBe(0);
        expect(partials()).toEqual([foreign]);
        expect(readdirSync(reports).filter((n) => n.endsWith('.xlsx'))).toHaveLength(1);

        const store = await open();
        try {
          const rows = await store.db
            .selectFrom('run')
            .select(['id', 'status', 'failed_stage', 'error', 'period_from'])
            .orderBy('started_at')
            .execute();
          expect(rows).toHaveLength(2);
          expect(rows[0]).toMatchObject({ status: 'failed', failed_stage: 'report', period_from: day(3) });
          expect(rows[0]!.error).toMatch(/^interrupted in stage report: /);
          expect(rows[1]).toMatchObject({ status: 'succeeded', failed_stage: null });
        } finally {
          await store.close();
        }
        recordFigure({
          kind: 'kill',
          name: `report: kill -9 while the workbook is written [${kind}]`,
          db: kind,
          lost: 0,
          duplicated: 0,
        });
      } finally {
        await pg?.drop().catch(() => {});
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
