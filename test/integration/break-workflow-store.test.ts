import { expect, it } from 'vitest';
import type { DetectedBreak, ReturnedRow } from '../../src/domain/index.js';
import { applyLifecycle } from '../../src/rules/lifecycle.js';
import { openBreaksOfRun, previousBreaks, writeBreaks } from '../../src/store/recon/breaks.js';
import { listBreaks } from '../../src/store/workflow/break-workflow.js';
import {
  ack,
  assign,
  BreakWorkflowError,
  importReturnedRows,
  note,
  reopenChangedAcknowledgements,
  showBreak,
  unack,
} from '../../src/workflow/index.js';
import { createRun } from '../../src/store/runs/runs.js';
import { openBreakCounts } from '../../src/domain/break.js';
import { describeEachStore } from '../helpers/db.js';

const ACCOUNT = 'default';
const cli = (by: string) => ({ by, source: 'cli' });

const fee = (difference: string): DetectedBreak => ({
  code: 'P_FEE_USD',
  key: 'o-1',
  entity: 'partnerOrder',
  severity: 'medium',
  currency: 'EUR',
  unit: 'amount',
  day: null,
  expected: '1.00',
  actual: (1 + Number(difference)).toFixed(2),
  difference,
  message: 'fee USD twin differs',
});
const orphan: DetectedBreak = {
  code: 'E_FILL_ORPHAN',
  key: '900',
  entity: 'fill',
  severity: 'high',
  currency: 'BTC',
  unit: 'amount',
  day: null,
  expected: null,
  actual: '0.5',
  difference: null,
  message: 'no order',
};
const stale = (hours: string): DetectedBreak => ({
  code: 'E_STALE',
  key: 'dep-1',
  entity: 'deposit',
  severity: 'low',
  currency: 'BTC',
  unit: 'hours',
  day: null,
  expected: '24',
  actual: hours,
  difference: String(Number(hours) - 24),
  message: 'deposit UNCONFIRMED',
});

