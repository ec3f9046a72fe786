import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_CLOCK_START } from '../helpers/clock.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { openStore } from '../../src/store/db/database.js';
import { addDays, toDay } from '../../src/util/dates.js';
import { storeKinds, type StoreKind } from '../helpers/db.js';
import { brief, openCliWorld, runCli, type CliWorld } from './helpers.js';

interface Summary {
  runId: string;
  status: string;
  breaks: Array<{ code: string; key: string; status: string; firstSeenRun: string }>;
}

/** A rule's result on a finished run, read from the store the CLI wrote (after the child exited). */
async function ruleResult(
  kind: StoreKind,
  world: CliWorld,
  runId: string,
  code: string,
): Promise<{ status: string; checked: number; reason?: string }> {
  const store = kind === 'postgres' ? world.pg!.store : await openStore({ dataDir: join(world.dir, 'data') });
  try {
    const row = await store.db
      .selectFrom('run')
      .select('rule_results')
      .where('id', '=', runId)
      .executeTakeFirstOrThrow();
    const list = (typeof row.rule_results === 'string' ? JSON.parse(row.rule_results) : row.rule_results) as Array<{
      code: string;
      status: string;
      checked: number;
      reason?: string;
    }>;
    return list.find((r) => r.code === code)!;
  } finally {
    if (kind !== 'postgres') await store.close();
  }
}

async function sync(world: CliWorld, args: string[]): Promise<void> {
  const r = await runCli(['sync', ...args], world.env);
  expect(r.code, brief(r.stderr)).toBe(0);
}

async function cli(world: CliWorld, args: string[]): Promise<Summary> {
  const r = await runCli([...args, '--json'], world.env);
  expect(r.code, brief(r.stderr)).toBe(0);
  return JSON.parse(r.stdout) as Summary;
}

const has = (s: Summary, code: string, key: string) =>
  s.breaks.some((b) => b.code === code && b.key === key && b.status === 'open');

/**
 * P_WEBHOOK_GAP judges an order in the first run after its last state change is past the 3-day
 * retry window, whatever day it was created: the planted order was created four days back, the
 * period is the last day, and no webhook is delivered at all.
 */
const DUE_IN_MS = 30_000;

for (const kind of storeKinds) {
  describe(`P_WEBHOOK_GAP through the CLI [${kind}]`, { timeout: 240_000 }, () => {
    let sandbox: Sandbox;
    let world: CliWorld;
    const today = toDay(new Date());
    const lastDay = ['--from', addDays(today, -1), '--to', addDays(today, 1)];

    beforeAll(async () => {
      sandbox = await startSandbox({
        seed: 31,
        days: 2,
        ordersPerDay: 4,
        fillsPerOrder: 1,
        exchangeOrdersPerDay: 4,
        live: false,
        faults: 'none',
        // The window is DUE_IN_MS from here: the sandbox's now is the test clock's start (test/helpers/sandbox.ts),
        // some seconds before this file got here.
        webhookGapDueInMs: DUE_IN_MS + (Date.now() - TEST_CLOCK_START.getTime()),
      });
      world = await openCliWorld(kind, 'webhook-gap', sandbox.env, { webhooks: { port: 0 } });
    });

    afterAll(async () => {
      await world?.close();
      await sandbox?.close();
    });

    it('not checked before the window passes, a break in the first run after, kept open by a re-run', async () => {
      const planted = sandbox.expectedBreaks().find((b) => b.code === 'P_WEBHOOK_GAP' && b.dueAt)!;
      const dueAt = Date.parse(planted.dueAt!);
      // The order's own day (four days back) is synced; the reconciled period is the last day.
      await sync(world, ['--from', addDays(today, -5), '--to', addDays(today, 1)]);
      const before = await cli(world, ['reconcile', ...lastDay]);
      expect(Date.now(), 'the first reconcile must finish before the window passes (slow machine?)').toBeLessThan(
        dueAt,
      );
      expect(has(before, 'P_WEBHOOK_GAP', planted.key)).toBe(false);
      // Nothing is past the window yet: the rule judged nothing, so it says so.
      expect(await ruleResult(kind, world, before.runId, 'P_WEBHOOK_GAP')).toMatchObject({ status: 'not_checked' });

      await new Promise((r) => setTimeout(r, Math.max(0, dueAt - Date.now() + 500)));
      const after = await cli(world, ['reconcile', ...lastDay]);
      expect(has(after, 'P_WEBHOOK_GAP', planted.key)).toBe(true);
      expect(await ruleResult(kind, world, after.runId, 'P_WEBHOOK_GAP')).toMatchObject({ status: 'breaks' });

      // Re-running the same period judges it again: the same break, still open, first seen by `after`.
      const again = await cli(world, ['reconcile', ...lastDay]);
      const gap = again.breaks.find((b) => b.code === 'P_WEBHOOK_GAP' && b.key === planted.key);
      expect(gap).toMatchObject({ status: 'open', firstSeenRun: after.runId });
      expect(
        again.breaks
          .filter((b) => b.code === 'P_WEBHOOK_GAP')
          .map((b) => b.key)
          .sort(),
      ).toEqual(
        after.breaks
          .filter((b) => b.code === 'P_WEBHOOK_GAP')
          .map((b) => b.key)
          .sort(),
      );
    });
  });
}

