import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/load.js';
import { deliverRun } from '../../src/stages/deliver.js';
import { createLogger } from '../../src/log/logger.js';
import type { StageContext } from '../../src/stages/context.js';
import { writeReport } from '../../src/stages/report.js';
import { describeEachStore } from '../helpers/db.js';
import { attachment, header } from '../helpers/mime.js';

const NOW = new Date('2026-11-02T02:00:00Z');
const PASSWORD = 's3cr3t-smtp-pass';

interface Received {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server on a free port; `refuse` makes it reject every message with 550. */
async function startServer(): Promise<{
  port: number;
  received: Received[];
  state: { refuse: boolean };
  close(): Promise<void>;
}> {
  const received: Received[] = [];
  const state = { refuse: false };
  const server = new SMTPServer({
    authOptional: false,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === 'recon' && auth.password === PASSWORD) cb(null, { user: 'recon' });
      else cb(new Error('bad credentials'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (state.refuse) {
          const err = new Error('mailbox unavailable') as Error & { responseCode: number };
          err.responseCode = 550;
          cb(err);
          return;
        }
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('latin1'),
        });
        cb(null);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, received, state, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describeEachStore('deliver over SMTP', (t) => {
  let smtp: Awaited<ReturnType<typeof startServer>>;
  let reportsDir: string;
  let logText = '';
  const ctxWith = (config: Config, runId: string): StageContext => ({
    store: t.store,
    config,
    logger: createLogger({
      level: 'debug',
      destination: new Writable({
        write(chunk, _enc, cb) {
          logText += String(chunk);
          cb();
        },
      }),
    }),
    runId,
    now: NOW,
  });
  const configFor = (port: number): Config => {
    const base = loadConfig({ env: { REPORTS_DIR: reportsDir } });
    return {
      ...base,
      smtpUrl: `smtp://recon:${PASSWORD}@127.0.0.1:${port}`,
      email: {
        from: 'recon@example.com',
        to: ['finance@example.com', 'treasury@example.com'],
        maxMessageBytes: 10_000_000,
      },
    };
  };

  async function seedRun(id: string): Promise<void> {
    await t.store.db
      .insertInto('run')
      .values({
        id,
        command: 'run',
        period_from: '2026-11-01',
        period_to: '2026-11-02',
        started_at: NOW,
        status: 'running',
        counts: JSON.stringify({
          partnerOrders: 2,
          fills: 0,
          exchangeOrders: 0,
          deposits: 0,
          withdrawals: 0,
          balanceSnapshots: 0,
          quarantined: 0,
        }),
        rule_results: JSON.stringify([
          { code: 'P_FEE_USD', severity: 'medium', description: 'USD fee', status: 'breaks', checked: 2, breaks: 2 },
        ]),
      })
      .execute();
  }

  beforeAll(async () => {
    reportsDir = mkdtempSync(join(tmpdir(), 'rr-deliver-'));
    smtp = await startServer();
    await seedRun('r-deliver-1');
    await seedRun('r-deliver-2');
    for (const key of ['ord-a', 'ord-b'])
      await t.store.db
        .insertInto('break')
        .values({
          code: 'P_FEE_USD',
          key,
          entity: 'partnerOrder',
          unit: 'amount',
          severity: key === 'ord-a' ? 'high' : 'medium',
          status: 'open',
          first_seen_run: 'r-deliver-1',
          first_seen_at: NOW,
          last_seen_run: 'r-deliver-1',
          last_seen_at: NOW,
        })
        .execute();
  });
  afterAll(async () => {
    await smtp?.close();
  });

  it('sends the workbook to the configured recipients, byte for byte', async () => {
    const ctx = ctxWith(configFor(smtp.port), 'r-deliver-1');
    const { path } = await writeReport(ctx, 'r-deliver-1');
    const result = await deliverRun(ctx, 'r-deliver-1');
    expect(result).toMatchObject({ status: 'sent' });
    expect(result.messageId).toBeTruthy();

    expect(smtp.received).toHaveLength(1);
    const mail = smtp.received[0]!;
    expect(mail.from).toBe('recon@example.com');
    expect(mail.to).toEqual(['finance@example.com', 'treasury@example.com']);
    // The two breaks name orders the store does not hold, so neither belongs to the period.
    expect(header(mail.raw, 'Subject')).toBe('ramp-recon 2026-11-01: 2 open breaks (0 this period, 2 carried over)');
    expect(header(mail.raw, 'To')).toContain('finance@example.com');
    expect(mail.raw).toContain('text/plain');
    expect(mail.raw).toContain('text/html');
    const att = attachment(mail.raw, 'ramp-recon_2026-11-01_r-deliver-1.xlsx');
    expect(att.headers).toContain('spreadsheetml');
    expect(att.bytes.equals(readFileSync(path))).toBe(true);

    const run = await t.store.db
      .selectFrom('run')
      .selectAll()
      .where('id', '=', 'r-deliver-1')
      .executeTakeFirstOrThrow();
    expect(run.delivered).toBe(true);
    expect(run.delivered_at).toBeInstanceOf(Date);
    expect(run.delivery_error).toBeNull();
    expect(logText).not.toContain(PASSWORD);
  });

  it('marks the run undelivered when the server refuses, keeps the file, and delivers on retry', async () => {
    const ctx = ctxWith(configFor(smtp.port), 'r-deliver-2');
    const { path } = await writeReport(ctx, 'r-deliver-2');
    smtp.state.refuse = true;
    const failed = await deliverRun(ctx, 'r-deliver-2');
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/550|mailbox unavailable/);
    // the part, the server tried and what to do
    expect(failed.error).toMatch(new RegExp(`^SMTP smtp://127\\.0\\.0\\.1:${smtp.port}: .*; check SMTP_URL`));
    let run = await t.store.db.selectFrom('run').selectAll().where('id', '=', 'r-deliver-2').executeTakeFirstOrThrow();
    expect(run.delivered).toBe(false);
    expect(run.delivery_error).toMatch(/mailbox unavailable/);
    expect(run.report_path).toBe(path);
    expect(existsSync(path)).toBe(true);

    smtp.state.refuse = false;
    const before = smtp.received.length;
    const retried = await deliverRun(ctx, 'r-deliver-2');
    expect(retried.status).toBe('sent');
    expect(smtp.received.length).toBe(before + 1);
    run = await t.store.db.selectFrom('run').selectAll().where('id', '=', 'r-deliver-2').executeTakeFirstOrThrow();
    expect(run.delivered).toBe(true);
    expect(run.delivery_error).toBeNull();
    expect(logText).not.toContain(PASSWORD);
  });

  it('writes the workbook again when the file is gone', async () => {
    const ctx = ctxWith(configFor(smtp.port), 'r-deliver-1');
    const row = await t.store.db
      .selectFrom('run')
      .select('report_path')
      .where('id', '=', 'r-deliver-1')
      .executeTakeFirstOrThrow();
    rmSync(row.report_path!);
    const result = await deliverRun(ctx, 'r-deliver-1');
    expect(result.status).toBe('sent');
    expect(existsSync(row.report_path!)).toBe(true);
  });

  it('does not leak the SMTP password when authentication fails', async () => {
    const config = configFor(smtp.port);
    const ctx = ctxWith({ ...config, smtpUrl: `smtp://recon:wrong-${PASSWORD}@127.0.0.1:${smtp.port}` }, 'r-deliver-2');
    const result = await deliverRun(ctx, 'r-deliver-2');
    expect(result.status).toBe('failed');
    expect(result.error).not.toContain(PASSWORD);
    const run = await t.store.db
      .selectFrom('run')
      .selectAll()
      .where('id', '=', 'r-deliver-2')
      .executeTakeFirstOrThrow();
    expect(run.delivered).toBe(false);
    expect(run.delivery_error ?? '').not.toContain(PASSWORD);
    expect(logText).not.toContain(PASSWORD);
  });

  it('skips with one log line when no SMTP is configured', async () => {
    logText = '';
    const ctx = ctxWith(loadConfig({ env: { REPORTS_DIR: reportsDir } }), 'r-deliver-1');
    const result = await deliverRun(ctx, 'r-deliver-1');
    expect(result).toEqual({ status: 'skipped' });
    const lines = logText.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('delivery skipped');
  });
});
