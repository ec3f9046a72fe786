import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { storeKinds } from '../helpers/db.js';
import { LATE_NIGHTS_SANDBOX } from '../helpers/late-nights.js';
import { brief, openCliWorld, ROOT, runCli, startCli, type CliWorld } from '../e2e/helpers.js';
import { recordFigure } from './figures.js';

/**
 * Issue 46: a close killed with SIGKILL exists whole (digest, workbook under its name with the SHA-256 stored) or not
 * at all. close-kill-cli.mjs kills `ramp-recon close` at each named point; the close is then either absent, with no
 * signed workbook under its final name, and the next close removes the temporary file and signs; or committed, and the
 * next command that finishes leftovers (a close of the account: refused here, the period being signed) puts the
 * workbook in place with exactly its SHA-256, and `verify` exits 0. One database per kind, the points one after
 * another: each close that stands is reopened before the next point, so the same period is signed again.
 */
const CLOCKED_CLI = join(ROOT, 'test', 'e2e', 'clocked-cli.mjs');
const KILL_CLI = join(ROOT, 'test', 'reliability', 'close-kill-cli.mjs');
const NIGHT_1 = new Date('2026-11-16T02:00:00Z');
const CLOSE = ['close', '--from', '2026-11-15', '--to', '2026-11-16', '--by', 'alice', '--json'];

/** The points of close-kill-cli.mjs, and whether the close stands after a kill there. */
const POINTS = [
  { point: 'workbook-written', stands: false },
  { point: 'close-inserted', stands: false },
  { point: 'before-commit', stands: false },
  { point: 'committed', stands: true },
  { point: 'placed', stands: true },
] as const;

interface Listed {
  closeId: string;
  state: string;
  digest: string;
  workbook: string;
  workbookSha256: string;
}

const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

for (const kind of storeKinds) {
  describe(`kill -9 inside \`close\`: the close whole or not at all [${kind}]`, { timeout: 600_000 }, () => {
    let sandbox: Sandbox;
    let world: CliWorld | undefined;
    let digest: string | undefined;
    const env = () => ({ ...world!.env, RAMP_RECON_TEST_CLOCK_OFFSET_MS: String(sandbox.data.clock() - Date.now()) });
    const cli = (args: string[]) => runCli(args, env(), ROOT, CLOCKED_CLI);
    const signedDir = () => join(world!.dir, 'reports', 'signed');
    const files = () => readdirSync(signedDir()).sort();
    const closes = async () => {
      const r = await cli(['closes', '--json']);
      expect(r.code, brief(r.stderr)).toBe(0);
      return JSON.parse(r.stdout) as Listed[];
    };
    /** Every workbook under a final name belongs to a close, and every close's workbook is there with its SHA-256. */
    const expectWhole = async (listed: Listed[]) => {
      const finals = files().filter((f) => f.endsWith('.xlsx'));
      expect(finals).toEqual(listed.map((c) => c.workbook.split('/').pop()!).sort());
      for (const c of listed) expect(sha(c.workbook), c.closeId).toBe(c.workbookSha256);
      expect(files().filter((f) => f.endsWith('.partial'))).toEqual([]);
    };

    beforeAll(async () => {
      sandbox = await startSandbox({
        ...LATE_NIGHTS_SANDBOX,
        discrepancies: true,
        live: true,
        faults: 'none',
        now: NIGHT_1,
      });
      world = await openCliWorld(kind, 'close-kill', sandbox.env, { partner: { feeRate: sandbox.partnerFeeRate } });
      const night = await cli(['run', '--json', '--no-email']);
      expect(night.code, brief(night.stderr)).toBe(0);
    });

    afterAll(async () => {
      await world?.close();
      await sandbox?.close();
    });

    for (const { point, stands } of POINTS) {
      const outcome = stands ? 'the close stands, its workbook put in place' : 'no close, and the next one signs';
      it(`killed at ${point}: ${outcome}`, async () => {
        const before = await closes();
        const killed = await startCli(CLOSE, { ...env(), RAMP_RECON_TEST_KILL_AT: point }, ROOT, KILL_CLI).done;
        expect(killed.signal, `not killed at ${point}: ${brief(killed.stderr)}`).toBe('SIGKILL');

        const after = await closes();
        const added = after.filter((c) => !before.some((b) => b.closeId === c.closeId));
        expect(added.length).toBe(stands ? 1 : 0);
        // Every point lies after the workbook was written and before its temporary name was removed.
        expect(files().filter((f) => f.endsWith('.partial')).length).toBe(1);
        // Not committed: no workbook under a final name beyond the earlier closes'. Committed: under its final name
        // only once linked ('placed').
        const finals = files().filter((f) => f.endsWith('.xlsx'));
        const names = [...before, ...added].map((c) => c.workbook.split('/').pop()!);
        expect(finals).toEqual(names.slice(0, point === 'placed' ? names.length : before.length).sort());

        // A close that stands is whole at once: `verify` puts a workbook left under its temporary name in place.
        if (stands) {
          const early = await cli(['verify', added[0]!.closeId]);
          expect(early.code, brief(early.stderr)).toBe(0);
          expect(sha(added[0]!.workbook)).toBe(added[0]!.workbookSha256);
          expect(files().filter((f) => f.endsWith('.partial'))).toEqual([]);
        }
        // The next close signs (no close stood), or is refused (the period is signed).
        const next = await cli(CLOSE);
        expect(next.code, brief(next.stderr)).toBe(stands ? 2 : 0);
        if (stands) expect(next.stderr).toMatch(/overlaps close/);
        const signed = (await closes()).filter((c) => c.state === 'signed');
        expect(signed.length).toBe(1);
        const close = signed[0]!;
        if (stands) expect(close.closeId).toBe(added[0]!.closeId);
        expect(close.digest).toMatch(/^[0-9a-f]{64}$/);
        expect(close.workbookSha256).toMatch(/^[0-9a-f]{64}$/);
        // Every close of the same records signs the same digest, killed or not.
        digest ??= close.digest;
        expect(close.digest).toBe(digest);
        await expectWhole(await closes());
        const verified = await cli(['verify', close.closeId]);
        expect(verified.code, brief(verified.stderr)).toBe(0);
        expect(verified.stdout).toMatch(/unchanged since sign-off/);

        recordFigure({ kind: 'kill', name: `close: ${point} [${kind}]`, db: kind, point, lost: 0, duplicated: 0 });
        // The period open again for the next point.
        const reopened = await cli(['reopen', close.closeId, '--by', 'bob', '--reason', `kill point ${point}`]);
        expect(reopened.code, brief(reopened.stderr)).toBe(0);
      });
    }
  });
}
