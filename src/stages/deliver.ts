/** The deliver stage: e-mails the run's workbook (writing it first if missing) and records the outcome on the run. */
import { access } from 'node:fs/promises';
import { basename } from 'node:path';
import nodemailer from 'nodemailer';
import type { StageContext } from './context.js';
import { writeReport } from './report.js';
import { openBreaksOfRun } from '../store/breaks.js';
import { getRun, loadRun, recordDelivery } from '../store/runs.js';
import { openBreakCounts } from '../domain/index.js';
import { buildMessage } from '../report/email.js';
import { buildDigest } from '../report/digest.js';
import { spanOf } from '../store/keyset.js';
import { usdRateInputs } from '../store/usd-rates.js';
import { UsdRates } from '../report/usd-rates.js';

export { buildMessage } from '../report/email.js';

export interface DeliveryResult {
  status: 'sent' | 'skipped' | 'failed';
  error?: string;
  messageId?: string;
}

/** SMTP timeouts: a hung server must fail the delivery (and leave the run undelivered), not the night. */
const SMTP_TIMEOUTS = { connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 60_000 };

/**
 * E-mails the run's workbook. A failed send marks the run undelivered with the reason and keeps
 * the file, so `ramp-recon deliver <runId>` can send it again; a missing file is written again
 * first. Without SMTP_URL delivery is skipped with one log line.
 */
export async function deliverRun(ctx: StageContext, runId: string): Promise<DeliveryResult> {
  const log = ctx.logger.child({ stage: 'deliver', runId });
  const { smtpUrl } = ctx.config;
  if (!smtpUrl) {
    log.info('delivery skipped: SMTP_URL is not set');
    return { status: 'skipped' };
  }
  const { db } = ctx.store;
  const secrets = urlSecrets(smtpUrl);
  const scrub = (text: string) => secrets.reduce((t, s) => t.split(s).join('********'), text);

  const run = await loadRun(db, runId);
  let path = (await getRun(db, runId))?.report_path ?? null;
  // The message tells what the attachment shows: the counts stored with the workbook when it was
  // written, not a new count of the breaks now (other runs may have changed them since).
  let counts = run.breakCounts ?? null;
  let digest = run.reportDigest ?? null;
  if (!path || !(await exists(path))) {
    log.info({ missing: path }, 'no workbook on disk for this run: writing it before delivery');
    ({ path, counts, digest } = await writeReport(ctx, runId));
  }
  const attachmentName = basename(path);
  // A workbook written before its counts and digest were stored with it (sql/0009, sql/0012): made now, the same way.
  if (!counts || !digest) {
    const breaks = await openBreaksOfRun(db, run);
    counts ??= openBreakCounts(breaks);
    digest ??= buildDigest({
      run,
      openBreaks: breaks,
      counts,
      rates: new UsdRates(
        await usdRateInputs(
          db,
          run.account,
          ctx.config.exchange.account,
          spanOf({ from: run.periodFrom, to: run.periodTo }),
        ),
      ),
      now: ctx.now,
      attachmentName,
    });
  }
  const message = buildMessage({ run, counts, digest, attachmentName });

  const from = ctx.config.email.from;
  const to = ctx.config.email.to;
  try {
    if (!from || to.length === 0) throw new Error('email.from and email.to must be configured to deliver');
    const transport = nodemailer.createTransport({ url: smtpUrl, ...SMTP_TIMEOUTS });
    try {
      const info = await transport.sendMail({
        from,
        to,
        subject: message.subject,
        text: message.text,
        html: message.html,
        attachments: [
          {
            filename: attachmentName,
            path,
            contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
          },
        ],
      });
      await recordDelivery(db, runId, { delivered: true });
      log.info({ to, subject: message.subject, messageId: info.messageId }, 'report delivered');
      return { status: 'sent', messageId: info.messageId };
    } finally {
      transport.close();
    }
  } catch (err) {
    const error = scrub(describe(err, smtpUrl));
    await recordDelivery(db, runId, { delivered: false, error });
    log.warn({ error, path }, `delivery failed; the report is kept, retry with \`ramp-recon deliver ${runId}\``);
    return { status: 'failed', error };
  }
}

/**
 * "SMTP smtps://host:465: <what the server or the socket said>; check SMTP_URL ...": the part, the server tried, the
 * fix.
 */
function describe(err: unknown, smtpUrl: string): string {
  let server = 'SMTP';
  try {
    const u = new URL(smtpUrl);
    server = `SMTP ${u.protocol}//${u.hostname}${u.port ? `:${u.port}` : ''}`;
  } catch {
    /* validated with the config */
  }
  let what = String(err);
  if (err instanceof Error) {
    const e = err as Error & { code?: string; responseCode?: number; response?: string };
    what = e.code && !e.message.includes(e.code) ? `${e.message} (${e.code})` : e.message;
  }
  // A missing email.from / email.to is the config's, not the server's.
  if (/email\.from and email\.to/.test(what)) return what;
  return `${server}: ${what}; check SMTP_URL (host, port, user, password) and the server (\`ramp-recon doctor\` tries it)`;
}

/** The password and user info of SMTP_URL, raw and decoded, so neither can reach a log or the run row. */
function urlSecrets(url: string): string[] {
  try {
    const u = new URL(url);
    const values = [u.password, decodeURIComponent(u.password)];
    return values.filter((v) => v.length >= 3);
  } catch {
    return [];
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
