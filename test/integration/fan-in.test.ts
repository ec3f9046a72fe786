import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PgBoss } from 'pg-boss';
import { describeEachStore } from '../helpers/db.js';
import { mailbox, type Mailbox } from '../helpers/smtp.js';
import { header, textPart } from '../helpers/mime.js';
import { freePort } from '../e2e/helpers.js';
import { loadGroup, type Group } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { fanIn } from '../../src/fleet/work.js';
import { finishBatchAccount, loadBatch, planBatch, startBatchAccount } from '../../src/store/runs/batches.js';

/**
 * The group report's fan-in (issue 27): at the deadline it goes out whatever is still running, naming those accounts;
 * when a late account ends, an amended report says what changed; a repeated fan-in sends nothing; a batch still
 * running before its deadline waits.
 */
describeEachStore('the group report fanned in: deadline, amendment, once', (ctx) => {
  let relay: Mailbox;
  let dir: string;
  let group: Group;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rr-fan-in-'));
    relay = mailbox();
    const port = await freePort();
    await relay.listen(port);
    const path = join(dir, 'config.json');
    writeFileSync(
      path,
      JSON.stringify({
        accounts: [{ name: 'acme' }, { name: 'globex' }],
        email: { from: 'recon@example.com', to: ['group@example.com'] },
      }),
    );
    group = loadGroup({
      env: { REPORTS_DIR: join(dir, 'reports'), SMTP_URL: `smtp://127.0.0.1:${port}` },
      configPath: path,
    });
  });

  afterAll(async () => {
    await relay?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('sends at the deadline naming the account still running, then an amended report once it ends, and nothing twice', async () => {
    const db = ctx.store.db;
    const deps = { store: ctx.store, boss: null as unknown as PgBoss, group, logger: silentLogger() };
    const { id } = await planBatch(db, {
      trigger: 'enqueue',
      period: { from: '2026-11-20', to: '2026-11-21' },
      accounts: ['acme', 'globex'],
    });
    await startBatchAccount(db, id, 'acme', 'host-a:11');
    await finishBatchAccount(
      db,
      id,
      'acme',
      { status: 'failed', failedStage: 'sync.exchange', error: 'Exchange API down' },
      group.secrets,
    );
    await startBatchAccount(db, id, 'globex', 'host-b:22');

    // before the deadline an unfinished batch waits
    await fanIn(deps, id, { deadline: false });
    expect(relay.mails).toHaveLength(0);

    // the deadline: the report goes out, globex named as still running on its worker
    await fanIn(deps, id, { deadline: true });
    expect(relay.mails).toHaveLength(1);
    const first = relay.mails[0]!;
    expect(header(first, 'Subject')).toBe(
      'ramp-recon group 2026-11-20: 0 of 2 accounts reconciled, 1 failed, 1 not run',
    );
    expect(textPart(first, 'text/plain')).toMatch(/^globex: NOT RUN: still running on host-b:22 \(attempt 1\)/m);
    expect(textPart(first, 'text/plain')).toMatch(/^acme: FAILED in sync\.exchange: Exchange API down/m);
    // the totals cover no account, and say so: neither the failed one nor the one still running is summed
    expect(textPart(first, 'text/plain')).toMatch(
      /^Total of 0 of 2 accounts \(acme failed, globex still running: left out\): no account to sum$/m,
    );
    // a second deadline firing, or a repeated fan-in: nothing new to say
    await fanIn(deps, id, { deadline: true });
    expect(relay.mails).toHaveLength(1);

    // the late account ends: an amended report, saying what changed
    await finishBatchAccount(db, id, 'globex', { status: 'failed', error: 'killed' }, group.secrets);
    await fanIn(deps, id, { deadline: false });
    expect(relay.mails).toHaveLength(2);
    const amended = relay.mails[1]!;
    expect(header(amended, 'Subject')).toBe(
      'ramp-recon group 2026-11-20 (amended): 0 of 2 accounts reconciled, 2 failed',
    );
    expect(textPart(amended, 'text/plain')).toContain(
      'Amended report: changed since the previous report: globex: running -> failed',
    );
    const batch = await loadBatch(db, id);
    expect(batch.reportVersion).toBe(2);
    expect(batch.reportPath).toMatch(/_v2\.xlsx$/);
    await fanIn(deps, id, { deadline: false });
    expect(relay.mails).toHaveLength(2);
  });
});
