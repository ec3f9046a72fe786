import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { addDays, toDay } from '../../src/util/dates.js';
import { storeKinds } from '../helpers/db.js';
import { attachment, header, textPart } from '../helpers/mime.js';
import { mailbox, type Mailbox } from '../helpers/smtp.js';
import { type CliWorld, brief, freePort, openCliWorld, runCli } from './helpers.js';

/**
 * Issue 14 point 7, as a user met it: a one-day run whose e-mail could not be sent, a later run that
 * opened more breaks, then `deliver <runId>`: the subject must count what the attached workbook
 * shows, not the breaks of the moment. And a one-day run while breaks of other days stay open: the
 * subject, the text and html bodies, the attached workbook's Summary and the JSON give the same two
 * counts (of this period, carried over) and severity counts; the body lists every rule with breaks.
 */
const SANDBOX = { seed: 21, days: 5, ordersPerDay: 8, fillsPerOrder: 2 };
const kind = storeKinds.includes('postgres') ? 'postgres' : 'embedded';

type Split = { total: number; inPeriod: number; carriedOver: number };
interface Counts extends Split {
  severity: Record<'high' | 'medium' | 'low', Split>;
  rules: Array<Split & { code: string; severity: string }>;
}
interface Summary {
  runId: string;
  status: string;
  breaks: Array<{ code: string; key: string; severity: string; inPeriod: boolean }>;
  report: string;
  breakCounts: Counts;
}

const SEVERITIES = ['high', 'medium', 'low'] as const;
const split = (total: number, inPeriod: number, carriedOver: number): Split => ({ total, inPeriod, carriedOver });

