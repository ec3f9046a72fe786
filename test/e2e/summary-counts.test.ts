import { basename, dirname, join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { addDays, toDay } from '../../src/util/dates.js';
import { storeKinds } from '../helpers/db.js';
import { attachment, header, textPart } from '../helpers/mime.js';
import { mailbox, type Mailbox } from '../helpers/smtp.js';
import { type CliWorld, brief, freePort, openCliWorld, runCli } from './helpers.js';
import { validEvent } from '../helpers/webhook-corpus.js';
import { openStore, type Store } from '../../src/store/db/database.js';
import { handleEventBody } from '../../src/sources/partner/webhook-events.js';

/**
 * Issue 15, Must show "counts on Summary equal the JSON's": the built CLI runs against the sandbox
 * with planted breaks; the workbook's Summary, read back with exceljs, gives the open / of this
 * period / carried over / explained counts, per severity and per rule, that `--json` gives; the
 * e-mail (built by `deliver` from the counts and the digest stored with the workbook) has the same
 * numbers; the period is one label in the Summary, the file name and the subject; the banner and
 * the Status line agree; the balance table has a USD value per currency and a grand total.
 */
const SANDBOX = { seed: 21, days: 5, ordersPerDay: 8, fillsPerOrder: 2 };
const kind = storeKinds.includes('postgres') ? 'postgres' : 'embedded';

type Split = { total: number; inPeriod: number; carriedOver: number };
interface StakeSplit {
  total: string;
  inPeriod: string;
  carriedOver: string;
}
interface Summary {
  runId: string;
  moneyAtStake: {
    total: string;
    shortfalls: StakeSplit;
    surpluses: StakeSplit;
    noFigure: Split;
    noMoney: Split;
  };
  status: string;
  report: string;
  breaks: Array<{ code: string; key: string; severity: string; inPeriod: boolean }>;
  breakCounts: Split & {
    explained: number;
    severity: Record<'high' | 'medium' | 'low', Split>;
    rules: Array<Split & { code: string; severity: string; explained: number }>;
  };
  webhooks: { events: number; duplicates: number; conflicts: number; drifted: number; driftFields: string[] };
  lateData: {
    total: number;
    opened: number;
    reopened: number;
    resolved: number;
    breaks: Array<{ code: string; key: string; day: string; event: string }>;
  };
}

/**
 * Webhook events received yesterday (inside the period), through the receiver's own path: one
 * event delivered twice (a duplicate), then again with another body (a conflict), and one with a
 * field beyond the contract (schema drift). Their orders are old and final, of a day no run listed:
 * the next reconcile judges them as changes (docs/rules.md "What a run judges").
 */
async function receiveWebhooks(store: Store, receivedAt: Date): Promise<void> {
  const old = {
    createdAt: '2020-01-01T00:00:00.000000001Z',
    orderStateUpdatedAt: '2020-01-01T00:00:00.000000001Z',
    orderState: 'FAILED',
  };
  const first = validEvent(old, 'summary');
  const drifted = validEvent({ ...old, driftField: 'x' }, 'summary');
  const bodies = [first, first, { ...first, userId: 'someone-else' }, drifted];
  const outcomes: string[] = [];
  for (const body of bodies) {
    const outcome = await handleEventBody({
      db: store.db,
      account: 'default',
      now: receivedAt,
      endpoint: '/webhooks',
      remoteAddr: '127.0.0.1',
      body: JSON.stringify(body),
    });
    outcomes.push(outcome.kind);
  }
  expect(outcomes).toEqual(['stored', 'duplicate', 'conflict', 'stored']);
}

/** The Summary sheet as rows of plain values (column A first). */
async function summaryRows(path: string): Promise<unknown[][]> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path);
  const rows: unknown[][] = [];
  wb.getWorksheet('Summary')!.eachRow({ includeEmpty: true }, (row, n) => {
    rows[n - 1] = (row.values as unknown[])
      .slice(1)
      .map((v) => (v && typeof v === 'object' && 'result' in v ? (v as { result: unknown }).result : v));
  });
  return Array.from(rows, (r) => r ?? []);
}

/** The rows of the table under `title` (its header row first), up to the next empty row. */
function table(rows: unknown[][], title: string): unknown[][] {
  const at = rows.findIndex((r) => r[0] === title);
  if (at < 0) return [];
  const out: unknown[][] = [];
  for (const r of rows.slice(at + 1)) {
    if (!r.length || r.every((c) => c === null || c === undefined)) break;
    out.push(r);
  }
  return out;
}

