import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { openStore } from '../../src/store/db/database.js';
import { addDays, toDay } from '../../src/util/dates.js';
import { storeKinds, type StoreKind } from '../helpers/db.js';
import { type CliWorld, brief, openCliWorld, runCli } from './helpers.js';

/**
 * Issue 15's Must show, through the built CLI against the sandbox: a break acknowledged with a
 * reason stays explained across runs; a changed amount reopens it with an event saying so; `breaks
 * show` lists the events with who and why; a workbook filled in with exceljs and imported records
 * its explanations, importing it again changes nothing, and the next workbook shows them.
 */
const SANDBOX = { seed: 21, days: 5, ordersPerDay: 8, fillsPerOrder: 2 };

interface Workflow {
  status: 'explained' | 'unexplained';
  owner: string | null;
  explanation: string | null;
  lastNote: string | null;
}
interface SummaryBreak {
  code: string;
  key: string;
  severity: string;
  expected: string | null;
  actual: string | null;
  difference: string | null;
  currency: string | null;
  workflow: Workflow;
}
interface Summary {
  runId: string;
  status: string;
  breaks: SummaryBreak[];
  report: string | null;
  breakCounts: { total: number; explained: number };
}
interface Shown {
  break: { code: string; key: string; status: string; workflow: Workflow };
  events: Array<{
    type: 'lifecycle' | 'workflow';
    event: string;
    by: string;
    at: string;
    text?: string | null;
    source?: string;
    runId?: string;
  }>;
}

const id = (b: { code: string; key: string }) => `${b.code} ${b.key}`;

