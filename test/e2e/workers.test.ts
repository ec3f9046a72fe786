import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg_ from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxAccounts, type SandboxAccounts } from '../helpers/sandbox.js';
import { addDays, toDay } from '../../src/util/dates.js';
import { accountJobLost } from '../../src/fleet/work.js';
import { planFleetBatch } from '../../src/fleet/plan.js';
import { openBoss } from '../../src/fleet/queues.js';
import { loadBatch, planBatch, startBatchAccount } from '../../src/store/runs/batches.js';
import { loadGroup } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { useRealClock } from '../helpers/clock.js';
import { createTestStore, type TestStore } from '../helpers/db.js';
import { header, textPart } from '../helpers/mime.js';
import { mailbox, type Mailbox } from '../helpers/smtp.js';
import {
  brief,
  childEnv,
  freePort,
  runCli,
  startCli,
  startGateProxy,
  waitFor,
  type GateProxy,
  type RunningCli,
} from './helpers.js';

/**
 * Issue 27: accounts fanned out over worker processes on pg-boss, on real Postgres. Every account runs once (by the run
 * log); a worker killed mid-job has its job finished by the other, with the data of an undisturbed run; an account
 * whose API is down is named by the report sent after its last retry; the group report goes out exactly once.
 */
const { Client } = pg_;
// pg-boss stamps jobs with the database server's clock (a scheduled night is the day before Postgres' now()), which no
// test can move: this file runs on the real clock (its assertions compare runs and mails, not the records of a day).
useRealClock();
const ACCOUNTS = ['acme', 'globex', 'initech'] as const;
const DAYS = 2;

