import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type LateEvent, type Sandbox } from '../helpers/sandbox.js';
import { RECORD_KINDS } from '../../src/domain/record-kinds.js';
import type { EvidenceStream } from '../../src/domain/evidence.js';
import { FIRST_PAGE_CHANGES } from '../../src/report/summary-closed-periods.js';
import { storeKinds } from '../helpers/db.js';
import { breakKey, LATE_NIGHTS_SANDBOX, truthAt } from '../helpers/late-nights.js';
import { brief, openCliWorld, ROOT, runCli, type CliWorld } from './helpers.js';
import { MS_PER_DAY } from '../../src/util/dates.js';

/**
 * Issue 46, end to end: after night 1 the sandbox's four days are reconciled as one period and signed off; its late
 * events then change records of that period on nights 2 to 4. `verify` says "unchanged" right after the close and
 * lists the changed records (exit 1) once they changed; each night's first sheet names the close and every changed
 * record by its id, its JSON counts them, its Breaks sheet marks the breaks of the signed period, and its breaks are
 * that night's truth (as late-data-nights.test.ts has it without a close); the signed workbook's bytes never change;
 * a reopened close is shown no more. A close is refused for a period not ended, without --by, and for a period already
 * signed; `reopen` needs a reason; the audit log holds and detects a forgery.
 */
const CLOCKED_CLI = join(ROOT, 'test', 'e2e', 'clocked-cli.mjs');
const NIGHT_1 = new Date('2026-11-16T02:00:00Z');
/** The signed period: the sandbox's four days of history, signed after night 1. */
const FROM = '2026-11-12';
const TO = '2026-11-16';
const SANDBOX = LATE_NIGHTS_SANDBOX;

interface Closed {
  closeId: string;
  account: string;
  period: { from: string; to: string };
  digest: string;
  workbook: string;
  workbookSha256: string;
  by: string;
  at: string;
}

interface NightSummary {
  now: number;
  report: string;
  breaks: Array<{ code: string; key: string; inPeriod: boolean }>;
  closedPeriods: Array<{ closeId: string; by: string; changes: number; usdImpact: string | null }>;
}

interface Verified {
  unchanged: boolean;
  workbook: string;
  changes: Array<{ stream: EvidenceStream; id: string; field: string; before: string | null; after: string | null }>;
}

const key = breakKey;

/**
 * A night's workbook as the test reads it: the Summary's first page (up to its first later section) and the whole
 * Summary as text, and from the Breaks sheet the close id of each break marked as on a closed period.
 */
async function workbookOf(path: string) {
  const book = new ExcelJS.Workbook();
  await book.xlsx.readFile(path);
  const lines: string[] = [];
  book.getWorksheet('Summary')!.eachRow((row) => {
    const values = (row.values as unknown[]).slice(1).map((v) => (v === null || v === undefined ? '' : String(v)));
    lines.push(values.join(' | '));
  });
  const laterAt = lines.findIndex((l) => /^(Earlier days changed by late data|Open breaks by rule)\b/.test(l));
  const breaks = book.getWorksheet('Breaks')!;
  const header = (breaks.getRow(1).values as unknown[]).map(String);
  const col = (name: string) => header.indexOf(name);
  const closedPeriod = new Map<string, string>();
  breaks.eachRow((row, n) => {
    if (n === 1) return;
    const cell = (name: string) => {
      const v = row.getCell(col(name)).value as unknown;
      return v && typeof v === 'object' && 'text' in v ? String((v as { text: unknown }).text) : v ? String(v) : '';
    };
    const k = `${cell('Rule code')} ${cell('Key')}`;
    if (cell('Closed period')) closedPeriod.set(k, cell('Closed period'));
  });
  return {
    firstPage: lines.slice(0, laterAt < 0 ? lines.length : laterAt).join('\n'),
    summary: lines.join('\n'),
    closedPeriod,
  };
}