for (const kind of storeKinds) {
  describe(`break workflow end to end [${kind}]`, { timeout: 400_000 }, () => {
    let sandbox: Sandbox;
    let world: CliWorld | undefined;
    let env: NodeJS.ProcessEnv;
    const today = toDay(new Date());
    const period = ['--from', addDays(today, -SANDBOX.days), '--to', today];

    beforeAll(async () => {
      sandbox = await startSandbox({ ...SANDBOX, discrepancies: true, live: false, faults: 'none' });
      world = await openCliWorld(kind, 'workflow', sandbox.env, { partner: { feeRate: sandbox.partnerFeeRate } });
      env = { ...world.env, LOG_LEVEL: 'warn' };
    });

    afterAll(async () => {
      await world?.close();
      await sandbox?.close();
    });

    async function cli(args: string[], expectCode = 0): Promise<string> {
      const r = await runCli(args, env);
      expect(r.code, `${args.join(' ')}: ${brief(r.stderr)}\n${r.stdout.slice(0, 2000)}`).toBe(expectCode);
      return r.stdout;
    }
    const json = async <T>(args: string[], expectCode = 0) =>
      JSON.parse(await cli([...args, '--json'], expectCode)) as T;
    const show = (b: { code: string; key: string }) => json<Shown>(['breaks', 'show', b.code, b.key]);
    const find = (s: Summary, b: { code: string; key: string }) => s.breaks.find((x) => id(x) === id(b));

    /** Changes a stored record behind the CLI's back (the embedded database is free between commands). */
    async function changePartnerFee(kindOf: StoreKind, orderId: string): Promise<void> {
      const store = kindOf === 'postgres' ? world!.pg!.store : await openStore({ dataDir: join(world!.dir, 'data') });
      try {
        await sql`update partner_order set partner_fee = partner_fee + 1 where order_id = ${orderId}`.execute(store.db);
      } finally {
        if (kindOf === 'embedded') await store.close();
      }
    }

    it('ack across runs, reopened by a changed amount, events with who and why, and a returned workbook imported once', async () => {
      // 1. A run finds the planted breaks; one of them is acknowledged with a reason.
      const first = await json<Summary>(['run', ...period, '--no-email']);
      expect(first.status).toBe('succeeded');
      const target = first.breaks.find((b) => b.code === 'P_PARTNER_FEE_RATE');
      expect(target, 'a planted P_PARTNER_FEE_RATE break').toBeDefined();
      const t = target!;
      expect(t.workflow).toEqual({ status: 'unexplained', owner: null, explanation: null, lastNote: null });
      const reason = 'promotion rate agreed with the partner';
      const acked = await json<{ changed: boolean; by: string; workflow: Workflow }>([
        'breaks',
        'ack',
        t.code,
        t.key,
        reason,
        '--by',
        'alice',
      ]);
      expect(acked).toMatchObject({
        changed: true,
        by: 'alice',
        workflow: { status: 'explained', explanation: reason },
      });
      // Bad input: exit 2 with one line naming the break.
      const unknown = await runCli(['breaks', 'ack', 'P_PARTNER_FEE_RATE', 'no-such-order', 'x', '--by', 'alice'], env);
      expect(unknown.code).toBe(2);
      expect(
        unknown.stderr
          .trim()
          .split('\n')
          .filter((l) => !l.startsWith('{')),
      ).toEqual([expect.stringMatching(/unknown break P_PARTNER_FEE_RATE no-such-order/)]);
      expect((await runCli(['breaks', 'ack', t.code, t.key, '  ', '--by', 'alice'], env)).code).toBe(2);

      // 2. The next run sees the same break: still explained, counted apart; other breaks stay unexplained: exit 3.
      const second = await json<Summary>(['run', ...period, '--no-email', '--fail-on-breaks'], 3);
      expect(find(second, t)?.workflow).toEqual({
        status: 'explained',
        owner: null,
        explanation: reason,
        lastNote: reason,
      });
      expect(second.breakCounts.explained).toBe(1);
      const explainedList = await json<{ breaks: Array<{ code: string; key: string; status: string }> }>([
        'breaks',
        'list',
        '--status',
        'explained',
      ]);
      expect(explainedList.breaks.map(id)).toEqual([id(t)]);

      // 3. Its amount changes (the stored order's partner fee), reconcile: unexplained again, with a 'reopened' event.
      await changePartnerFee(kind, t.key);
      const third = await json<Summary>(['reconcile', ...period]);
      const changed = find(third, t)!;
      expect(changed.actual).not.toBe(t.actual);
      expect(changed.workflow.status).toBe('unexplained');
      expect(changed.workflow.explanation).toBe(reason);
      expect(third.breakCounts.explained).toBe(0);

      // 4. `breaks show` lists the events, with who and why, in time order.
      const shown = await show(t);
      const flow = shown.events.filter((e) => e.type === 'workflow');
      expect(flow.map((e) => ({ event: e.event, by: e.by, source: e.source }))).toEqual([
        { event: 'acknowledged', by: 'alice', source: 'cli' },
        { event: 'reopened', by: 'ramp-recon', source: `run:${third.runId}` },
      ]);
      expect(flow[0]!.text).toBe(reason);
      expect(flow[1]!.text).toBe(
        `amounts changed: ${t.expected} / ${t.actual} / ${t.difference} ${t.currency} -> ${changed.expected} / ${changed.actual} / ${changed.difference} ${changed.currency}`,
      );
      expect(shown.events.filter((e) => e.type === 'lifecycle').map((e) => e.event)).toEqual([
        'opened',
        'seen',
        'seen',
      ]);
      const times = shown.events.map((e) => Date.parse(e.at));
      expect(times).toEqual([...times].sort((a, b) => a - b));
      const text = await cli(['breaks', 'show', t.code, t.key]);
      expect(text).toMatch(/acknowledged +alice \(cli\): promotion rate agreed with the partner/);
      expect(text).toMatch(/reopened +ramp-recon \(run:\S+\): amounts changed: /);

      // 5. The run's workbook, filled in with exceljs as finance would, and imported.
      const { path } = JSON.parse(await cli(['report', third.runId, '--json'])) as { path: string };
      const book = new ExcelJS.Workbook();
      await book.xlsx.readFile(path);
      const sheet = book.getWorksheet('Breaks')!;
      const header = (sheet.getRow(1).values as unknown[]).map((v) => (typeof v === 'string' ? v : ''));
      const col = (name: string) => {
        const at = header.indexOf(name);
        expect(at, `column ${name}`).toBeGreaterThan(0);
        return at;
      };
      const keyText = (v: unknown) =>
        v && typeof v === 'object' && 'text' in v ? String((v as { text: unknown }).text) : String(v);
      const rowOf = (b: { code: string; key: string }) => {
        let found: ExcelJS.Row | undefined;
        sheet.eachRow((row, n) => {
          if (
            n > 1 &&
            row.getCell(col('Rule code')).value === b.code &&
            keyText(row.getCell(col('Key')).value) === b.key
          )
            found = row;
        });
        expect(found, `row of ${id(b)}`).toBeDefined();
        return found!;
      };
      // A reopened break shows its old explanation, and is not marked explained.
      expect(rowOf(t).getCell(col('Status')).value).toBe('open');
      expect(rowOf(t).getCell(col('Explanation')).value).toBe(reason);
      expect(rowOf(t).getCell(col('Explained?')).value ?? null).toBeNull();
      // Two breaks of other rules whose amounts do not move from run to run (not ages, not balances).
      const STEADY = [
        'E_FEE_RATE',
        'E_FILL_QTY',
        'E_FILL_AVGPX',
        'E_FILL_ORPHAN',
        'E_WITHDRAWAL_BENEFICIARY',
        'X_DEPOSIT_MISSING',
        'X_DEPOSIT_AMOUNT',
      ];
      const others = third.breaks.filter((b) => STEADY.includes(b.code)).slice(0, 2);
      expect(others).toHaveLength(2);
      const [accepted, asked] = others as [SummaryBreak, SummaryBreak];
      const fill = (b: SummaryBreak, owner: string, explanation: string, explained: string | null) => {
        const row = rowOf(b);
        row.getCell(col('Owner')).value = owner;
        row.getCell(col('Explanation')).value = explanation;
        row.getCell(col('Explained?')).value = explained;
        row.commit();
      };
      fill(changed, 'bob', 'new partner rate confirmed by e-mail', 'yes');
      fill(accepted, 'carol', 'timing: settles with the next batch', 'yes');
      fill(asked, 'dave', 'asked the exchange support', null);
      const returned = join(world!.dir, 'returned.xlsx');
      await book.xlsx.writeFile(returned);

      const imported = await json<{
        runId: string;
        applied: Array<{ code: string; key: string; actions: Array<{ kind: string }> }>;
        skipped: unknown[];
        alreadyImported: unknown;
      }>(['breaks', 'import', returned, '--by', 'finance']);
      expect(imported.runId).toBe(third.runId);
      expect(imported.alreadyImported).toBeNull();
      expect(imported.skipped).toEqual([]);
      expect(imported.applied.map((a) => [id(a), a.actions.map((x) => x.kind)])).toEqual(
        expect.arrayContaining([
          [id(t), ['assigned', 'acknowledged']],
          [id(accepted), ['assigned', 'acknowledged']],
          [id(asked), ['assigned', 'noted']],
        ]),
      );
      expect(imported.applied).toHaveLength(3);
      const listed = await json<{ breaks: Array<{ code: string; key: string; workflow: Workflow }> }>([
        'breaks',
        'list',
        '--status',
        'all',
        '--limit',
        '10000',
      ]);
      const wf = (b: { code: string; key: string }) => listed.breaks.find((x) => id(x) === id(b))?.workflow;
      expect(wf(t)).toMatchObject({
        status: 'explained',
        owner: 'bob',
        explanation: 'new partner rate confirmed by e-mail',
      });
      expect(wf(accepted)).toMatchObject({
        status: 'explained',
        owner: 'carol',
        explanation: 'timing: settles with the next batch',
      });
      expect(wf(asked)).toMatchObject({ status: 'unexplained', owner: 'dave', lastNote: 'asked the exchange support' });
      const lastFlow = (await show(t)).events.filter((e) => e.type === 'workflow').at(-1)!;
      expect(lastFlow).toMatchObject({ event: 'acknowledged', by: 'finance', source: `workbook:${third.runId}` });

      // 6. The same file again: nothing done, nothing recorded.
      // One CLI at a time: the embedded database admits one process.
      const eventCount = async () => {
        let n = 0;
        for (const b of [t, accepted, asked]) n += (await show(b)).events.length;
        return n;
      };
      const before = await eventCount();
      const again = await cli(['breaks', 'import', returned, '--by', 'finance']);
      expect(again).toMatch(/already imported on \S+ by finance: nothing done/);
      expect(await eventCount()).toBe(before);

      // 7. The next workbook shows the explanations, owners and notes.
      const next = await json<Summary>(['reconcile', ...period]);
      expect(next.breakCounts.explained).toBe(2);
      const { path: nextPath } = JSON.parse(await cli(['report', next.runId, '--json'])) as { path: string };
      const nextBook = new ExcelJS.Workbook();
      await nextBook.xlsx.readFile(nextPath);
      const nextSheet = nextBook.getWorksheet('Breaks')!;
      const cells = new Map<string, Record<string, unknown>>();
      nextSheet.eachRow((row, n) => {
        if (n === 1) return;
        const v = row.values as unknown[];
        cells.set(
          `${String(v[col('Rule code')])} ${keyText(v[col('Key')])}`,
          Object.fromEntries(
            ['Status', 'Owner', 'Explanation', 'Explained?', 'Last note'].map((h) => [h, v[col(h)] ?? null]),
          ),
        );
      });
      expect(cells.get(id(t))).toMatchObject({
        Status: 'explained',
        Owner: 'bob',
        Explanation: 'new partner rate confirmed by e-mail',
        'Explained?': 'yes',
      });
      expect(cells.get(id(accepted))).toMatchObject({ Status: 'explained', Owner: 'carol', 'Explained?': 'yes' });
      expect(cells.get(id(asked))).toMatchObject({ Status: 'open', Owner: 'dave' });
      expect(String(cells.get(id(asked))?.['Last note'])).toMatch(
        /^asked the exchange support \(finance, \d{4}-\d{2}-\d{2}\)$/,
      );
    });
  });
}
