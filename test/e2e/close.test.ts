import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type LateEvent, type Sandbox } from '../helpers/sandbox.js';
import { storeKinds } from '../helpers/db.js';
import { brief, openCliWorld, ROOT, runCli, type CliWorld } from './helpers.js';
import { MS_PER_DAY } from '../../src/util/dates.js';

/**
 * Issue 46, end to end: night 1 is reconciled and its day signed off; the sandbox's late events then change records
 * of that day on the following nights. `verify` says "unchanged" right after the close and lists the changed records
 * (exit 1) once they changed; the signed workbook's bytes never change; a close is refused for a period not ended,
 * without --by, and for a period already signed; `reopen` needs a reason; the audit log holds and detects a forgery.
 */
const CLOCKED_CLI = join(ROOT, 'test', 'e2e', 'clocked-cli.mjs');
const NIGHT_1 = new Date('2026-11-16T02:00:00Z');
const DAY = '2026-11-15';
const SANDBOX = {
  seed: 23,
  days: 4,
  ordersPerDay: 20,
  exchangeOrdersPerDay: 16,
  fillsPerOrder: 2,
  depositsPerDay: 3,
  withdrawalsPerDay: 2,
};

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
    const night = async () => {
      const r = await cli(['run', '--json', '--no-email']);
      expect(r.code, brief(r.stderr)).toBe(0);
    };
    const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

    let closed: Closed;

    it('refuses a period not ended, one never reconciled, and a close without --by: one line, exit 2', async () => {
      await night();
      // Refusals: one line naming the reason, exit 2.
      const notEnded = await cli(['close', '--from', '2026-11-16', '--to', '2026-11-17', '--by', 'alice']);
      expect(notEnded.code).toBe(2);
      expect(notEnded.stderr).toMatch(/has not ended/);
      const noBy = await cli(['close', '--from', DAY, '--to', '2026-11-16']);
      expect(noBy.code).toBe(2);
      expect(noBy.stderr).toMatch(/--by: required/);
      const never = await cli(['close', '--from', '2026-11-14', '--to', '2026-11-15', '--by', 'alice']);
      expect(never.code).toBe(2);
      expect(never.stderr).toMatch(/never reconciled/);
    });

    it('signs night 1: the sign-off block on the first sheet, verify unchanged, the period signed once', async () => {
      const r = await cli([
        'close',
        '--from',
        DAY,
        '--to',
        '2026-11-16',
        '--by',
        'alice',
        '--note',
        'November 15',
        '--json',
      ]);
      expect(r.code, brief(r.stderr)).toBe(0);
      closed = JSON.parse(r.stdout) as Closed;
      expect(closed).toMatchObject({ account: 'default', period: { from: DAY, to: '2026-11-16' }, by: 'alice' });
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
      const again = await cli(['close', '--from', DAY, '--to', '2026-11-16', '--by', 'bob']);
      expect(again.code).toBe(2);
      expect(again.stderr).toMatch(/overlaps close/);
    });

    it('lists the later changes to the signed day, and never rewrites the signed workbook', async () => {
      // Nights 2 and 3: the late events change records two days old, the signed day's among them.
      const events: LateEvent[][] = [
        ['publish-fill', 'complete-order', 'reject-deposit', 'list-deposit'],
        ['confirm-deposit', 'refund-withdrawal'],
      ];
      for (const batch of events) {
        sandbox.elapse(MS_PER_DAY);
        for (const e of batch) sandbox.releaseLate(e);
        await night();
        expect(sha(closed.workbook)).toBe(closed.workbookSha256);
      }

      const changed = await cli(['verify', closed.closeId, '--json']);
      expect(changed.code, brief(changed.stderr)).toBe(1);
      const v = JSON.parse(changed.stdout) as {
        unchanged: boolean;
        workbook: string;
        changes: Array<{ stream: string; id: string; field: string; before: string | null; after: string | null }>;
      };
      expect(v.unchanged).toBe(false);
      expect(v.workbook).toBe('unchanged');
      expect(v.changes.length).toBeGreaterThan(0);
      for (const c of v.changes) expect(c.before).not.toBe(c.after);
      const text = await cli(['verify', closed.closeId]);
      expect(text.code).toBe(1);
      for (const c of v.changes) expect(text.stdout).toContain(`${c.stream} ${c.id} ${c.field}`);
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

      const audit = await cli(['verify', '--audit']);
      expect(audit.code, brief(audit.stderr)).toBe(0);
      expect(audit.stdout).toMatch(/audit log intact: 2 row/);
    });
  });
}