describe(`Summary counts equal the JSON's, and the e-mail's, end to end [${kind}]`, { timeout: 300_000 }, () => {
  let sandbox: Sandbox;
  let world: CliWorld | undefined;
  let env: NodeJS.ProcessEnv;
  let smtp: Mailbox | undefined;
  const today = toDay(new Date());
  const from = addDays(today, -SANDBOX.days);

  beforeAll(async () => {
    sandbox = await startSandbox({ ...SANDBOX, discrepancies: true, live: false, faults: 'none' });
    const port = await freePort();
    world = await openCliWorld(kind, 'summary', sandbox.env, {
      partner: { feeRate: sandbox.partnerFeeRate },
      email: { from: 'recon@example.com', to: ['finance@example.com'] },
    });
    env = { ...world.env, SMTP_URL: `smtp://127.0.0.1:${port}`, LOG_LEVEL: 'warn' };
    smtp = mailbox();
    await smtp.listen(port);
  });

  afterAll(async () => {
    await smtp?.close();
    await world?.close();
    await sandbox?.close();
  });

  it('the Summary read back gives the JSON counts; the e-mail from the stored digest gives them too', async () => {
    // Twice: the second run has two balance snapshots, so the balance table rolls forward.
    const first = await runCli(['run', '--from', from, '--to', today, '--json'], env);
    expect(first.code, brief(first.stderr)).toBe(0);
    // Between the runs (the embedded database is free then): webhook figures for the Summary and the JSON.
    const store = world!.pg?.store ?? (await openStore({ dataDir: join(world!.dir, 'data') }));
    try {
      await receiveWebhooks(store, new Date(`${addDays(today, -1)}T12:00:00Z`));
    } finally {
      if (!world!.pg) await store.close();
    }
    const result = await runCli(['run', '--from', from, '--to', today, '--json'], env);
    expect(result.code, brief(result.stderr)).toBe(0);
    const json = JSON.parse(result.stdout) as Summary;
    const c = json.breakCounts;
    expect(c.total).toBeGreaterThan(10);
    expect(c.total).toBe(json.breaks.length);

    // One period label: the file name, the Summary's Period row, the subject.
    const label = `${from} to ${addDays(today, -1)}`;
    expect(basename(json.report)).toBe(`ramp-recon_${from}_to_${addDays(today, -1)}_${json.runId}.xlsx`);
    const rows = await summaryRows(json.report);
    expect(rows.find((r) => r[0] === 'Period')?.[1]).toBe(label);
    expect(rows.find((r) => r[0] === 'Run id')?.[1]).toBe(json.runId);
    expect(rows.flat().some((v) => typeof v === 'string' && /exclusive/i.test(v))).toBe(false);

    // Banner and Status agree (planted breaks are unexplained: red on both).
    expect(String(rows[0]![0])).toMatch(/^NOT RECONCILED: \d+ open breaks/);
    expect(String(rows.find((r) => r[0] === 'Status')?.[1])).toBe(
      `not reconciled: ${c.total} open breaks (${c.total - c.explained} unexplained, ${c.explained} explained)`,
    );

    // Open breaks per severity: open, of this period, carried over, explained.
    const severity = table(rows, 'Open breaks');
    expect(severity[0]).toEqual(['Severity', 'Open', 'Of this period', 'Carried over', 'Explained']);
    const row = (label: string) => severity.find((r) => r[0] === label)!.slice(1, 5);
    for (const sev of ['high', 'medium', 'low'] as const)
      expect(row(sev).slice(0, 3), sev).toEqual([
        c.severity[sev].total,
        c.severity[sev].inPeriod,
        c.severity[sev].carriedOver,
      ]);
    expect(row('total')).toEqual([c.total, c.inPeriod, c.carriedOver, c.explained]);

    // Per rule: every rule with an open break, the same four counts.
    const byRule = table(rows, 'Open breaks by rule');
    expect(byRule[0]!.slice(0, 6)).toEqual(['Rule', 'Severity', 'Open', 'Of this period', 'Carried over', 'Explained']);
    const sheetRules = byRule
      .slice(1)
      .map((r) => ({ code: r[0], severity: r[1], total: r[2], inPeriod: r[3], carriedOver: r[4], explained: r[5] }));
    expect(sheetRules).toEqual(
      c.rules.map((r) => ({
        code: r.code,
        severity: r.severity,
        total: r.total,
        inPeriod: r.inPeriod,
        carriedOver: r.carriedOver,
        explained: r.explained,
      })),
    );

    // The balance table: a column per currency, an actual closing and a USD value, a grand total in USD.
    // its title names the snapshots it rolls between (issue 45)
    const balanceTitle = rows.find((r) => typeof r[0] === 'string' && r[0].startsWith('Balances per currency: roll'));
    const balances = table(rows, String(balanceTitle?.[0]));
    const currencies = balances
      .find((r) => r[0] === 'Currency')!
      .slice(1)
      .filter(Boolean);
    expect(currencies.length).toBeGreaterThan(1);
    // every amount a number cell (an exact value beyond 15 digits is in the cell's note, not instead of the number)
    const amountCell = (v: unknown) => typeof v === 'number';
    for (const label of ['Opening', 'Deposits', 'Expected closing', 'Actual closing', 'Residual (actual - expected)'])
      expect(
        balances
          .find((r) => r[0] === label)!
          .slice(1, 1 + currencies.length)
          .every(amountCell),
        label,
      ).toBe(true);
    expect(typeof balances.find((r) => r[0] === 'Total closing USD (all currencies)')?.[1]).toBe('number');
    expect(table(rows, 'Partner fees earned and exchange fees paid per day').length).toBeGreaterThan(2);

    // Webhook figures: the JSON carries those of the Summary, conflicts included.
    expect(json.webhooks).toEqual({ events: 2, duplicates: 1, conflicts: 1, drifted: 1, driftFields: ['driftField'] });
    const figure = (label: string) => rows.find((r) => r[0] === label)?.[1];
    expect(figure('Webhook events received')).toBe(json.webhooks.events);
    expect(figure('Webhook duplicates acknowledged')).toBe(json.webhooks.duplicates);
    expect(figure('Webhook conflicts (eventId reused, other body)')).toBe(json.webhooks.conflicts);
    expect(figure('Webhook events with schema drift')).toBe(json.webhooks.drifted);

    // The e-mail of that run: sent by the run, built from the counts and digest stored with the workbook.
    const raw = smtp!.mails[smtp!.mails.length - 1]!;
    const subject = header(raw, 'Subject');
    expect(subject).toBe(
      `ramp-recon ${label}: ${c.total} open breaks (${c.inPeriod} this period, ${c.carriedOver} carried over)${c.explained ? `, ${c.explained} explained` : ''}`,
    );
    const text = textPart(raw, 'text/plain');
    expect(text).toContain(
      `Open breaks: ${c.total} (high ${c.severity.high.total}, medium ${c.severity.medium.total}, low ${c.severity.low.total})`,
    );
    expect(text).toContain(`  of this period: ${c.inPeriod} (`);
    expect(text).toContain(`  carried over: ${c.carriedOver} (`);
    expect(text).toContain(`  explained: ${c.explained}`);
    expect(text).toContain(`Status: ${String(rows.find((r) => r[0] === 'Status')?.[1])}`);
    expect(text.split(/\r?\n/)[0]).toBe(rows[0]![0]);
    const mailRules = [...text.matchAll(/^ {2}([A-Z][A-Z_]+): (\d+) \((\d+) \/ (\d+);/gm)].map((m) => ({
      code: m[1],
      total: Number(m[2]),
      inPeriod: Number(m[3]),
      carriedOver: Number(m[4]),
    }));
    expect(mailRules).toEqual(
      c.rules.map((r) => ({ code: r.code, total: r.total, inPeriod: r.inPeriod, carriedOver: r.carriedOver })),
    );
    // Five open breaks, one line each: code, record and USD impact, then severity and age; each one of the JSON's.
    const listed = [
      ...text.matchAll(
        /^ {2}\d\. ([A-Z_]+) (?:[a-z ]+ )?(\S+): (?:USD -?[\d,.]+|no money|no USD figure); (high|medium|low), (\d+) days? old, (?:this period|carried over)/gm,
      ),
    ];
    expect(listed).toHaveLength(5);
    for (const m of listed)
      expect(
        json.breaks.some((b) => b.code === m[1] && b.key === m[2] && b.severity === m[3]),
        `${m[1]} ${m[2]}`,
      ).toBe(true);
    const html = textPart(raw, 'text/html');
    expect(html.match(/<ol>[\s\S]*?<\/ol>/)![0].match(/<li>/g)).toHaveLength(5);
    // Money at stake: the JSON's figures are the Summary's (read back) and the e-mail's, shortfalls and surpluses apart.
    const stake = json.moneyAtStake;
    const stakeRow = (label: string) => rows.find((r) => r[0] === label)!.slice(1, 4);
    const figures = (s: StakeSplit) => [s.total, s.inPeriod, s.carriedOver].map(Number);
    expect(stakeRow('Shortfalls: money missing or gone').map(Number)).toEqual(figures(stake.shortfalls));
    expect(stakeRow('Surpluses: money extra').map(Number)).toEqual(figures(stake.surpluses));
    expect(stakeRow('Open breaks without a USD figure')).toEqual([
      stake.noFigure.total,
      stake.noFigure.inPeriod,
      stake.noFigure.carriedOver,
    ]);
    expect(stakeRow('Open breaks that move no money')[0]).toBe(stake.noMoney.total);
    expect(Number(stake.shortfalls.total)).toBeLessThan(0);
    const usd = (t: string) =>
      Number(t).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
    expect(text).toContain(
      `  shortfalls USD ${usd(stake.shortfalls.total)} (this period ${usd(stake.shortfalls.inPeriod)}`,
    );
    expect(text).toContain(`  surpluses USD ${usd(stake.surpluses.total)} (`);
    // Issue 45 point 6: read alone, the verdict, the money at stake and the breaks to look at first come before the
    // counts, and the reports' folder is named on the last line only, "Where the files are"
    const mailLines = text.trimEnd().split(/\r?\n/);
    const at = (start: string) => mailLines.findIndex((l) => l.startsWith(start));
    expect(at('Money at stake:')).toBeGreaterThan(0);
    expect(at('Money at stake:')).toBeLessThan(at('The 5 open breaks to look at first'));
    expect(at('The 5 open breaks to look at first')).toBeLessThan(at('Open breaks: '));
    const folder = dirname(json.report);
    expect(mailLines.filter((l) => l.includes(folder) || /docs\/|\.md\b/.test(l))).toEqual([mailLines.at(-1)]);
    expect(mailLines.at(-1)).toMatch(/^Where the files are, on \S+: the workbook /);
    expect(mailLines.at(-1)).toContain(`: the workbook ${json.report};`);
    // The webhook events between the runs brought orders of 2020-01-01 (never listed): judged as changes,
    // their breaks are breaks of an earlier day opened by late data, named alike in the JSON, the e-mail and the Summary.
    expect(json.lateData.total).toBe(json.lateData.breaks.length);
    expect(json.lateData.breaks.every((b) => b.day === '2020-01-01' && b.event === 'opened')).toBe(true);
    expect(json.lateData.total).toBeGreaterThan(0);
    expect(text).toContain(
      `${json.lateData.total} breaks of earlier days changed by late data: ${json.lateData.opened} opened:`,
    );
    for (const b of json.lateData.breaks) {
      expect(text).toContain(`  ${b.day}: ${b.code} ${b.key} ${b.event} (`);
      expect(html).toContain(`<li>${b.day}: ${b.code} ${b.key} ${b.event} (`);
    }
    expect(rows.find((r) => r[0] === 'Earlier days changed by late data')).toBeDefined();
    const lateTable = table(rows, 'Earlier days changed by late data');
    expect(lateTable[0]![0]).toBe(
      `${json.lateData.total} breaks of earlier days changed by late data: ${json.lateData.opened} opened`,
    );
    expect(
      lateTable
        .slice(2, 2 + json.lateData.total)
        .map((r) => `${r[2]} ${r[3]} ${r[1]}`)
        .sort(),
    ).toEqual(json.lateData.breaks.map((b) => `${b.code} ${b.key} ${b.event}`).sort());
    expect(html).toContain(
      `<tr style="font-weight:bold"><td>total</td><td style="text-align:right">${c.total}</td><td style="text-align:right">${c.inPeriod}</td><td style="text-align:right">${c.carriedOver}</td></tr>`,
    );
    expect(attachment(raw, basename(json.report)).bytes.length).toBeGreaterThan(0);

    // `deliver <runId>` later sends the same message again: the stored digest, not a recount.
    const again = await runCli(['deliver', json.runId], env);
    expect(again.code, brief(again.stderr)).toBe(0);
    const resent = smtp!.mails[smtp!.mails.length - 1]!;
    expect(header(resent, 'Subject')).toBe(subject);
    expect(textPart(resent, 'text/plain')).toBe(text);
  });
});
