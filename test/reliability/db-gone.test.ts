import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../sandbox/index.js';
import { createTestStore, type TestStore } from '../helpers/db.js';
import { brief, childEnv, runCli, startCli, waitFor, type CliResult } from '../e2e/helpers.js';
import { groupOf, loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { openStore } from '../../src/store/db/database.js';
import { migrate } from '../../src/store/db/migrate.js';
import { runSchedule, type Trigger } from '../../src/schedule/nightly.js';
import { yesterday } from '../../src/util/dates.js';
import { recordFigure } from './figures.js';

/**
 * Issue 17, item 2: a database that goes away mid-run. The CLI's `run` is started against the
 * sandbox and a Postgres schema of its own; a trigger installed in that schema holds one statement
 * of the chosen stage in pg_sleep (a hook point in the database, so nothing in src knows about
 * tests), and while it is held the test terminates backends with pg_terminate_backend: all of the
 * run's sessions, only the session holding the run lock, or only the workers. The run must fail
 * cleanly: exit 1, the JSON summary on stdout, the run row failed in that stage with a reason that
 * names the database, no crash; and the next run must succeed with the data of an undisturbed run.
 *
 * Postgres only: the embedded database runs in the process and has no backends to terminate.
 */
const BASE_URL = process.env.TEST_DATABASE_URL;
// Fixed when the suite loads: a rerun after midnight UTC must judge the same day as the reference run.
const PERIOD_FROM = yesterday(new Date()).from;

type Mode = 'all' | 'lock' | 'workers';
type Stage = 'sync.exchange' | 'reconcile' | 'report';

/** Where the hook holds a statement: one of the stage's writes. */
const HOOKS: Record<Stage, string> = {
  'sync.exchange': 'after insert on exchange_fill for each statement',
  reconcile: 'after update of rule_results on run for each row',
  report: 'after update of report_path on run for each row',
};

const PAUSE_SQL = `
create table rr_pause (name text primary key);
create function rr_pause_fn() returns trigger language plpgsql as $$
begin
  if exists (select 1 from rr_pause where name = TG_ARGV[0]) then
    delete from rr_pause where name = TG_ARGV[0];
    perform pg_sleep(3);
  end if;
  return null;
end $$;
${Object.entries(HOOKS)
  .map(([stage, when], i) => `create trigger rr_pause_${i} ${when} execute function rr_pause_fn('${stage}');`)
  .join('\n')}
`;

/** The data a run leaves, without run ids and times: what must equal an undisturbed run's. */
async function dump(admin: pg.Client, schema: string): Promise<Record<string, unknown[]>> {
  const q = async (sql: string) => (await admin.query(sql.replaceAll('S.', `${schema}.`))).rows;
  return {
    partnerOrders: await q(
      `select order_id, order_state, order_state_updated_at_text from S.partner_order order by order_id`,
    ),
    fills: await q(`select exec_id::text, qty::text, price::text, fee::text from S.exchange_fill order by exec_id`),
    orders: await q(`select ex_ord_id::text, ord_status, cum_qty::text from S.exchange_order order by ex_ord_id`),
    deposits: await q(`select deposit_id::text, amount::text, state from S.exchange_deposit order by deposit_id`),
    withdrawals: await q(
      `select withdrawal_id::text, amount::text, state from S.exchange_withdrawal order by withdrawal_id`,
    ),
    // a stale record's age (hours) moves with the clock: only its break, not its figures, must be equal
    breaks: await q(`select code, key, status, case when code like '%STALE' then null else expected end as expected,
                            case when code like '%STALE' then null else actual end as actual,
                            case when code like '%STALE' then null else difference end as difference from S.break order by code, key`),
    quarantine: await q(
      `select source, endpoint, record_key, reason from S.quarantine order by source, endpoint, record_key`,
    ),
  };
}

describe.skipIf(!BASE_URL)('a database that goes away during a run [postgres]', () => {
  let sb: Sandbox;
  let admin: pg.Client;
  let reports: string;
  let reference: Record<string, unknown[]>;
  const stores: TestStore[] = [];

  /** A migrated schema of its own, its sessions named by application_name, with the pause hooks. */
  async function world(): Promise<{ url: string; schema: string; app: string; env: NodeJS.ProcessEnv }> {
    const t = await createTestStore('postgres');
    stores.push(t);
    await t.store.close();
    const schema = t.schema!;
    const app = `rr_dbgone_${schema}`;
    const u = new URL(t.url!);
    u.searchParams.set('application_name', app);
    await admin.query(`set search_path = ${schema}; ${PAUSE_SQL}; reset search_path;`);
    const env = childEnv({ ...sb.env, DATABASE_URL: u.toString(), REPORTS_DIR: reports, LOG_LEVEL: 'info' });
    return { url: u.toString(), schema, app, env };
  }

  /** Terminates the chosen backends of the app once its statement is held in the hook. */
  async function terminateWhenHeld(app: string, mode: Mode): Promise<number> {
    await waitFor(
      'a statement held in the hook',
      async () =>
        (
          await admin.query(`select 1 from pg_stat_activity where application_name = $1 and wait_event = 'PgSleep'`, [
            app,
          ])
        ).rowCount! > 0,
      60_000,
    );
    const sessions = (
      await admin.query<{ pid: number; lock: boolean }>(
        `select a.pid, exists (select 1 from pg_locks l where l.pid = a.pid and l.locktype = 'advisory' and l.granted) as lock
         from pg_stat_activity a where a.application_name = $1`,
        [app],
      )
    ).rows;
    const targets = sessions.filter((s) => (mode === 'all' ? true : mode === 'lock' ? s.lock : !s.lock));
    expect(targets.length, `sessions to terminate (${mode})`).toBeGreaterThan(0);
    for (const s of targets) await admin.query('select pg_terminate_backend($1)', [s.pid]);
    return targets.length;
  }

  beforeAll(async () => {
    sb = await startSandbox({
      seed: 17,
      days: 2,
      ordersPerDay: 8,
      exchangeOrdersPerDay: 40,
      fillsPerOrder: 2,
      discrepancies: true,
      stateChanges: false,
      live: false,
      faults: 'none',
    });
    admin = new pg.Client({ connectionString: BASE_URL });
    await admin.connect();
    reports = mkdtempSync(join(tmpdir(), 'rr-dbgone-'));
    const ref = await world();
    const r = await runCli(['run', '--from', PERIOD_FROM, '--json', '--no-email'], ref.env);
    expect(r.code, brief(r.stderr)).toBe(0);
    reference = await dump(admin, ref.schema);
    expect(reference.fills!.length).toBeGreaterThan(0);
    expect(reference.breaks!.length).toBeGreaterThan(0);
  });

  afterAll(async () => {
    for (const t of stores) await t.drop().catch(() => {});
    await admin?.end();
    await sb?.close();
    if (reports) rmSync(reports, { recursive: true, force: true });
  });

  const cases: Array<[Mode, Stage]> = [];
  for (const stage of ['sync.exchange', 'reconcile', 'report'] as Stage[])
    for (const mode of ['all', 'lock', 'workers'] as Mode[]) cases.push([mode, stage]);

  for (const [mode, stage] of cases) {
    it(`terminating ${mode === 'all' ? 'all its sessions' : mode === 'lock' ? 'the run lock session' : 'its workers'} during ${stage}: exit 1, JSON summary, run failed in ${stage}; the next run restores everything`, async () => {
      const w = await world();
      await admin.query(`insert into ${w.schema}.rr_pause (name) values ($1)`, [stage]);
      const cli = startCli(['run', '--from', PERIOD_FROM, '--json', '--no-email'], w.env);
      let terminated: number;
      let result: CliResult;
      try {
        terminated = await terminateWhenHeld(w.app, mode);
      } finally {
        result = await cli.done;
      }
      const why = brief(result.stderr);
      expect(result.signal, why).toBeNull();
      expect(result.code, why).toBe(1);
      expect(result.stderr).not.toMatch(/Unhandled 'error' event|^\s+at .+\(.+:\d+:\d+\)$/m);
      const summary = JSON.parse(result.stdout) as { runId: string; status: string };
      expect(summary.status).toBe('failed');

      const row = (
        await admin.query(`select status, failed_stage, error from ${w.schema}.run where id = $1`, [summary.runId])
      ).rows[0] as Record<string, string | null>;
      expect(row.status).toBe('failed');
      expect(row.failed_stage).toBe(stage);
      expect(row.error).toMatch(/^database: /);
      // Only the lock session gone: the run says so. All sessions gone: the lock session's loss and the
      // stage's own failed statement race, and either reason (both naming the database) may be first.
      if (mode === 'lock') expect(row.error).toMatch(/run lock/);
      if (mode === 'all') expect(row.error).toMatch(/run lock|connection was lost|terminat/i);
      // The session lock died with its session, or was released: nobody holds it now.
      const held = await admin.query(
        `select 1 from pg_stat_activity a join pg_locks l on l.pid = a.pid where a.application_name = $1 and l.locktype = 'advisory'`,
        [w.app],
      );
      expect(held.rowCount).toBe(0);

      // A transaction cut in the hook rolled its delete back: the next run must not be held again.
      await admin.query(`delete from ${w.schema}.rr_pause`);
      const next = await runCli(['run', '--from', PERIOD_FROM, '--json', '--no-email'], w.env);
      expect(next.code, brief(next.stderr)).toBe(0);
      expect(await dump(admin, w.schema)).toEqual(reference);
      recordFigure({
        kind: 'fault',
        name: `db: terminate ${mode === 'all' ? 'all sessions' : mode === 'lock' ? 'the lock session' : 'the workers'} during ${stage}`,
        db: 'postgres',
        terminated,
        lost: 0,
        duplicated: 0,
      });
    });
  }

  it('schedule survives a firing whose database sessions were terminated, and runs the next firing', async () => {
    const w = await world();
    await admin.query(`insert into ${w.schema}.rr_pause (name) values ('reconcile')`);
    const config = loadConfig({ env: { ...sb.env, DATABASE_URL: w.url, REPORTS_DIR: reports } });
    let fire: ((at: Date) => void) | undefined;
    const trigger: Trigger = { start: (onFire) => (fire = onFire), stop: () => {}, nextRun: () => null };
    const stopTarget = new (await import('node:events')).EventEmitter();
    const openMigrated = async () => {
      const store = await openStore({ url: w.url });
      await migrate(store);
      return store;
    };
    const schedule = runSchedule(
      { group: groupOf(config), logger: silentLogger(), openStore: openMigrated },
      { trigger, signalTarget: stopTarget as never },
    );
    await waitFor('the scheduler to start', () => fire !== undefined, 10_000);
    const runs = async () =>
      (
        await admin.query<{ status: string; failed_stage: string | null; trigger: string }>(
          `select status, failed_stage, trigger from ${w.schema}.run order by started_at`,
        )
      ).rows;

    fire!(new Date());
    await terminateWhenHeld(w.app, 'all');
    await waitFor(
      'the first firing to be recorded as failed',
      async () => (await runs()).some((r) => r.status === 'failed'),
      60_000,
    );
    await admin.query(`delete from ${w.schema}.rr_pause`);
    // the scheduler is free again once the failed firing has closed its store
    await new Promise((r) => setTimeout(r, 500));
    fire!(new Date());
    await waitFor(
      'the second firing to succeed',
      async () => (await runs()).some((r) => r.status === 'succeeded'),
      120_000,
    );
    stopTarget.emit('SIGTERM', 'SIGTERM');
    await schedule;
    const all = await runs();
    expect(all.map((r) => [r.status, r.failed_stage, r.trigger])).toEqual([
      ['failed', 'reconcile', 'schedule'], // the firing was cut in its reconcile (paused there)
      ['succeeded', null, 'schedule'],
    ]);
    recordFigure({
      kind: 'fault',
      name: 'db: schedule survives terminated sessions and fires again',
      db: 'postgres',
      lost: 0,
      duplicated: 0,
    });
  });
});
