import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../helpers/sandbox.js';
import { addDays, toDay } from '../../src/util/dates.js';
import { createTestStore, storeKinds, type TestStore } from '../helpers/db.js';
import { brief, childEnv, freePort, runCli } from './helpers.js';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

// One database kind is enough here (the pipeline's storage is covered by cli-run): the faster one.
const kind = storeKinds.includes('postgres') ? 'postgres' : 'embedded';

describe(`run and deliver with SMTP, end to end [${kind}]`, { timeout: 240_000 }, () => {
  let sandbox: Sandbox;
  let pg: TestStore | undefined;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let port: number;
  let smtp: SMTPServer | undefined;
  const mails: string[] = [];
  const today = toDay(new Date());
  const periodArgs = ['--from', addDays(today, -2), '--to', today];

  beforeAll(async () => {
    sandbox = await startSandbox({
      seed: 5,
      days: 2,
      ordersPerDay: 5,
      fillsPerOrder: 2,
      discrepancies: true,
      live: false,
      faults: 'none',
    });
    dir = mkdtempSync(join(tmpdir(), 'rr-e2e-deliver-'));
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ email: { from: 'recon@example.com', to: ['finance-ops@example.com'] } }),
    );
    if (kind === 'postgres') pg = await createTestStore('postgres');
    port = await freePort();
    env = childEnv({
      ...sandbox.env,
      RAMP_RECON_DATA_DIR: join(dir, 'data'),
      REPORTS_DIR: join(dir, 'reports'),
      RAMP_RECON_CONFIG: join(dir, 'config.json'),
      DATABASE_URL: pg?.url,
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      LOG_LEVEL: 'warn',
    });
  });

  afterAll(async () => {
    if (smtp) await new Promise<void>((r) => smtp?.close(() => r()));
    await sandbox?.close();
    await pg?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a failed send fails the run in stage deliver and keeps the workbook; `deliver <runId>` sends it and completes the run', async () => {
    const failed = await runCli(['run', ...periodArgs, '--json'], env);
    expect(failed.code, brief(failed.stderr)).toBe(1);
    const summary = JSON.parse(failed.stdout) as { runId: string; status: string; report: string; breaks: unknown[] };
    expect(summary.status).toBe('failed');
    expect(existsSync(summary.report)).toBe(true);
    let runs = JSON.parse((await runCli(['runs', '--json', '--limit', '1'], env)).stdout) as Array<{
      status: string;
      failedStage: string;
      delivered: boolean;
      error: string;
    }>;
    expect(runs[0]).toMatchObject({ status: 'failed', failedStage: 'deliver', delivered: false, delivery: 'failed' });
    expect(runs[0]!.error).toContain(`ramp-recon deliver ${summary.runId}`);

    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        let body = '';
        stream.on('data', (d: Buffer) => (body += d.toString()));
        stream.on('end', () => {
          mails.push(body);
          callback();
        });
      },
    });
    await new Promise<void>((r) => smtp?.listen(port, '127.0.0.1', r));

    const retried = await runCli(['deliver', summary.runId], env);
    expect(retried.code, retried.stderr).toBe(0);
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatch(/^Subject: .*\d+ open break/m);
    expect(mails[0]).toMatch(/filename="?ramp-recon_.*\.xlsx/);
    runs = JSON.parse((await runCli(['runs', '--json', '--limit', '1'], env)).stdout);
    expect(runs[0]).toMatchObject({ status: 'succeeded', failedStage: null, delivered: true, delivery: 'delivered' });

    const sent = await runCli(['run', ...periodArgs, '--fail-on-breaks'], env);
    expect(sent.code, brief(sent.stderr)).toBe(3);
    expect(mails).toHaveLength(2);
  });
});
