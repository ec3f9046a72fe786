/** The deliver stage: e-mails the run's workbook (writing it first if missing) and records the outcome on the run. */
import { access, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename } from 'node:path';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { parseConnectionUrl } from 'nodemailer/lib/shared/index.js';
import { runSecrets, scrubSecrets, urlSecrets } from '../config/load.js';
import { smtpTlsOptions } from '../config/tls.js';
import type { RunStage, StageContext } from './context.js';
import { accountOf } from '../config/group.js';
import type { Logger } from '../log/logger.js';
import { writeReport } from './report.js';
import { openBreaksOfRun } from '../store/recon/breaks.js';
import { getRun, loadRun, recordDelivery } from '../store/runs/runs.js';
import { openBreakCounts } from '../domain/index.js';
import { buildMessage, failureNotice } from '../report/email.js';
import type { Period } from '../domain/period.js';
import { buildDigest } from '../report/digest.js';
import { spanOf } from '../store/db/keyset.js';
import { usdRateInputs } from '../store/report/usd-rates.js';
import { UsdRates } from '../report/usd-rates.js';

export { buildMessage } from '../report/email.js';

export interface DeliveryResult {
  status: 'sent' | 'skipped' | 'failed';
  error?: string;
  messageId?: string;
  /** Sent without the workbook: why (over email.maxMessageBytes, refused by the relay for its size, or asked). */
  withoutWorkbook?: string;
}

export interface DeliveryOptions {
  /** false: send the message without the workbook (`deliver --no-attachment`). */
  attach?: boolean;
}

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** SMTP timeouts: a hung server must fail the delivery (and leave the run undelivered), not the night. */
const SMTP_TIMEOUTS = { connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 60_000 };

/**
 * E-mails the run's workbook. A failed send marks the run undelivered with the reason and keeps
 * the file, so `ramp-recon deliver <runId>` can send it again; a missing file is written again
 * first. Without SMTP_URL delivery is skipped with one log line.
 */
export const deliverRun: RunStage<DeliveryOptions, DeliveryResult> = async (ctx, runId, options = {}) => {
  const log = ctx.logger.child({ stage: 'deliver', runId });
  const { smtpUrl } = ctx.config;
  if (!smtpUrl) {
    log.info('delivery skipped: SMTP_URL is not set');
    return { status: 'skipped' };
  }
  const { db } = ctx.store;

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
  const where = { path, host: hostname() };
  const mailOf = (notAttached?: string) => {
    const message = buildMessage({
      run,
      counts,
      digest,
      attachmentName,
      host: where.host,
      workbookPath: path,
      ...(notAttached ? { notAttached: { reason: notAttached, ...where } } : {}),
    });
    return { subject: message.subject, text: message.text, html: message.html };
  };
  // An account of a multi-account config mails its own recipients; the group's get the batch's report.
  const to = [...accountOf(ctx.config).emailTo];
  const sent = await sendReportMail({
    smtpUrl,
    from: ctx.config.email.from,
    to,
    limit: ctx.config.email.maxMessageBytes,
    path,
    log,
    attach: options.attach,
    allowInsecure: ctx.config.allowInsecureHttp,
    mailOf,
    secrets: runSecrets(ctx),
  });
  if (sent.status === 'sent') await recordDelivery(db, runId, { delivered: true });
  else {
    await recordDelivery(db, runId, { delivered: false, error: sent.error ?? 'unknown error' });
    log.warn(
      { error: sent.error, path },
      `delivery failed; the report is kept, retry with \`ramp-recon deliver ${runId}\``,
    );
  }
  return sent;
};

/**
 * The short e-mail of a run that failed and whose failure report could not be written either (`noWorkbook`: why):
 * what failed and what to do, nothing attached. Reads nothing from the database, which may be what failed; the same
 * recipients as deliverRun. Never throws: a failure is returned with its reason.
 */
export async function deliverFailureNotice(
  ctx: StageContext,
  input: { period: Period; failure: { stage: string; error: string | null }; noWorkbook: string },
): Promise<DeliveryResult> {
  const log = ctx.logger.child({ stage: 'deliver', runId: ctx.runId });
  const { smtpUrl } = ctx.config;
  if (!smtpUrl) return { status: 'skipped' };
  const message = failureNotice({
    run: {
      id: ctx.runId ?? '(unknown)',
      account: ctx.config.account,
      periodFrom: input.period.from,
      periodTo: input.period.to,
    },
    failure: input.failure,
    noWorkbook: input.noWorkbook,
    host: hostname(),
  });
  const sent = await sendReportMail({
    smtpUrl,
    from: ctx.config.email.from,
    to: [...accountOf(ctx.config).emailTo],
    limit: ctx.config.email.maxMessageBytes,
    path: null,
    log,
    allowInsecure: ctx.config.allowInsecureHttp,
    mailOf: () => message,
    secrets: runSecrets(ctx),
  });
  if (sent.status === 'sent') log.warn({ messageId: sent.messageId }, 'failure notice sent without a workbook');
  else log.error({ error: sent.error }, 'failure notice not sent');
  return sent;
}

/** What a report e-mail says, with the workbook or (the reason given) without it. */
export type MailContent = (notAttached?: string) => { subject: string; text: string; html: string };