describe.skipIf(!process.env.TEST_DATABASE_URL)('workers on pg-boss [postgres]', { timeout: 300_000 }, () => {
  let sandbox: SandboxAccounts;
  let pg: TestStore;
  let dir: string;
  let relay: Mailbox;
  let gate: GateProxy;
  let env: NodeJS.ProcessEnv;
  const workers: RunningCli[] = [];
  const today = toDay(new Date());
  const period = ['--from', addDays(today, -DAYS), '--to', today];

  beforeAll(async () => {
    sandbox = await startSandboxAccounts({
      days: DAYS,
      ordersPerDay: 6,
      fillsPerOrder: 2,
      live: false,
      faults: 'none',
      accounts: ACCOUNTS.map((name, i) => ({ name, seed: 70 + i })),
    });
    dir = mkdtempSync(join(tmpdir(), 'rr-e2e-workers-'));
    pg = await createTestStore('postgres');
    relay = mailbox();
    const smtpPort = await freePort();
    await relay.listen(smtpPort);
    // globex's Exchange API behind a gate: its job holds at its first request while the test kills its worker
    gate = await startGateProxy(sandbox.url);
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({
        accounts: ACCOUNTS.map((name) => ({ name, partner: { feeRate: sandbox.accounts[name]!.partnerFeeRate } })),
        email: { from: 'recon@example.com', to: ['group@example.com'] },
        workers: { heartbeatSeconds: 10, retryDelaySeconds: 1, retryLimit: 1 },
        http: { maxRetries: 0, connectTimeoutMs: 2_000 },
      }),
    );
    env = childEnv({
      ...sandbox.env,
      GLOBEX_EXCHANGE_API_URL: gate.via(sandbox.env.GLOBEX_EXCHANGE_API_URL!),
      RAMP_RECON_CONFIG: join(dir, 'config.json'),
      REPORTS_DIR: join(dir, 'reports'),
      DATABASE_URL: pg.url,
      SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
      LOG_LEVEL: 'info',
    });
    const migrated = await runCli(['migrate'], env);
    expect(migrated.code, migrated.stderr).toBe(0);
  });

  /** Waits for a batch's group report to be sent (before a later test counts the e-mails). */
  const reportDelivered = (batchId: string) =>
    waitFor(
      "the batch's report",
      async () =>
        (await pg.store.db.selectFrom('batch').select('delivered').where('id', '=', batchId).executeTakeFirst())
          ?.delivered === true,
      60_000,
    );

  afterAll(async () => {
    for (const w of workers) w.child.kill('SIGKILL');
    gate?.open();
    await gate?.stop();
    await relay?.close();
    await sandbox?.close();
    await pg?.drop();
    // the queue's own schema beside the test's (src/fleet/queues.ts queueSchema)
    if (pg?.schema) {
      const admin = new Client({ connectionString: process.env.TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`drop schema if exists ${pg.schema}_queue cascade`);
      await admin.end();
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs on Node 20 with the pinned pg-boss 12 (a test that fails if an upgrade breaks that)', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(pkg.dependencies['pg-boss']).toMatch(/^12\.\d+\.\d+$/);
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(20);
  });

  it('refuses workers on the embedded database (exit 2, one line)', async () => {
    const embedded = await runCli(['worker'], {
      ...env,
      DATABASE_URL: undefined,
      RAMP_RECON_DATA_DIR: join(dir, 'data'),
    });
    expect(embedded.code).toBe(2);
    expect(embedded.stderr).toMatch(/worker: workers need a Postgres server shared by every machine \(DATABASE_URL\)/);
  });

  it('a worker killed mid-job: its account finishes on the other worker, once, with the data of an undisturbed run', async () => {
    gate.close();
    workers.push(startCli(['worker'], env), startCli(['worker'], env));
    const enqueue = startCli(['enqueue', ...period, '--wait', '--json'], env);
    const db = pg.store.db;
    // globex's job is held at its first exchange request: find the worker holding it, and kill it
    let holder = '';
    await waitFor(
      'a worker holding globex',
      async () => {
        const row = await db
          .selectFrom('batch_account')
          .select(['worker', 'status'])
          .where('account', '=', 'globex')
          .executeTakeFirst();
        holder = row?.status === 'running' && gate.requests > 0 ? (row.worker ?? '') : '';
        return holder !== '';
      },
      60_000,
    );
    const victim = workers.find((w) => holder.endsWith(`:${w.child.pid}`))!;
    expect(victim, holder).toBeDefined();
    victim.child.kill('SIGKILL');
    gate.open();
    const done = await enqueue.done;
    expect(done.code, brief(done.stderr)).toBe(0);
    const batch = JSON.parse(done.stdout) as {
      batchId: string;
      status: string;
      accounts: Array<{ account: string; status: string; runId: string; worker: string; attempts: number }>;
    };
    expect(batch.status).toBe('succeeded');
    const globex = batch.accounts.find((a) => a.account === 'globex')!;
    // the other worker finished it, on its second attempt
    expect(globex.worker).not.toBe(holder);
    expect(globex.attempts).toBe(2);

    // by the run log: each account has exactly one succeeded run; globex's first run, on the killed worker, is not one
    const runs = await db
      .selectFrom('run')
      .select(['account', 'status'])
      .where('batch_id', '=', batch.batchId)
      .execute();
    for (const name of ACCOUNTS)
      expect(
        runs.filter((r) => r.account === name && r.status === 'succeeded'),
        name,
      ).toHaveLength(1);
    expect(runs.filter((r) => r.account === 'globex' && r.status !== 'succeeded').length).toBeLessThanOrEqual(1);

    // the stored data equal what the sandbox serves, account by account (an undisturbed run stores exactly that)
    for (const name of ACCOUNTS) {
      const fills = await db.selectFrom('exchange_fill').select('exec_id').where('account', '=', name).execute();
      expect(fills.map((f) => f.exec_id).sort(), name).toEqual(
        sandbox.accounts[name]!.data.fills()
          .map((f) => f.execId)
          .sort(),
      );
    }

    // the group report went out exactly once, with every account
    await waitFor('the group e-mail', () => relay.mails.length > 0, 30_000);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(relay.mails).toHaveLength(1);
    const mail = relay.mails[0]!;
    expect(header(mail, 'Subject')).toMatch(/^ramp-recon group .*: .*accounts? reconciled/);
    for (const name of ACCOUNTS) expect(textPart(mail, 'text/plain')).toMatch(new RegExp(`^${name}: `, 'm'));
  });

  it('a worker stopped (SIGSTOP) past its heartbeat: its account moves to the other worker, never run twice at once', async () => {
    const db = pg.store.db;
    const alive = workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
    while (alive.length < 2) {
      const w = startCli(['worker'], env);
      workers.push(w);
      alive.push(w);
    }
    gate.close();
    const before = gate.requests;
    const planned = await runCli(['enqueue', ...period, '--account', 'globex'], env);
    expect(planned.code, planned.stderr).toBe(0);
    const batchId = planned.stdout.trim();
    let holder = '';
    await waitFor(
      'a worker holding globex',
      async () => {
        const row = await db
          .selectFrom('batch_account')
          .select(['worker', 'status'])
          .where('batch_id', '=', batchId)
          .executeTakeFirst();
        holder = row?.status === 'running' && gate.requests > before ? (row.worker ?? '') : '';
        return holder !== '';
      },
      60_000,
    );
    const stopped = alive.find((w) => holder.endsWith(`:${w.child.pid}`))!;
    stopped.child.kill('SIGSTOP');
    try {
      // past the heartbeat the job is retried on the other worker, which waits for the stopped run's lock
      await waitFor(
        'the retry on the other worker',
        async () => {
          const row = await db
            .selectFrom('batch_account')
            .select(['worker', 'attempts'])
            .where('batch_id', '=', batchId)
            .executeTakeFirst();
          return Number(row?.attempts) >= 2 && row?.worker !== holder;
        },
        90_000,
      );
      await new Promise((r) => setTimeout(r, 3_000));
      const running = await db
        .selectFrom('run')
        .select('id')
        .where('batch_id', '=', batchId)
        .where('status', '=', 'running')
        .execute();
      expect(running).toHaveLength(1);
    } finally {
      stopped.child.kill('SIGCONT');
      gate.open();
    }
    await waitFor(
      'the batch to end',
      async () =>
        (await db.selectFrom('batch').select('status').where('id', '=', batchId).executeTakeFirst())?.status !==
        'running',
      120_000,
    );
    // and its report is out (before the next test counts the e-mails)
    await reportDelivered(batchId);
    const runs = await db
      .selectFrom('run')
      .select(['id', 'status', 'started_at', 'finished_at'])
      .where('batch_id', '=', batchId)
      .orderBy('started_at')
      .execute();
    expect(runs.filter((r) => r.status === 'succeeded').length).toBeGreaterThanOrEqual(1);
    expect(runs.at(-1)!.status).toBe('succeeded');
    // one after the other: each run ended before the next began
    for (let i = 1; i < runs.length; i++)
      expect(runs[i - 1]!.finished_at!.getTime(), `${runs[i - 1]!.id} then ${runs[i]!.id}`).toBeLessThanOrEqual(
        runs[i]!.started_at.getTime(),
      );
  });

  it('accounts of one rate group run one at a time across the fleet, however many workers are free', async () => {
    const db = pg.store.db;
    const live = workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
    for (const w of live) w.child.kill('SIGTERM');
    await Promise.all(live.map((w) => w.done));
    // acme and globex share an organisation: one request budget, one run at a time; paced so that each run lasts
    // seconds, long enough to overlap if the fleet let them
    const grouped = join(dir, 'grouped.json');
    const base = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as {
      accounts: Array<{ name: string; exchange?: object }>;
    };
    writeFileSync(
      grouped,
      JSON.stringify({
        ...base,
        accounts: base.accounts.map((a) =>
          a.name === 'initech' ? a : { ...a, rateGroup: 'acme-group', exchange: { rateLimitPerSecond: 4 } },
        ),
      }),
    );
    const groupedEnv = { ...env, RAMP_RECON_CONFIG: grouped };
    workers.push(startCli(['worker'], groupedEnv), startCli(['worker'], groupedEnv), startCli(['worker'], groupedEnv));
    const done = await runCli(
      ['enqueue', ...period, '--account', 'acme', '--account', 'globex', '--wait', '--json'],
      groupedEnv,
    );
    expect(done.code, brief(done.stderr)).toBe(0);
    const { batchId } = JSON.parse(done.stdout) as { batchId: string };
    const runs = await db
      .selectFrom('run')
      .select(['account', 'status', 'started_at', 'finished_at'])
      .where('batch_id', '=', batchId)
      .orderBy('started_at')
      .execute();
    expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    expect(new Set(runs.map((r) => r.account))).toEqual(new Set(['acme', 'globex']));
    // one after the other, though three workers were free
    expect(runs[0]!.finished_at!.getTime()).toBeLessThanOrEqual(runs[1]!.started_at.getTime());
    expect(runs[0]!.finished_at!.getTime() - runs[0]!.started_at.getTime()).toBeGreaterThan(2_000);
    await reportDelivered(batchId);
  });

  it('an account whose API is down: the report goes out after its last retry and names it', async () => {
    const downEnv = { ...env, INITECH_EXCHANGE_API_URL: `http://127.0.0.1:${await freePort()}/v3/exchange` };
    const live = workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
    // the workers read their config at start: one that knows initech's dead URL
    for (const w of live) w.child.kill('SIGTERM');
    await Promise.all(live.map((w) => w.done));
    workers.push(startCli(['worker'], downEnv), startCli(['worker'], downEnv));
    const before = relay.mails.length;
    const done = await runCli(['enqueue', ...period, '--wait', '--json'], downEnv);
    expect(done.code, brief(done.stderr)).toBe(1);
    const batch = JSON.parse(done.stdout) as {
      accounts: Array<{ account: string; status: string; attempts: number; error: string }>;
    };
    const initech = batch.accounts.find((a) => a.account === 'initech')!;
    expect(initech.status).toBe('failed');
    // the first attempt and its one retry
    expect(initech.attempts).toBe(2);
    expect(initech.error).toMatch(/Exchange API/);
    await waitFor('the group e-mail', () => relay.mails.length > before, 30_000);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(relay.mails.length).toBe(before + 1);
    const mail = relay.mails[before]!;
    expect(header(mail, 'Subject')).toMatch(/1 failed$/);
    expect(textPart(mail, 'text/plain')).toMatch(/^initech: FAILED in sync\.exchange: .*Exchange API/m);
  });

  it('two `schedule` processes on one database: one nightly batch, planned from the job queue', async () => {
    const cronConfig = join(dir, 'cron.json');
    const base = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    // every 5 seconds: several firings within the test, all for the same night
    writeFileSync(cronConfig, JSON.stringify({ ...base, schedule: { cron: '*/5 * * * * *', timezone: 'UTC' } }));
    const cronEnv = { ...env, RAMP_RECON_CONFIG: cronConfig };
    const schedulers = [startCli(['schedule', '--no-work'], cronEnv), startCli(['schedule', '--no-work'], cronEnv)];
    const db = pg.store.db;
    // The night is the day before the UTC day the firing fell on: the day the test started or, past midnight, the next.
    const startDay = toDay(new Date());
    const scheduled = (from?: string) =>
      db
        .selectFrom('batch')
        .select(['id', 'period_from'])
        .where('trigger', '=', 'schedule')
        .where('period_from', '>=', addDays(startDay, -1))
        .$if(from !== undefined, (q) => q.where('period_from', '=', from!))
        .execute();
    try {
      await waitFor('a scheduled batch', async () => (await scheduled()).length > 0, 90_000);
      const night = String((await scheduled())[0]!.period_from);
      expect([addDays(startDay, -1), addDays(toDay(new Date()), -1)]).toContain(night);
      // more firings come and go: still one batch for the night
      await new Promise((r) => setTimeout(r, 12_000));
      expect(await scheduled(night)).toHaveLength(1);
    } finally {
      for (const s of schedulers) s.child.kill('SIGTERM');
    }
    const ended = await Promise.all(schedulers.map((s) => s.done));
    for (const e of ended) expect(e.code, brief(e.stderr)).toBe(0);
  });

  it('two schedulers planning the same night: one batch', async () => {
    const group = loadGroup({ env: { ...sandbox.env, DATABASE_URL: pg.url }, configPath: join(dir, 'config.json') });
    const logger = silentLogger();
    const boss = await openBoss(group.settings, logger, 'test');
    try {
      // a night the schedule above did not plan
      const night = { from: addDays(today, -5), to: addDays(today, -4) };
      const plans = await Promise.all(
        [1, 2, 3].map(() =>
          planFleetBatch({ store: pg.store, boss, group, logger }, group.accounts, {
            period: night,
            trigger: 'schedule',
          }),
        ),
      );
      expect(new Set(plans.map((p) => p.batchId)).size).toBe(1);
      expect(plans.filter((p) => p.created)).toHaveLength(1);
      // every planner sent the jobs (one that died before them is completed by the next), each once
      const admin = new Client({ connectionString: process.env.TEST_DATABASE_URL });
      await admin.connect();
      try {
        const jobs = await admin.query(
          `select data->>'account' as account from ${pg.schema}_queue.job where name = 'ramp-recon-account' and data->>'batchId' = $1`,
          [plans[0]!.batchId],
        );
        expect(jobs.rows.map((r: { account: string }) => r.account).sort()).toEqual([...ACCOUNTS]);
      } finally {
        await admin.end();
      }
    } finally {
      await boss.stop({ graceful: false, close: true });
    }
  });

  it('a job lost on its last attempt (its worker died): the account is failed on the batch, saying so, and reported', async () => {
    const group = loadGroup({ env: { ...sandbox.env, DATABASE_URL: pg.url }, configPath: join(dir, 'config.json') });
    const logger = silentLogger();
    const boss = await openBoss(group.settings, logger, 'test');
    const db = pg.store.db;
    try {
      const { id } = await planBatch(db, {
        trigger: 'enqueue',
        period: { from: addDays(today, -2), to: addDays(today, -1) },
        accounts: ['acme'],
      });
      await startBatchAccount(db, id, 'acme', 'gone-host:4242');
      const mails = relay.mails.length;
      // what the dead letter queue's worker does with the job pg-boss failed for good
      await accountJobLost({ store: pg.store, boss, group, logger }, { batchId: id, account: 'acme' });
      const batch = await loadBatch(db, id);
      expect(batch.status).toBe('failed');
      expect(batch.accounts[0]).toMatchObject({ account: 'acme', status: 'failed' });
      expect(batch.accounts[0]!.error).toMatch(
        /^its last attempt ended without an outcome: the worker running it \(gone-host:4242\) died or fell silent past its heartbeat/,
      );
      // the live workers fan the batch in: its report names acme as failed
      await waitFor('the report of the lost account', () => relay.mails.length > mails, 30_000);
      expect(textPart(relay.mails[mails]!, 'text/plain')).toMatch(
        /^acme: FAILED: its last attempt ended without an outcome/m,
      );
      // a second word on it changes nothing
      await accountJobLost({ store: pg.store, boss, group, logger }, { batchId: id, account: 'acme' });
      expect((await loadBatch(db, id)).accounts[0]!.error).toBe(batch.accounts[0]!.error);
    } finally {
      await boss.stop({ graceful: false, close: true });
    }
  });
});
