import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/load.js';
import { openStore, type Store } from '../../src/store/db/database.js';
import { silentLogger } from '../../src/log/logger.js';
import { runPipeline } from '../../src/pipeline/run.js';
import { RunLockedError } from '../../src/pipeline/lock.js';
import type { Stages } from '../../src/pipeline/load-stages.js';
import type { StageContext } from '../../src/stages/context.js';
import { syncSources } from '../../src/stages/sync.js';
import type { Period } from '../../src/domain/period.js';
import { getRun } from '../../src/store/runs/runs.js';
import { parseRunRequests } from '../../src/http/meter.js';
import { createTestStore, storeKinds, type TestStore } from '../helpers/db.js';

const SECRET = 'exchange-token-that-must-never-leak';

function makeConfig(extra: Record<string, string> = {}, cwd?: string): Config {
  return loadConfig({
    ...(cwd ? { cwd } : {}),
    env: {
      PARTNER_API_URL: 'http://127.0.0.1:9/partner',
      PARTNER_PUBLIC_KEY: 'public-key-1234',
      PARTNER_PRIVATE_KEY: 'private-key-1234',
      EXCHANGE_API_URL: 'http://127.0.0.1:9/v3/exchange',
      EXCHANGE_API_TOKEN: SECRET,
      ...extra,
    },
  });
}

/** A source's sync as the fake stages run it. */
interface FakeSyncs {
  syncExchange(ctx: StageContext): Promise<unknown>;
  syncPartner(ctx: StageContext, period: Period | null): Promise<unknown>;
}

/**
 * Fake stages that record their calls; overrides make one slow or failing. The sync stage is the real one (its
 * sources, their order and their stage names) with each source's sync replaced by syncExchange or syncPartner.
 */
function fakeStages(calls: string[], overrides: Partial<Stages & FakeSyncs> = {}): Stages {
  const {
    syncExchange = async () => void calls.push('syncExchange'),
    syncPartner = async (_ctx, period) => void calls.push(`syncPartner ${period?.from}..${period?.to}`),
    ...rest
  } = overrides;
  return {
    syncSources: (ctx, request, stage) =>
      syncSources(ctx, request, stage, async (c, source, req) => {
        await (source.name === 'exchange' ? syncExchange(c) : syncPartner(c, req.period));
        return { source: source.name, recorded: {}, figures: {} };
      }),
    reconcilePeriod: async (_ctx, period) => void calls.push(`reconcile ${period.from}..${period.to}`),
    jsonSummary: async (_db, _account, runId) =>
      ({
        runId,
        status: 'x',
        period: { from: '', to: '' },
        counts: {},
        breaks: [],
        report: null,
      }) as never,
    writeReport: async (_ctx, runId) => {
      calls.push('writeReport');
      return {
        path: `/tmp/reports/${runId}.xlsx`,
        sheets: { Summary: 1 },
        detail: { dir: `/tmp/reports/${runId}_detail` },
      };
    },
    deliverRun: async () => {
      calls.push('deliverRun');
      return { status: 'sent' };
    },
    deliverFailureNotice: async (_ctx, input) => {
      calls.push(`deliverFailureNotice ${input.failure.stage}: ${input.noWorkbook}`);
      return { status: 'sent' };
    },
    ...rest,
  };
}

/** A run held in its first stage until `release()`; `started` resolves once it is there (holding its locks). */
function gatedRun(deps: Omit<Parameters<typeof runPipeline>[0], 'stages'>, options: Parameters<typeof runPipeline>[1]) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const started = new Promise<void>((r) => (entered = r));
  const run = runPipeline(
    { ...deps, stages: fakeStages([], { syncExchange: async () => (entered(), gate) }) },
    options,
  );
  return { run, started, release };
}

const period: Period = { from: '2026-11-01', to: '2026-11-02' };