/** The break workflow's store on both databases: docs/working-breaks.md. */
describeEachStore('break workflow store', (ctx) => {
  const db = () => ctx.store.db;
  let runNo = 0;
  let clock = 0;

  /** One reconcile run that detects exactly `detected` (every rule checked, every entity in scope). */
  async function runWith(detected: DetectedBreak[]): Promise<string> {
    runNo += 1;
    // Real time (a run's events and a person's share one clock, as in production), strictly increasing; one ms on,
    // since the database stamps a person's event to the microsecond within the millisecond Date.now() truncates to.
    clock = Math.max(Date.now() + 1, clock + 1);
    const runId = `run${runNo}`;
    const now = new Date(clock);
    await createRun(db(), {
      account: ACCOUNT,
      command: 'reconcile',
      id: runId,
      periodFrom: '2026-11-19',
      periodTo: '2026-11-20',
      startedAt: now,
    });
    const previous = await previousBreaks(db(), ACCOUNT, detected);
    const lifecycle = applyLifecycle({
      runId,
      now,
      previous,
      detected,
      policy: { checked: () => true, skipped: () => false, inScope: () => true, judged: () => true },
    });
    // As the reconcile stage writes them: the breaks, then in the same transaction the reopen of changed
    // acknowledgements.
    await db()
      .transaction()
      .execute(async (trx) => {
        await writeBreaks(trx, ACCOUNT, lifecycle.upserts, lifecycle.events);
        await reopenChangedAcknowledgements(trx, ACCOUNT, runId, now);
      });
    return runId;
  }
  const reported = async (runId: string) =>
    openBreaksOfRun(db(), { id: runId, account: ACCOUNT, periodFrom: '2026-11-19', periodTo: '2026-11-20' });
  const workflowOf = async (runId: string, code: string, key: string) =>
    (await reported(runId)).find((b) => b.code === code && b.key === key)?.workflow;

  it('ack keeps a break explained while its amounts stay; a changed amount reopens it with an event saying what changed', async () => {
    const r1 = await runWith([fee('0.50'), orphan, stale('30')]);
    const done = await ack(db(), ACCOUNT, 'P_FEE_USD', 'o-1', '  rounding agreed with the partner ', cli('alice'));
    expect(done).toMatchObject({
      changed: true,
      workflow: { status: 'explained', explanation: 'rounding agreed with the partner' },
    });
    // The same reason again records nothing.
    expect(
      (await ack(db(), ACCOUNT, 'P_FEE_USD', 'o-1', 'rounding agreed with the partner', cli('alice'))).changed,
    ).toBe(false);
    const w1 = await workflowOf(r1, 'P_FEE_USD', 'o-1');
    expect(w1).toMatchObject({
      status: 'explained',
      explanation: 'rounding agreed with the partner',
      lastNote: 'rounding agreed with the partner',
      lastNoteBy: 'alice',
    });
    expect(openBreakCounts(await reported(r1))).toMatchObject({ total: 3, explained: 1 });

    // Seen again with the same amounts: still explained.
    const r2 = await runWith([fee('0.50'), orphan, stale('31')]);
    expect((await workflowOf(r2, 'P_FEE_USD', 'o-1'))?.status).toBe('explained');

    // A stale deposit's age grows every run: its acknowledgement holds to the limit and the currency only.
    await ack(db(), ACCOUNT, 'E_STALE', 'dep-1', 'ticket 42 with the exchange', cli('bob'));
    const r3 = await runWith([fee('0.50'), orphan, stale('55')]);
    expect((await workflowOf(r3, 'E_STALE', 'dep-1'))?.status).toBe('explained');

    // The amount changes: unexplained again, the explanation kept for the reader, a 'reopened' event by ramp-recon.
    const r4 = await runWith([fee('0.75'), orphan, stale('56')]);
    expect(await workflowOf(r4, 'P_FEE_USD', 'o-1')).toMatchObject({
      status: 'unexplained',
      explanation: 'rounding agreed with the partner',
    });
    const shown = await showBreak(db(), ACCOUNT, 'P_FEE_USD', 'o-1');
    const flow = shown.events.filter((e) => e.type === 'workflow');
    expect(flow.map((e) => [e.event, e.by])).toEqual([
      ['acknowledged', 'alice'],
      ['reopened', 'ramp-recon'],
    ]);
    const reopened = flow[1]!;
    expect(reopened.type === 'workflow' && reopened.text).toBe(
      'amounts changed: 1.00 / 1.50 / 0.50 EUR -> 1.00 / 1.75 / 0.75 EUR',
    );
    expect(reopened.type === 'workflow' && reopened.source).toBe(`run:${r4}`);
    // Merged by time with the lifecycle: opened, seen x3, then the ack lies between run1 and run2.
    expect(shown.events.map((e) => e.event)).toEqual(['opened', 'acknowledged', 'seen', 'seen', 'seen', 'reopened']);
    expect(shown.events.at(-2)).toMatchObject({ type: 'lifecycle', runId: r4 });
  });

  it('only an open break can be acknowledged; unknown breaks and empty reasons are errors naming them', async () => {
    await expect(ack(db(), ACCOUNT, 'P_FEE_USD', 'nope', 'x', cli('alice'))).rejects.toThrow(
      /unknown break P_FEE_USD nope/,
    );
    await expect(ack(db(), ACCOUNT, 'P_FEE_USD', 'o-1', '   ', cli('alice'))).rejects.toBeInstanceOf(
      BreakWorkflowError,
    );
    await expect(note(db(), ACCOUNT, 'P_FEE_USD', 'o-1', '', cli('alice'))).rejects.toThrow(
      /the note must not be empty/,
    );
    // The orphan fill is fixed in the data: resolved, and it keeps its workflow.
    await note(db(), ACCOUNT, 'E_FILL_ORPHAN', '900', 'asked the exchange', cli('carol'));
    await assign(db(), ACCOUNT, 'E_FILL_ORPHAN', '900', 'carol', cli('carol'));
    const r = await runWith([fee('0.75'), stale('57')]);
    await expect(ack(db(), ACCOUNT, 'E_FILL_ORPHAN', '900', 'fine', cli('carol'))).rejects.toThrow(
      new RegExp(`E_FILL_ORPHAN 900 is not open \\(resolved in run ${r}\\)`),
    );
    const gone = await showBreak(db(), ACCOUNT, 'E_FILL_ORPHAN', '900');
    expect(gone.break.status).toBe('resolved');
    expect(gone.break.workflow).toMatchObject({ owner: 'carol', lastNote: 'asked the exchange' });
    expect(gone.events.map((e) => e.event)).toEqual([
      'opened',
      'seen',
      'seen',
      'seen',
      'noted',
      'assigned',
      'resolved',
    ]);
    // A note is still welcome on a resolved break.
    expect(
      (await note(db(), ACCOUNT, 'E_FILL_ORPHAN', '900', 'exchange confirmed the fix', cli('carol'))).changed,
    ).toBe(true);
  });

  it('lists by status, rule and owner, with a limit', async () => {
    await assign(db(), ACCOUNT, 'P_FEE_USD', 'o-1', 'alice', cli('alice'));
    const keys = async (f: Parameters<typeof listBreaks>[2]) =>
      (await listBreaks(db(), ACCOUNT, f)).breaks.map((b) => `${b.code} ${b.key}`);
    expect(await keys({ status: 'open', limit: 10 })).toEqual(['P_FEE_USD o-1', 'E_STALE dep-1']);
    expect(await keys({ status: 'explained', limit: 10 })).toEqual(['E_STALE dep-1']);
    expect(await keys({ status: 'unexplained', limit: 10 })).toEqual(['P_FEE_USD o-1']);
    expect(await keys({ status: 'resolved', limit: 10 })).toEqual(['E_FILL_ORPHAN 900']);
    expect(await keys({ status: 'all', limit: 10 })).toEqual(['E_FILL_ORPHAN 900', 'P_FEE_USD o-1', 'E_STALE dep-1']);
    expect(await keys({ status: 'all', owner: 'carol', limit: 10 })).toEqual(['E_FILL_ORPHAN 900']);
    expect(await keys({ status: 'all', rule: 'E_STALE', limit: 10 })).toEqual(['E_STALE dep-1']);
    const cut = await listBreaks(db(), ACCOUNT, { status: 'all', limit: 2 });
    expect([cut.breaks.length, cut.more]).toEqual([2, true]);
    const unacked = await unack(db(), ACCOUNT, 'E_STALE', 'dep-1', 'deposit credited twice?', cli('bob'));
    expect(unacked).toMatchObject({ changed: true, workflow: { status: 'unexplained', explanation: null } });
    expect((await unack(db(), ACCOUNT, 'E_STALE', 'dep-1', null, cli('bob'))).changed).toBe(false);
  });

  it('imports a returned workbook: only what changes state, skipping gone breaks and changed amounts, and never twice', async () => {
    const r = `run${runNo}`;
    // Where they stand now: fee o-1 unexplained (owner alice), stale dep-1 unexplained (owner none), orphan resolved.
    const row = (n: number, code: string, key: string, amounts: string, cells: Partial<ReturnedRow>): ReturnedRow => ({
      row: n,
      code,
      key,
      amounts,
      owner: null,
      explanation: null,
      explained: null,
      ...cells,
    });
    const rows: ReturnedRow[] = [
      row(2, 'P_FEE_USD', 'o-1', '1.00 | 1.75 | 0.75 | EUR', {
        owner: 'alice',
        explanation: 'partner confirmed the rounding',
        explained: 'Yes',
      }),
      // An older age of the stale deposit: the same amounts for its acknowledgement.
      row(3, 'E_STALE', 'dep-1', '24 | 50 | 26 | BTC', { owner: 'bob', explanation: 'waiting on the exchange' }),
      row(4, 'E_FILL_ORPHAN', '900', ' | 0.5 |  | BTC', { owner: 'dave' }),
      row(5, 'P_FEE_USD', 'o-2', '1 | 2 | 1 | EUR', { explanation: 'x', explained: 'yes' }),
      row(6, 'E_STALE', 'dep-1', '48 | 50 | 2 | BTC', { explained: 'maybe' }),
      // Not filled in: ignored.
      row(7, 'E_STALE', 'dep-1', '48 | 50 | 2 | BTC', {}),
    ];
    const first = await importReturnedRows(db(), ACCOUNT, { runId: r, sha256: 'abc', rows, by: 'finance' });
    expect(first.alreadyImported).toBeNull();
    expect(first.applied).toEqual([
      {
        row: 2,
        code: 'P_FEE_USD',
        key: 'o-1',
        actions: [{ kind: 'acknowledged', reason: 'partner confirmed the rounding' }],
      },
      {
        row: 3,
        code: 'E_STALE',
        key: 'dep-1',
        actions: [
          { kind: 'assigned', owner: 'bob' },
          { kind: 'noted', text: 'waiting on the exchange' },
        ],
      },
    ]);
    expect(first.skipped).toEqual([
      { row: 4, code: 'E_FILL_ORPHAN', key: '900', reason: `gone: resolved in run ${r}` },
      { row: 5, code: 'P_FEE_USD', key: 'o-2', reason: 'unknown: no such break' },
      { row: 6, code: 'E_STALE', key: 'dep-1', reason: 'Explained? must be yes or no (got "maybe")' },
    ]);
    const w = await workflowOf(r, 'P_FEE_USD', 'o-1');
    expect(w).toMatchObject({ status: 'explained', explanation: 'partner confirmed the rounding', owner: 'alice' });
    const events = (await showBreak(db(), ACCOUNT, 'P_FEE_USD', 'o-1')).events.filter((e) => e.type === 'workflow');
    expect(events.at(-1)).toMatchObject({ event: 'acknowledged', by: 'finance', source: `workbook:${r}` });

    // The same file again: nothing done.
    const count = async () =>
      (await db()
        .selectFrom('break_workflow_event' as never)
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow()) as { n: string };
    const before = Number((await count()).n);
    const again = await importReturnedRows(db(), ACCOUNT, { runId: r, sha256: 'abc', rows, by: 'finance' });
    expect(again.alreadyImported?.by).toBe('finance');
    expect([again.applied.length, again.skipped.length]).toEqual([0, 0]);
    expect(Number((await count()).n)).toBe(before);

    // Another file with the same content as now (pre-filled owner and explanation): nothing new.
    const same = await importReturnedRows(db(), ACCOUNT, {
      runId: r,
      sha256: 'def',
      rows: [
        row(2, 'P_FEE_USD', 'o-1', '1.00 | 1.75 | 0.75 | EUR', {
          owner: 'alice',
          explanation: 'partner confirmed the rounding',
          explained: 'yes',
        }),
        row(3, 'E_STALE', 'dep-1', '24 | 60 | 36 | BTC', { owner: 'bob', explanation: 'waiting on the exchange' }),
      ],
      by: 'finance',
    });
    expect([same.applied.length, same.skipped.length, same.unchanged]).toEqual([0, 0, 2]);

    // The amounts changed since the workbook: skipped, saying so. Explained? no takes an acknowledgement back.
    const changed = await importReturnedRows(db(), ACCOUNT, {
      runId: r,
      sha256: 'ghi',
      rows: [row(2, 'P_FEE_USD', 'o-1', '1.00 | 1.50 | 0.50 | EUR', { explained: 'no' })],
      by: 'finance',
    });
    expect(changed.skipped).toEqual([
      {
        row: 2,
        code: 'P_FEE_USD',
        key: 'o-1',
        reason: 'amounts changed since that workbook: 1.00 / 1.50 / 0.50 EUR -> 1.00 / 1.75 / 0.75 EUR',
      },
    ]);
    const back = await importReturnedRows(db(), ACCOUNT, {
      runId: r,
      sha256: 'jkl',
      rows: [row(2, 'P_FEE_USD', 'o-1', '1.00 | 1.75 | 0.75 | EUR', { explained: 'no' })],
      by: 'finance',
    });
    expect(back.applied).toEqual([{ row: 2, code: 'P_FEE_USD', key: 'o-1', actions: [{ kind: 'unacknowledged' }] }]);
    await expect(
      importReturnedRows(db(), ACCOUNT, { runId: 'r-elsewhere', sha256: 'x', rows: [], by: 'finance' }),
    ).rejects.toThrow(/run r-elsewhere, which account default does not have/);
  });
});