/**
 * Sends a report e-mail with its workbook attached when it fits: measured before it is sent, a message over
 * `limit` goes without the workbook, and a relay's size refusal is retried without it. Never throws: a failure is
 * returned with its reason, secrets scrubbed.
 */
export async function sendReportMail(input: {
  smtpUrl: string;
  from: string | undefined;
  to: readonly string[];
  limit: number;
  /** The workbook; none: a message without one (the short failure notice), nothing to attach or measure. */
  path: string | null;
  log: Logger;
  attach?: boolean;
  /** The config's allowInsecureHttp: smtp:// to another machine may then go without STARTTLS. */
  allowInsecure: boolean;
  mailOf: MailContent;
  /** The group's secrets, masked in a failure's reason besides the SMTP URL's own. */
  secrets?: readonly string[];
}): Promise<DeliveryResult> {
  const { smtpUrl, from, to, limit, log } = input;
  const secrets = [...urlSecrets(smtpUrl), ...(input.secrets ?? [])];
  const scrub = (text: string) => scrubSecrets(text, secrets);
  const path = input.path;
  try {
    if (!from || to.length === 0) throw new Error('email.from and email.to must be configured to deliver');
    const mailOf = (notAttached?: string): Mail.Options => ({
      from,
      to: [...to],
      ...input.mailOf(notAttached),
      attachments: notAttached || !path ? [] : [{ filename: basename(path), path, contentType: XLSX_TYPE }],
    });
    // Measured before it is sent: a message a relay would refuse goes without the workbook, never bounces.
    const measured = input.attach === false || !path ? null : await measure(mailOf(), path, limit);
    let withoutWorkbook =
      input.attach === false ? 'sent without it on request (`ramp-recon deliver --no-attachment`)' : measured?.over;
    const transport = nodemailer.createTransport({
      ...parseConnectionUrl(smtpUrl),
      ...SMTP_TIMEOUTS,
      ...smtpTlsOptions(smtpUrl, input.allowInsecure),
    });
    try {
      let info;
      try {
        info = await transport.sendMail(mailOf(withoutWorkbook));
      } catch (err) {
        if (withoutWorkbook || !isSizeRefusal(err)) throw err;
        // The relay's own limit is below email.maxMessageBytes: say so and send the message without the workbook.
        withoutWorkbook =
          `the mail relay refused the message with it (${megabytes(measured?.bytes ?? 0)}) as too large: ` +
          `${scrub(refusalText(err))}; set email.maxMessageBytes below the relay's limit (\`ramp-recon doctor\` shows it)`;
        log.warn(
          { reason: withoutWorkbook },
          'the relay refused the message for its size: sending it without the workbook',
        );
        info = await transport.sendMail(mailOf(withoutWorkbook));
      }
      if (withoutWorkbook)
        log.warn(
          { to, messageId: info.messageId, reason: withoutWorkbook, path },
          'report delivered without the workbook',
        );
      else log.info({ to, messageId: info.messageId }, 'report delivered');
      return { status: 'sent', messageId: info.messageId, ...(withoutWorkbook ? { withoutWorkbook } : {}) };
    } finally {
      transport.close();
    }
  } catch (err) {
    return { status: 'failed', error: scrub(describe(err, smtpUrl)) };
  }
}

/**
 * The message with the workbook, measured once: its size in bytes, and why it may not be sent (`over`: it would be
 * over `limit` bytes). The workbook's base64 alone is a lower bound, so a workbook far over the limit is never encoded
 * to be measured.
 */
async function measure(mail: Mail.Options, path: string, limit: number): Promise<{ bytes: number; over?: string }> {
  const base64 = Math.ceil((await stat(path)).size / 3) * 4;
  const bytes = base64 > limit ? base64 : await messageBytes(mail);
  if (bytes <= limit) return { bytes };
  const size =
    base64 > limit
      ? `the workbook alone takes ${megabytes(bytes)} in a message`
      : `the message with it would be ${megabytes(bytes)}`;
  return {
    bytes,
    over: `${size}, over email.maxMessageBytes (${megabytes(limit)}, what the mail relay is taken to accept)`,
  };
}

/** The message's size on the wire (MIME, base64 attachment), counted as it streams, never held whole. */
async function messageBytes(mail: Mail.Options): Promise<number> {
  let bytes = 0;
  for await (const chunk of new MailComposer(mail).compile().createReadStream()) bytes += (chunk as Buffer).length;
  return bytes;
}

/** "12.3 MB", "85 kB": decimal units, as relays state their limits. */
const megabytes = (bytes: number) =>
  bytes >= 1_000_000 ? `${(bytes / 1_000_000).toFixed(1)} MB` : `${Math.ceil(bytes / 1_000)} kB`;

/** 552 (RFC 5321: exceeded storage allocation), 5.3.4 (RFC 3463: message too big), or nodemailer's SIZE check. */
function isSizeRefusal(err: unknown): boolean {
  const e = err as { responseCode?: number; response?: string; code?: string; message?: string };
  return (
    e.responseCode === 552 ||
    /\b5\.3\.4\b/.test(e.response ?? '') ||
    (e.code === 'EMESSAGE' && /size/i.test(e.message ?? ''))
  );
}

function refusalText(err: unknown): string {
  const e = err as { response?: string; message?: string };
  return (e.response ?? e.message ?? String(err)).trim();
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

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