for (const kind of storeKinds) {
  describe(`runPipeline [${kind}]`, () => {
    let test: TestStore;
    let store: Store;
    const config = makeConfig();
    const logger = silentLogger();

    beforeAll(async () => {
      test = await createTestStore(kind);
      store = test.store;
    });
    afterAll(async () => {
      await test.drop();
    });

    it('runs the stages in order and records each on the run row', async () => {
      const calls: string[] = [];
      const result = await runPipeline(
        { store, config, logger, stages: fakeStages(calls) },
        { period, trigger: 'cli', email: true },
      );
      expect(result.status).toBe('succeeded');
      expect(result.reportPath).toBe(`/tmp/reports/${result.runId}.xlsx`);
      // No SMTP configured: delivery is skipped, not attempted.
      // The partner sync reads the look-back days too (partner.lookbackDays, 3); reconcile takes the period.
      expect(calls).toEqual([
        'syncExchange',
        'syncPartner 2026-10-29..2026-11-02',
        'reconcile 2026-11-01..2026-11-02',
        'writeReport',
      ]);
      const run = await getRun(store.db, result.runId);
      expect(run?.status).toBe('succeeded');
      expect(run?.command).toBe('run');
      expect(run?.trigger).toBe('cli');
      expect(run?.finished_at).toBeTruthy();
      expect(run?.config_hash).toMatch(/^[0-9a-f]{16}$/);
      const stages = run?.stages as Record<string, { status: string; ms: number; detail?: Record<string, unknown> }>;
      // jsonb does not keep key order: order by start time, then by the order recorded (seq), as `runs` does.
      const order = Object.entries(stages as unknown as Record<string, { startedAt: string; seq: unknown }>)
        .sort((a, b) => a[1].startedAt.localeCompare(b[1].startedAt) || Number(a[1].seq) - Number(b[1].seq))
        .map(([name]) => name);
      expect(order).toEqual(['sync.exchange', 'sync.partner', 'reconcile', 'report', 'deliver']);
      expect(order.map((name) => Number((stages as unknown as Record<string, { seq: unknown }>)[name]?.seq))).toEqual([
        0, 1, 2, 3, 4,
      ]);
      expect(stages.deliver?.status).toBe('skipped');
      // jsonb numbers come back as exact LosslessNumbers; each stage's timing survives the later stages' writes.
      expect(Number(stages.reconcile?.detail?.openBreaks)).toBe(0);
      expect(Number.isFinite(Number(stages['sync.exchange']?.ms))).toBe(true);
      expect(stages.report?.detail?.path).toBe(result.reportPath);
    });

    it('the look-back is a sync setting: the partner sync reads those days, reconcile judges the period alone (and what changed)', async () => {
      const calls: string[] = [];
      await runPipeline(
        { store, config, logger, stages: fakeStages(calls) },
        { period, trigger: 'schedule', email: false, lookbackDays: 5 },
      );
      expect(calls).toEqual([
        'syncExchange',
        'syncPartner 2026-10-27..2026-11-02',
        'reconcile 2026-11-01..2026-11-02',
        'writeReport',
      ]);
      const none: string[] = [];
      await runPipeline(
        { store, config, logger, stages: fakeStages(none) },
        { period, trigger: 'cli', email: false, lookbackDays: 0 },
      );
      expect(none).toEqual([
        'syncExchange',
        'syncPartner 2026-11-01..2026-11-02',
        'reconcile 2026-11-01..2026-11-02',
        'writeReport',
      ]);
    });

    it('records the failing stage and its error, keeps going no further, and never prints a secret', async () => {
      const calls: string[] = [];
      const stages = fakeStages(calls, {
        reconcilePeriod: async () => {
          throw new Error(`boom near ${SECRET}`);
        },
      });
      const result = await runPipeline({ store, config, logger, stages }, { period, trigger: 'cli', email: true });
      expect(result.status).toBe('failed');
      expect(result.failedStage).toBe('reconcile');
      expect(result.error).toContain('boom');
      expect(result.error).not.toContain(SECRET);
      // the failed run's report is written all the same (no SMTP: not sent)
      expect(calls).toEqual(['syncExchange', 'syncPartner 2026-10-29..2026-11-02', 'writeReport']);
      expect(result.reportPath).toBe(`/tmp/reports/${result.runId}.xlsx`);
      const run = await getRun(store.db, result.runId);
      expect(run?.status).toBe('failed');
      expect(run?.failed_stage).toBe('reconcile');
      expect(run?.error).not.toContain(SECRET);
      const recorded = run?.stages as Record<string, { status: string; detail?: Record<string, unknown> }>;
      expect(recorded['sync.exchange']?.status).toBe('succeeded');
      expect(recorded.reconcile?.status).toBe('failed');
      expect(recorded.report?.status).toBe('succeeded');
      expect(recorded.report?.detail?.failedRun).toBe(true);
      expect(recorded.deliver).toMatchObject({ status: 'skipped', detail: { reason: 'SMTP_URL not set' } });
    });

    describe('a run that fails before its report', () => {
      let smtpConfig: Config;
      beforeAll(async () => {
        smtpConfig = makeConfig(
          { SMTP_URL: 'smtp://127.0.0.1:9', RAMP_RECON_CONFIG: 'email.json' },
          await writeEmailConfig(),
        );
      });
      const exchangeDown = () => {
        throw new Error(`Exchange API: connection refused (token ${SECRET})`);
      };
      const stagesOf = (run: Awaited<ReturnType<typeof getRun>>) =>
        run?.stages as Record<string, { status: string; error?: string; detail?: Record<string, unknown> }>;

      it('writes its report and e-mails it once; the run stays failed in its stage with its error', async () => {
        const calls: string[] = [];
        const result = await runPipeline(
          {
            store,
            config: smtpConfig,
            logger,
            stages: fakeStages(calls, { syncExchange: async () => exchangeDown() }),
          },
          { period, trigger: 'cli', email: true },
        );
        expect(calls).toEqual(['writeReport', 'deliverRun']);
        expect(result).toMatchObject({ status: 'failed', failedStage: 'sync.exchange' });
        expect(result.reportPath).toBe(`/tmp/reports/${result.runId}.xlsx`);
        const run = await getRun(store.db, result.runId);
        expect(run).toMatchObject({ status: 'failed', failed_stage: 'sync.exchange' });
        expect(run?.error).toContain('Exchange API: connection refused');
        expect(run?.error).not.toContain(SECRET);
        const stages = stagesOf(run);
        expect(Object.keys(stages).sort()).toEqual(['deliver', 'report', 'sync.exchange']);
        expect(stages.report?.status).toBe('succeeded');
        expect(stages.deliver).toMatchObject({ status: 'succeeded', detail: { status: 'sent' } });
      });

      it('with e-mail off, writes the report and records the deliver stage skipped with its reason', async () => {
        const calls: string[] = [];
        const result = await runPipeline(
          { store, config: smtpConfig, logger, stages: fakeStages(calls, { syncPartner: async () => exchangeDown() }) },
          { period, trigger: 'enqueue', email: false, noEmailReason: 'the group e-mail reports this account' },
        );
        expect(calls).toEqual(['syncExchange', 'writeReport']);
        const stages = stagesOf(await getRun(store.db, result.runId));
        expect(stages.deliver).toMatchObject({
          status: 'skipped',
          detail: { reason: 'the group e-mail reports this account' },
        });
      });

      it('when the report fails too, sends the short notice saying why, and the run keeps its own failure', async () => {
        const calls: string[] = [];
        const stages = fakeStages(calls, {
          syncExchange: async () => exchangeDown(),
          writeReport: async () => {
            throw new Error('disk full');
          },
        });
        const result = await runPipeline(
          { store, config: smtpConfig, logger, stages },
          { period, trigger: 'cli', email: true },
        );
        expect(calls).toEqual(['deliverFailureNotice sync.exchange: disk full']);
        expect(result).toMatchObject({ status: 'failed', failedStage: 'sync.exchange' });
        expect(result.reportPath).toBeUndefined();
        const run = await getRun(store.db, result.runId);
        expect(run).toMatchObject({ status: 'failed', failed_stage: 'sync.exchange', delivered: true });
        expect(run?.error).toContain('Exchange API: connection refused');
        const recorded = stagesOf(run);
        expect(recorded.report).toMatchObject({ status: 'failed', error: 'disk full' });
        expect(recorded.deliver).toMatchObject({
          status: 'succeeded',
          detail: { status: 'sent', withoutWorkbook: 'no workbook: disk full' },
        });
      });

      it('a failed e-mail is recorded on the deliver stage and never masks the failure', async () => {
        const calls: string[] = [];
        const stages = fakeStages(calls, {
          reconcilePeriod: async () => {
            throw new Error('rule pass broke');
          },
          deliverRun: async () => ({ status: 'failed', error: 'connection refused' }),
        });
        const result = await runPipeline(
          { store, config: smtpConfig, logger, stages },
          { period, trigger: 'cli', email: true },
        );
        expect(result).toMatchObject({ status: 'failed', failedStage: 'reconcile', error: 'rule pass broke' });
        const run = await getRun(store.db, result.runId);
        expect(run).toMatchObject({ status: 'failed', failed_stage: 'reconcile', error: 'rule pass broke' });
        const recorded = stagesOf(run);
        expect(recorded.deliver?.status).toBe('failed');
        expect(recorded.deliver?.error).toContain(`retry with \`ramp-recon deliver ${result.runId}\``);
      });

      it('a failure in the report stage itself writes no second report; a stopped run sends none', async () => {
        const calls: string[] = [];
        const failing = fakeStages(calls, {
          writeReport: async () => {
            calls.push('writeReport');
            throw new Error('disk full');
          },
        });
        const atReport = await runPipeline(
          { store, config: smtpConfig, logger, stages: failing },
          { period, trigger: 'cli', email: true },
        );
        expect(atReport.failedStage).toBe('report');
        expect(calls.filter((c) => !c.startsWith('sync') && !c.startsWith('reconcile'))).toEqual(['writeReport']);

        const stop = new AbortController();
        const stopped: string[] = [];
        const result = await runPipeline(
          {
            store,
            config: smtpConfig,
            logger,
            stages: fakeStages(stopped, {
              syncExchange: async () => {
                stop.abort(new Error('SIGTERM'));
                throw new Error('aborted');
              },
            }),
          },
          { period, trigger: 'schedule', email: true, signal: stop.signal },
        );
        expect(result).toMatchObject({ status: 'failed', failedStage: 'sync.exchange' });
        expect(stopped).toEqual([]);
        const recorded = stagesOf(await getRun(store.db, result.runId));
        expect(recorded.report).toMatchObject({
          status: 'skipped',
          detail: { reason: 'the run was stopped (SIGTERM): no failure report' },
        });
      });
    });

    it('saves the requests of each finished stage, and of a run that fails', async () => {
      let savedAfterExchange: unknown;
      const stages = fakeStages([], {
        syncExchange: async (ctx) => {
          ctx.meter?.count('exchange', 'GET /fills', 20, false);
          ctx.meter?.count('exchange', 'GET /fills', 20, true);
          ctx.meter?.count('exchange', 'GET /orders/{id}', 20, false);
        },
        syncPartner: async (ctx) => {
          // The exchange stage's requests are on the row already: a process killed here keeps them.
          savedAfterExchange = parseRunRequests((await getRun(ctx.store.db, ctx.runId as string))?.requests);
          ctx.meter?.count('partner', 'GET /orders', 100, false);
          throw new Error('partner down');
        },
      });
      const result = await runPipeline({ store, config, logger, stages }, { period, trigger: 'cli', email: false });
      expect(result.status).toBe('failed');
      const exchange = {
        'GET /fills': { requests: 2, retries: 1, perSecond: 20 },
        'GET /orders/{id}': { requests: 1, retries: 0, perSecond: 20 },
      };
      expect(savedAfterExchange).toEqual({ exchange });
      const run = await getRun(store.db, result.runId);
      expect(parseRunRequests(run?.requests)).toEqual({
        partner: { 'GET /orders': { requests: 1, retries: 0, perSecond: 100 } },
        exchange,
      });
    });

    it('keeps a huge error text bounded in run.error', async () => {
      const stages = fakeStages([], {
        syncExchange: async () => {
          throw new Error(`insert failed: ${'x'.repeat(50_000)}`);
        },
      });
      const result = await runPipeline({ store, config, logger, stages }, { period, trigger: 'cli', email: false });
      expect(result.failedStage).toBe('sync.exchange');
      expect(result.error!.length).toBeLessThan(2_100);
      expect(result.error).toMatch(/more characters\)$/);
    });

    it('a failed e-mail fails the run in stage deliver and keeps the workbook', async () => {
      const calls: string[] = [];
      const smtpConfig = loadConfig({
        env: {
          PARTNER_API_URL: 'http://127.0.0.1:9/partner',
          PARTNER_PUBLIC_KEY: 'public-key-1234',
          PARTNER_PRIVATE_KEY: 'private-key-1234',
          EXCHANGE_API_URL: 'http://127.0.0.1:9/v3/exchange',
          EXCHANGE_API_TOKEN: SECRET,
          SMTP_URL: 'smtp://127.0.0.1:9',
          RAMP_RECON_CONFIG: 'email.json',
        },
        cwd: await writeEmailConfig(),
      });
      const stages = fakeStages(calls, { deliverRun: async () => ({ status: 'failed', error: 'connection refused' }) });
      const result = await runPipeline(
        { store, config: smtpConfig, logger, stages },
        { period, trigger: 'cli', email: true },
      );
      expect(result.status).toBe('failed');
      expect(result.failedStage).toBe('deliver');
      expect(result.error).toContain('connection refused');
      expect(result.error).toContain(`ramp-recon deliver ${result.runId}`);
      expect(result.reportPath).toBeTruthy();
    });

    it('refuses a second run of the account while one is in progress, and waits with wait: true', async () => {
      const {
        run: first,
        started,
        release,
      } = gatedRun({ store, config, logger }, { period, trigger: 'schedule', email: false });
      await started;
      const refused = runPipeline(
        { store, config, logger, stages: fakeStages([]) },
        { period, trigger: 'cli', email: false },
      );
      await expect(refused).rejects.toBeInstanceOf(RunLockedError);
      await expect(refused).rejects.toThrow(/another run is in progress \(started at \d{4}-\d\d-\d\dT.*run id r\d{8}T/);

      const waiting = runPipeline(
        { store, config, logger, stages: fakeStages([]) },
        { period, trigger: 'cli', email: false, wait: true },
      );
      let waitedDone = false;
      void waiting.then(() => (waitedDone = true));
      await new Promise((r) => setTimeout(r, 300));
      expect(waitedDone).toBe(false);
      release();
      const [a, b] = await Promise.all([first, waiting]);
      expect(a.status).toBe('succeeded');
      expect(b.status).toBe('succeeded');
    });

    it('marks a run left running by a dead process as failed when the next run starts', async () => {
      await store.db
        .insertInto('run')
        .values({
          id: 'r-dead',
          account: config.account,
          command: 'run',
          status: 'running',
          started_at: new Date('2026-11-01T02:00:00Z'),
        })
        .execute();
      await runPipeline({ store, config, logger, stages: fakeStages([]) }, { period, trigger: 'cli', email: false });
      const dead = await getRun(store.db, 'r-dead');
      expect(dead?.status).toBe('failed');
      expect(dead?.error).toMatch(/interrupted/);
    });

    if (kind === 'postgres') {
      it('with a rate group, holds its lock too: another account of the group waits, from any pool; others run', async () => {
        const other = await openStore({ url: test.url, schema: test.schema });
        const globex: Config = { ...config, account: 'globex' };
        const asGroup = (rateGroup: string, wait = false) =>
          ({ period, trigger: 'enqueue', email: false, rateGroup, wait }) as const;
        try {
          const { run: first, started, release } = gatedRun({ store, config, logger }, asGroup('org'));
          await started;
          await expect(
            runPipeline({ store: other, config: globex, logger, stages: fakeStages([]) }, asGroup('org')),
          ).rejects.toThrow(/another run of rate group org is in progress/);
          // Refused on the group, the account's own lock was let go: globex runs in another group at once, from the
          // other pool too (a session keeps its advisory locks when it goes back to its pool).
          const elsewhere = await runPipeline(
            { store, config: globex, logger, stages: fakeStages([]) },
            asGroup('other-org'),
          );
          expect(elsewhere.status).toBe('succeeded');
          const waiting = runPipeline(
            { store: other, config: globex, logger, stages: fakeStages([]) },
            asGroup('org', true),
          );
          let waitedDone = false;
          void waiting.then(() => (waitedDone = true));
          await new Promise((r) => setTimeout(r, 1_500));
          expect(waitedDone).toBe(false);
          release();
          const [a, b] = await Promise.all([first, waiting]);
          expect([a.status, b.status]).toEqual(['succeeded', 'succeeded']);
          const [runA, runB] = await Promise.all([getRun(store.db, a.runId), getRun(store.db, b.runId)]);
          expect(runB!.started_at.getTime()).toBeGreaterThanOrEqual(runA!.finished_at!.getTime());
        } finally {
          await other.close();
        }
      });

      it('holds a Postgres advisory lock that another connection pool (another process) cannot take', async () => {
        const other = await openStore({ url: test.url, schema: test.schema });
        try {
          const {
            run: first,
            started,
            release,
          } = gatedRun({ store, config, logger }, { period, trigger: 'cli', email: false });
          await started;
          await expect(
            runPipeline(
              { store: other, config, logger, stages: fakeStages([]) },
              { period, trigger: 'cli', email: false },
            ),
          ).rejects.toThrow(/another run is in progress \(started at/);
          release();
          expect((await first).status).toBe('succeeded');
          // Another schema of the same database is another deployment: not blocked.
          const elsewhere = await createTestStore('postgres');
          try {
            expect(
              (
                await runPipeline(
                  { store: elsewhere.store, config, logger, stages: fakeStages([]) },
                  { period, trigger: 'cli', email: false },
                )
              ).status,
            ).toBe('succeeded');
          } finally {
            await elsewhere.drop();
          }
          // Released: the other pool can run now.
          expect(
            (
              await runPipeline(
                { store: other, config, logger, stages: fakeStages([]) },
                { period, trigger: 'cli', email: false },
              )
            ).status,
          ).toBe('succeeded');
        } finally {
          await other.close();
        }
      });
    }
  });
}

async function writeEmailConfig(): Promise<string> {
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'rr-pipeline-'));
  writeFileSync(
    join(dir, 'email.json'),
    JSON.stringify({ email: { from: 'recon@example.com', to: ['ops@example.com'] } }),
  );
  return dir;
}