/** What one e-mail says: the subject's figures, and the counts of the text and of the html body. */
function mailCounts(raw: string) {
  const subject = header(raw, 'Subject');
  const s = /: (\d+) open breaks? \((\d+) this period, (\d+) carried over\)/.exec(subject);
  const text = textPart(raw, 'text/plain');
  const html = textPart(raw, 'text/html');
  const textSplit = (label: string) => {
    const m = new RegExp(`${label}: (\\d+) \\(high (\\d+), medium (\\d+), low (\\d+)\\)`).exec(text);
    return m ? m.slice(1).map(Number) : null;
  };
  const htmlRow = (label: string) => {
    const m = new RegExp(`<td>${label}</td><td[^>]*>(\\d+)</td><td[^>]*>(\\d+)</td><td[^>]*>(\\d+)</td>`).exec(html);
    return m ? split(Number(m[1]), Number(m[2]), Number(m[3])) : null;
  };
  return {
    subject: {
      total: Number(s?.[1]),
      inPeriod: s?.[2] === undefined ? null : Number(s[2]),
      carriedOver: s?.[3] === undefined ? null : Number(s[3]),
    },
    text: {
      all: textSplit('Open breaks'),
      inPeriod: textSplit('of this period'),
      carriedOver: textSplit('carried over'),
    },
    textRules: [...text.matchAll(/^ {2}([A-Z][A-Z_]+): (\d+) \((\d+) \/ (\d+);/gm)].map((m) => ({
      code: m[1]!,
      ...split(Number(m[2]), Number(m[3]), Number(m[4])),
    })),
    html: Object.fromEntries([...SEVERITIES, 'total'].map((k) => [k, htmlRow(k)])),
    htmlRules: [
      ...html.matchAll(/<tr><td>([A-Z][A-Z_]+)<\/td><td[^>]*>(\d+)<\/td><td[^>]*>(\d+)<\/td><td[^>]*>(\d+)<\/td>/g),
    ].map((m) => ({ code: m[1]!, ...split(Number(m[2]), Number(m[3]), Number(m[4])) })),
  };
}

/** The attached workbook's Summary ("Open breaks" and "Open breaks by rule") and its Breaks sheet. */
async function workbookCounts(bytes: Buffer) {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(bytes as unknown as ArrayBuffer);
  const rows: unknown[][] = [];
  wb.getWorksheet('Summary')!.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
  const at = rows.findIndex((r) => r[0] === 'Open breaks');
  const severity: Record<string, Split | null> = {};
  for (const label of [...SEVERITIES, 'total']) {
    const r = rows.slice(at).find((x) => x[0] === label);
    severity[label] = r ? split(Number(r[1]), Number(r[2]), Number(r[3])) : null;
  }
  const byRule = rows.findIndex((r) => r[0] === 'Open breaks by rule');
  const rules: Array<Split & { code: string }> = [];
  if (byRule >= 0)
    for (const r of rows.slice(byRule + 2)) {
      if (typeof r[0] !== 'string' || !/^[A-Z][A-Z_]+$/.test(r[0])) break;
      rules.push({ code: r[0], ...split(Number(r[2]), Number(r[3]), Number(r[4])) });
    }
  const breaks: Array<{ code: string; key: string; inPeriod: string }> = [];
  const sheet = wb.getWorksheet('Breaks')!;
  const headers = (sheet.getRow(1).values as unknown[]).map(String);
  sheet.eachRow((row, n) => {
    if (n === 1) return;
    const v = row.values as unknown[];
    // The key links to its data-sheet row when it has one: the cell is then { text, hyperlink }.
    const key = v[headers.indexOf('Key')] as string | { text: string };
    breaks.push({
      code: String(v[headers.indexOf('Rule code')]),
      key: typeof key === 'object' && key !== null ? key.text : String(key),
      inPeriod: String(v[headers.indexOf('This period?')]),
    });
  });
  return { severity, rules, breaks };
}

const sortRules = <T extends { code: string }>(list: T[]) => [...list].sort((a, b) => a.code.localeCompare(b.code));

describe(
  `open-break counts agree in subject, bodies, workbook and JSON, end to end [${kind}]`,
  { timeout: 300_000 },
  () => {
    let sandbox: Sandbox;
    let world: CliWorld | undefined;
    let env: NodeJS.ProcessEnv;
    let smtp: Mailbox | undefined;
    let port = 0;
    const today = toDay(new Date());
    /** The day of each planted break's record (partner order, fill, exchange order, deposit, withdrawal). */
    const dayOf = new Map<string, string>();
    let day = '';

    beforeAll(async () => {
      sandbox = await startSandbox({ ...SANDBOX, discrepancies: true, live: false, faults: 'none' });
      port = await freePort();
      world = await openCliWorld(kind, 'counts', sandbox.env, {
        partner: { feeRate: sandbox.partnerFeeRate },
        email: { from: 'recon@example.com', to: ['finance@example.com'] },
      });
      env = { ...world.env, SMTP_URL: `smtp://127.0.0.1:${port}`, LOG_LEVEL: 'warn' };
      smtp = mailbox();

      const d = (ms: number) => toDay(new Date(ms));
      for (const o of sandbox.data.partnerOrderRecords()) dayOf.set(`P:${o.orderId}`, d(o.createdAtMs));
      for (const f of sandbox.data.fills()) dayOf.set(`F:${f.execId}`, d(f.timestamp));
      for (const o of sandbox.data.exchangeOrders()) dayOf.set(`O:${o.exOrdId}`, d(o.timestamp));
      for (const x of sandbox.data.deposits()) dayOf.set(`D:${x.depositId}`, d(x.timestamp));
      for (const x of sandbox.data.withdrawals()) dayOf.set(`W:${x.withdrawalId}`, d(x.timestamp));
      // The one-day period: the day holding most planted records, so both counts are non-zero.
      const perDay = new Map<string, number>();
      for (const b of sandbox.expectedBreaks()) {
        const at = entityDay(b.code, b.key);
        if (at && at < today) perDay.set(at, (perDay.get(at) ?? 0) + 1);
      }
      day = [...perDay].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0];
    });

    afterAll(async () => {
      await smtp?.close();
      await world?.close();
      await sandbox?.close();
    });

    /** The day of a break's record, by the key of its rule (docs/apis.md "JSON summary"); undefined for a currency. */
    function entityDay(code: string, key: string): string | undefined {
      if (code.startsWith('P_') || code.startsWith('X_')) return dayOf.get(`P:${key}`);
      if (code === 'E_FILL_QTY' || code === 'E_FILL_AVGPX') return dayOf.get(`O:${key}`);
      if (['E_FILL_ORPHAN', 'E_FEE_RATE', 'E_SYMBOL_RULES', 'E_FILL_ORDER_MISMATCH'].includes(code))
        return dayOf.get(`F:${key}`) ?? dayOf.get(`O:${key}`);
      if (code === 'E_STALE') return dayOf.get(`D:${key}`) ?? dayOf.get(`W:${key}`);
      if (code === 'E_WITHDRAWAL_BENEFICIARY') return dayOf.get(`W:${key}`);
      return undefined;
    }

    const oneDay = () => ['--from', day, '--to', addDays(day, 1)];

    it('a retried delivery sends the counts of the workbook it attaches, not those of a later run', async () => {
      // 1. A one-day run whose e-mail cannot be sent (no SMTP server yet): the workbook stays.
      const first = await runCli(['run', ...oneDay(), '--json'], env);
      expect(first.code, brief(first.stderr)).toBe(1);
      const a = JSON.parse(first.stdout) as Summary;
      // 2. A later run over every day opens more breaks (E_BALANCE_ROLL among them: a second snapshot).
      const later = await runCli(
        ['run', '--from', addDays(today, -SANDBOX.days), '--to', today, '--json', '--no-email'],
        env,
      );
      expect(later.code, brief(later.stderr)).toBe(0);
      const b = JSON.parse(later.stdout) as Summary;
      expect(b.breaks.length).toBeGreaterThan(a.breaks.length);
      expect(b.breaks.some((x) => x.code === 'E_BALANCE_ROLL')).toBe(true);
      // 3. The delivery of the first run, retried now.
      await smtp!.listen(port);
      const retried = await runCli(['deliver', a.runId], env);
      expect(retried.code, brief(retried.stderr)).toBe(0);
      expect(smtp!.mails).toHaveLength(1);
      const mail = mailCounts(smtp!.mails[0]!);
      const book = await workbookCounts(attachment(smtp!.mails[0]!, a.report.split('/').pop()!).bytes);
      expect(mail.subject.total, header(smtp!.mails[0]!, 'Subject')).toBe(book.severity.total?.total);
      expect(mail.subject.inPeriod).toBe(book.severity.total?.inPeriod);
      expect(mail.text.all?.[1]).toBe(book.severity.high?.total);
      expect(mail.subject.total).toBe(a.breaks.length);
      // The run did not check E_BALANCE_ROLL (one snapshot) and its workbook has no such break: neither has its e-mail.
      const text = textPart(smtp!.mails[0]!, 'text/plain');
      expect(text).toMatch(/^Not checked in this run: .*E_BALANCE_ROLL/m);
      expect(text).not.toMatch(/^ {2}E_BALANCE_ROLL: /m);
      expect(sortRules(mail.textRules)).toEqual(sortRules(book.rules));
    });

    it('a one-day run with breaks of other days still open: subject, text, html, workbook and JSON give the same two counts', async () => {
      const result = await runCli(['run', ...oneDay(), '--json'], env);
      expect(result.code, brief(result.stderr)).toBe(0);
      const json = JSON.parse(result.stdout) as Summary;
      expect(smtp!.mails).toHaveLength(2);
      const raw = smtp!.mails[1]!;
      const mail = mailCounts(raw);
      const book = await workbookCounts(attachment(raw, json.report.split('/').pop()!).bytes);

      // The JSON: every break says whether it belongs to the period, and the counts are those of its list.
      const c = json.breakCounts;
      expect(json.breaks.every((x) => typeof x.inPeriod === 'boolean')).toBe(true);
      expect(c.total).toBe(json.breaks.length);
      expect(c.inPeriod).toBe(json.breaks.filter((x) => x.inPeriod).length);
      for (const sev of SEVERITIES)
        expect(c.severity[sev]).toEqual(
          split(
            json.breaks.filter((x) => x.severity === sev).length,
            json.breaks.filter((x) => x.severity === sev && x.inPeriod).length,
            json.breaks.filter((x) => x.severity === sev && !x.inPeriod).length,
          ),
        );
      expect(c.inPeriod).toBeGreaterThan(0);
      expect(c.carriedOver).toBeGreaterThan(0);
      // Each planted break with a dated record is of this period exactly when its record is of this day.
      for (const p of sandbox.expectedBreaks()) {
        const at = entityDay(p.code, p.key);
        const found = json.breaks.find((x) => x.code === p.code && x.key === p.key);
        if (at && found) expect(found.inPeriod, `${p.code} ${p.key} of ${at}`).toBe(at === day);
      }

      // Subject, text, html and the attached workbook's Summary: the same figures.
      expect(mail.subject).toEqual({ total: c.total, inPeriod: c.inPeriod, carriedOver: c.carriedOver });
      const bySeverity = (part: keyof Split) => [
        c[part],
        c.severity.high[part],
        c.severity.medium[part],
        c.severity.low[part],
      ];
      expect(mail.text).toEqual({
        all: bySeverity('total'),
        inPeriod: bySeverity('inPeriod'),
        carriedOver: bySeverity('carriedOver'),
      });
      expect(mail.html).toEqual({
        high: c.severity.high,
        medium: c.severity.medium,
        low: c.severity.low,
        total: split(c.total, c.inPeriod, c.carriedOver),
      });
      expect(book.severity).toEqual(mail.html);

      // Every rule with an open break, none cut, with its two counts, in the text, the html and the workbook.
      const rules = sortRules(
        c.rules.map(({ code, total, inPeriod, carriedOver }) => ({ code, total, inPeriod, carriedOver })),
      );
      expect(rules.length).toBeGreaterThan(10);
      expect(sortRules(mail.textRules)).toEqual(rules);
      expect(sortRules(mail.htmlRules)).toEqual(rules);
      expect(sortRules(book.rules)).toEqual(rules);

      // The Breaks sheet says of each break whether it is of this period, as the JSON does.
      const yes = (x: { code: string; key: string }) => `${x.code} ${x.key}`;
      expect(
        book.breaks
          .filter((x) => x.inPeriod === 'yes')
          .map(yes)
          .sort(),
      ).toEqual(
        json.breaks
          .filter((x) => x.inPeriod)
          .map(yes)
          .sort(),
      );
      expect(
        book.breaks
          .filter((x) => x.inPeriod === 'no')
          .map(yes)
          .sort(),
      ).toEqual(
        json.breaks
          .filter((x) => !x.inPeriod)
          .map(yes)
          .sort(),
      );
    });
  },
);
