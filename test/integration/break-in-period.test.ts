import { expect, it } from 'vitest';
import { openBreakCounts } from '../../src/domain/index.js';
import { reconcilePeriod } from '../../src/stages/reconcile.js';
import { openBreaksOfRun } from '../../src/store/recon/breaks.js';
import { createRun } from '../../src/store/runs/runs.js';
import { describeEachStore } from '../helpers/db.js';
import { makeConfig, newContext, PLANTED, seedWorld } from './reconcile-seed.js';

const PERIOD = { from: '2026-11-10', to: '2026-11-11' };
const config = makeConfig({ partner: { wallets: ['0xWALLET'] } });

/** docs/rules.md "This period or carried over": the one query, by the key of each rule, on both databases. */
describeEachStore('open breaks of a run: this period or carried over', (ctx) => {
  const db = () => ctx.store.db;
  const flags = async (run: { id: string; periodFrom: string | null; periodTo: string | null }) =>
    Object.fromEntries(
      (await openBreaksOfRun(db(), { account: 'default', ...run }, 'severity')).map((b) => [
        `${b.code} ${b.key}`,
        b.inPeriod,
      ]),
    );

  it('marks each break by its record: order, fill, exchange order, withdrawal, coverage day, divergent day; else new in the run', async () => {
    await seedWorld(db());
    await reconcilePeriod(await newContext(ctx.store, config, 'run1', PERIOD), PERIOD);
    const roll = await db()
      .selectFrom('break')
      .select('detail')
      .where('code', '=', 'E_BALANCE_ROLL')
      .executeTakeFirstOrThrow();
    const rollDay = String((roll.detail as { latestPairFirstDivergentDay: string }).latestPairFirstDivergentDay);

    const ofPeriod = await flags({ id: 'run1', periodFrom: PERIOD.from, periodTo: PERIOD.to });
    expect(Object.keys(ofPeriod).sort()).toEqual(PLANTED);
    expect(ofPeriod).toEqual({
      'E_BALANCE_ROLL USD': rollDay >= PERIOD.from && rollDay < PERIOD.to,
      'E_FILL_ORPHAN 900': true,
      'E_FILL_QTY 100': true,
      'E_WITHDRAWAL_BENEFICIARY wd-1': true,
      'P_FEE_USD o-feeusd': true,
      // created 2026-11-01: breaks of another day
      'P_FEE_USD o-old': false,
      'P_STALE o-pend': false,
      'S_COVERAGE partner:orders:2026-11-10': true,
      // no day of its own: opened by the run reported
      'S_QUARANTINE q-1': true,
      'X_DEPOSIT_MISSING o-missing': true,
    });

    // The same breaks reported for a run of 2026-11-01 (which opened none of them).
    await createRun(db(), {
      account: 'default',
      command: 'reconcile',
      id: 'run-nov1',
      periodFrom: '2026-11-01',
      periodTo: '2026-11-02',
      startedAt: new Date('2026-11-12T04:00:00Z'),
    });
    const other = await flags({ id: 'run-nov1', periodFrom: '2026-11-01', periodTo: '2026-11-02' });
    expect(
      Object.entries(other)
        .filter(([, v]) => v)
        .map(([k]) => k)
        .sort(),
    ).toEqual(['P_FEE_USD o-old', 'P_STALE o-pend']);
    // The roll-forward break belongs to the day its most recent failing pair diverged.
    const next = new Date(Date.parse(`${rollDay}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    expect((await flags({ id: 'run-nov1', periodFrom: rollDay, periodTo: next }))['E_BALANCE_ROLL USD']).toBe(true);
    // A run without a period has no break of its period.
    expect(Object.values(await flags({ id: 'run1', periodFrom: null, periodTo: null })).some(Boolean)).toBe(false);

    const counts = openBreakCounts(
      await openBreaksOfRun(db(), {
        id: 'run-nov1',
        account: 'default',
        periodFrom: '2026-11-01',
        periodTo: '2026-11-02',
      }),
    );
    expect(counts).toMatchObject({ total: PLANTED.length, inPeriod: 2, carriedOver: PLANTED.length - 2 });
    expect(counts.severity.low).toEqual({ total: 1, inPeriod: 1, carriedOver: 0 });
    expect(counts.severity.medium).toMatchObject({ inPeriod: 1 });
  });
});