for (const kind of storeKinds) {
  describe(`period close over several nights [${kind}]`, { timeout: 600_000 }, () => {
    let sandbox: Sandbox;
    let world: CliWorld | undefined;

    beforeAll(async () => {
      sandbox = await startSandbox({
        ...SANDBOX,
        discrepancies: true,
        lateEvents: true,
        lateEventsAgeDays: 2,
        live: true,
        faults: 'none',
        now: NIGHT_1,
      });
      world = await openCliWorld(kind, 'close', sandbox.env, { partner: { feeRate: sandbox.partnerFeeRate } });
    });

    afterAll(async () => {
      await world?.close();
      await sandbox?.close();
    });

    /** The CLI on the sandbox's calendar. */
    const cli = (args: string[]) => {
      const env = { ...world!.env, RAMP_RECON_TEST_CLOCK_OFFSET_MS: String(sandbox.data.clock() - Date.now()) };
      return runCli(args, env, ROOT, CLOCKED_CLI);
    };
    const night = async (): Promise<NightSummary> => {
      const now = sandbox.data.clock();
      const r = await cli(['run', '--json', '--no-email']);
      expect(r.code, brief(r.stderr)).toBe(0);
      return { ...(JSON.parse(r.stdout) as NightSummary), now };
    };
    const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
    /** The sandbox's truth at `now`: planted and late breaks due by then. */
    const truth = (now: number, snapshots: number): string[] => truthAt(sandbox, now, snapshots);
    const release = (...events: LateEvent[]) => {
      for (const e of events) expect(sandbox.releaseLate(e), e).toBeDefined();
    };

    let closed: Closed;

    it('refuses a period not ended, one never reconciled, and a close without --by: one line, exit 2', async () => {
      await night();
      // Refusals: one line naming the reason, exit 2.
      const notEnded = await cli(['close', '--from', '2026-11-16', '--to', '2026-11-17', '--by', 'alice']);
      expect(notEnded.code).toBe(2);
      expect(notEnded.stderr).toMatch(/has not ended/);
      const noBy = await cli(['close', '--from', FROM, '--to', TO]);
      expect(noBy.code).toBe(2);
      expect(noBy.stderr).toMatch(/--by: required/);
      const never = await cli(['close', '--from', '2026-11-14', '--to', '2026-11-15', '--by', 'alice']);
      expect(never.code).toBe(2);
      expect(never.stderr).toMatch(/never reconciled/);
    });

    it('signs night 1: the sign-off block on the first sheet, verify unchanged, the period signed once', async () => {
      const reconciled = await cli(['reconcile', '--from', FROM, '--to', TO]);
      expect(reconciled.code, brief(reconciled.stderr)).toBe(0);
      const r = await cli(['close', '--from', FROM, '--to', TO, '--by', 'alice', '--note', 'November 15', '--json']);
      expect(r.code, brief(r.stderr)).toBe(0);
      closed = JSON.parse(r.stdout) as Closed;
      expect(closed).toMatchObject({ account: 'default', period: { from: FROM, to: TO }, by: 'alice' });
      expect(closed.workbook).toContain(join('reports', 'signed'));
      expect(sha(closed.workbook)).toBe(closed.workbookSha256);

      // The signed workbook's first sheet carries the sign-off block.
      const book = new ExcelJS.Workbook();
      await book.xlsx.readFile(closed.workbook);
      const first = book.worksheets[0]!;
      const block = new Map<string, string>();
      for (let row = 1; row <= 8; row++)
        block.set(String(first.getCell(row, 1).value), String(first.getCell(row, 2).value));
      expect(block.get('Signed off by')).toBe('alice');
      expect(block.get('Note')).toBe('November 15');
      expect(block.get('Evidence digest (SHA-256)')).toBe(closed.digest);

      const fresh = await cli(['verify', closed.closeId]);
      expect(fresh.code, brief(fresh.stderr)).toBe(0);
      expect(fresh.stdout).toMatch(/unchanged since sign-off/);
      const again = await cli(['close', '--from', FROM, '--to', TO, '--by', 'bob']);
      expect(again.code).toBe(2);
      expect(again.stderr).toMatch(/overlaps close/);
    });

    it("shows the changes to the signed period on each night's first sheet; the breaks stay the truth", async () => {
      // Nights 2 to 4: the late events of late-data-nights.test.ts change records two days old, inside the signed
      // period; each night's breaks are still that night's truth, as without a close.
      const nights: Array<() => void> = [
        () => release('publish-fill', 'complete-order'),
        () => release('reject-deposit', 'list-deposit'),
        () => {
          release('confirm-deposit', 'refund-withdrawal');
          sandbox.fixDiscrepancy('E_BALANCE_ROLL');
        },
      ];
      const seen: string[][] = [];
      for (const [i, change] of nights.entries()) {
        sandbox.elapse(MS_PER_DAY);
        change();
        const n = await night();
        expect(n.breaks.map(key).sort(), `night ${i + 2}`).toEqual(truth(n.now, i + 2));
        expect(sha(closed.workbook)).toBe(closed.workbookSha256);

        const verified = await cli(['verify', closed.closeId, '--json']);
        expect(verified.code, brief(verified.stderr)).toBe(1);
        const v = JSON.parse(verified.stdout) as Verified;
        expect(v.unchanged).toBe(false);
        expect(v.workbook).toBe('unchanged');
        expect(v.changes.length).toBeGreaterThan(0);
        for (const c of v.changes) expect(c.before).not.toBe(c.after);
        const text = await cli(['verify', closed.closeId]);
        expect(text.code).toBe(1);
        for (const c of v.changes) expect(text.stdout).toContain(`${c.stream} ${c.id} ${c.field}`);

        // The JSON summary counts them; the first sheet names the close and every changed record with its id.
        expect(n.closedPeriods).toEqual([
          expect.objectContaining({ closeId: closed.closeId, by: 'alice', changes: v.changes.length }),
        ]);
        const book = await workbookOf(n.report);
        expect(book.firstPage).toContain('Closed periods changed since sign-off');
        expect(book.firstPage).toContain(`close ${closed.closeId}`);
        expect(book.firstPage).toContain('signed by alice');
        const listed = v.changes.length <= FIRST_PAGE_CHANGES ? book.firstPage : book.summary;
        for (const c of v.changes)
          expect(listed, `${c.stream} ${c.id}`).toContain(`${RECORD_KINDS[c.stream].noun} ${c.id}`);
        // The Breaks sheet marks the open breaks of the signed period with the close, and no other.
        const ofPeriod = await cli(['reconcile', '--from', FROM, '--to', TO, '--json']);
        expect(ofPeriod.code, brief(ofPeriod.stderr)).toBe(0);
        const inPeriod = (JSON.parse(ofPeriod.stdout) as { breaks: NightSummary['breaks'] }).breaks
          .filter((b) => b.inPeriod)
          .map(key);
        expect(inPeriod.length).toBeGreaterThan(0);
        expect([...book.closedPeriod.keys()].sort()).toEqual(inPeriod.sort());
        for (const id of book.closedPeriod.values()) expect(id).toBe(closed.closeId);
        seen.push(v.changes.map((c) => `${c.stream} ${c.id} ${c.field}`).sort());
      }
      // Each night changed records of the signed period anew.
      for (const i of [1, 2]) expect(seen[i], `night ${i + 2}`).not.toEqual(seen[i - 1]);
    });

    it('lists the close as changed, reopens it only with a reason, and keeps the audit chain', async () => {
      const listed = await cli(['closes', '--json']);
      expect(listed.code, brief(listed.stderr)).toBe(0);
      expect(JSON.parse(listed.stdout)).toMatchObject([{ closeId: closed.closeId, state: 'changed since sign-off' }]);

      const noReason = await cli(['reopen', closed.closeId, '--by', 'bob']);
      expect(noReason.code).toBe(2);
      expect(noReason.stderr).toMatch(/--reason: required/);
      const reopened = await cli(['reopen', closed.closeId, '--by', 'bob', '--reason', 'late fills']);
      expect(reopened.code, brief(reopened.stderr)).toBe(0);
      const after = await cli(['closes', '--json']);
      expect(JSON.parse(after.stdout)).toMatchObject([
        { closeId: closed.closeId, state: 'reopened', reopenedBy: 'bob' },
      ]);
      expect(sha(closed.workbook)).toBe(closed.workbookSha256);
      // A reopened close is no longer shown: the next report and its JSON say nothing of it.
      const next = await night();
      expect(next.closedPeriods).toEqual([]);
      expect((await workbookOf(next.report)).summary).not.toContain('Closed periods changed since sign-off');

      const audit = await cli(['verify', '--audit']);
      expect(audit.code, brief(audit.stderr)).toBe(0);
      expect(audit.stdout).toMatch(/audit log intact: 2 row/);
    });
  });
}