/**
 * S_COVERAGE for every day and stream of the period that no sync settled: a partner day the sync
 * did not list, exchange streams never synced, a fills cursor stuck while the API has newer
 * fills (the sandbox's /fills ignores the execId bounds). A later sync that does not re-read the
 * missing day leaves its break open; the one that reads it resolves it.
 */
for (const kind of storeKinds) {
  describe(`S_COVERAGE through the CLI [${kind}]`, { timeout: 300_000 }, () => {
    let sandbox: Sandbox;
    let world: CliWorld;
    const today = toDay(new Date());
    const first = addDays(today, -3);
    const period = ['--from', first, '--to', addDays(today, 1)];
    const coverage = (s: Summary) =>
      s.breaks
        .filter((b) => b.code === 'S_COVERAGE' && b.status === 'open')
        .map((b) => b.key)
        .sort();

    beforeAll(async () => {
      sandbox = await startSandbox({
        seed: 32,
        days: 3,
        ordersPerDay: 3,
        exchangeOrdersPerDay: 250,
        fillsPerOrder: 3,
        depositsPerDay: 1,
        withdrawalsPerDay: 1,
        live: false,
        faults: 'none',
        fillsIgnoreExecIds: true,
      });
      world = await openCliWorld(kind, 'coverage', sandbox.env, {});
    });

    afterAll(async () => {
      await world?.close();
      await sandbox?.close();
    });

    it('finds the unsynced day and streams and the stuck cursor; only a sync that reads them resolves them', async () => {
      expect(sandbox.data.fillCount(), 'more fills than one page, so the cursor can get stuck').toBeGreaterThan(1000);
      const exchangeDays = (stream: string) =>
        [first, addDays(first, 1), addDays(first, 2), today].map((d) => `exchange:${stream}:${d}`);

      // The partner sync lists the last three days only; the exchange is not synced at all.
      await sync(world, ['--source', 'partner', '--from', addDays(first, 1), '--to', addDays(today, 1)]);
      const partnerOnly = await cli(world, ['reconcile', ...period]);
      expect(coverage(partnerOnly)).toEqual(
        [
          ...['deposits', 'fills', 'orders', 'trades', 'withdrawals'].flatMap(exchangeDays),
          `partner:orders:${first}`,
        ].sort(),
      );

      // The exchange sync: every stream is read up to now, but the fills walk gets stuck at its cursor.
      await sync(world, ['--source', 'exchange']);
      const stuck = await cli(world, ['reconcile', ...period]);
      expect(coverage(stuck)).toContain('exchange:cursor:fills.execId');
      expect(coverage(stuck)).toEqual(expect.arrayContaining([...exchangeDays('fills'), `partner:orders:${first}`]));
      expect(coverage(stuck).filter((k) => /^exchange:(deposits|withdrawals|orders|trades):/.test(k))).toEqual([]);

      // The exchange answers the bounds again: the walk from the cursor that never moved reads
      // everything. A partner sync of other days (a rescan that does not read the missing day) leaves it open.
      sandbox.setOption('fillsIgnoreExecIds', false);
      await sync(world, ['--source', 'exchange']);
      await sync(world, ['--source', 'partner', '--from', addDays(first, 1), '--to', addDays(today, 1)]);
      const unstuck = await cli(world, ['reconcile', ...period]);
      expect(coverage(unstuck)).toEqual([`partner:orders:${first}`]);

      await sync(world, ['--source', 'partner', '--from', first, '--to', addDays(first, 1)]);
      const complete = await cli(world, ['reconcile', ...period]);
      expect(coverage(complete)).toEqual([]);
    });
  });
}
