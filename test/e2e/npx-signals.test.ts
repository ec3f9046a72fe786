/**
 * Issue 42 item 7: `npx ramp-recon schedule` stopped with SIGTERM. npm's npx hands the signal to the shell it started
 * the CLI with, which dies without passing it on (npm 11: the node process was left running, re-parented to init);
 * the CLI notices its parent is gone and stops as on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestStore, storeKinds, type TestStore } from '../helpers/db.js';
import { childEnv, logLines, ROOT, waitFor } from './helpers.js';

const kind = storeKinds.includes('postgres') ? 'postgres' : 'embedded';

/** Whether any process of the group still runs (signal 0 checks without sending). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

describe(`npx ramp-recon schedule, SIGTERM to npx [${kind}]`, { timeout: 240_000 }, () => {
  let dir = '';
  let pg: TestStore | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rr-npx-signals-'));
    writeFileSync(join(dir, 'config.json'), '{}');
    if (kind === 'postgres') pg = await createTestStore('postgres');
  });
  afterAll(async () => {
    await pg?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the node process npx started stops gracefully once npx is gone, and nothing of the group is left', async () => {
    const env = childEnv({
      // nothing listens there: the schedule only needs them set until a night fires
      PARTNER_API_URL: 'http://127.0.0.1:9',
      PARTNER_PUBLIC_KEY: 'pk-npx-test',
      PARTNER_PRIVATE_KEY: 'sk-npx-test',
      EXCHANGE_API_URL: 'http://127.0.0.1:9/v3/exchange',
      EXCHANGE_API_TOKEN: 'tk-npx-test',
      RAMP_RECON_CONFIG: join(dir, 'config.json'),
      RAMP_RECON_DATA_DIR: join(dir, 'data'),
      REPORTS_DIR: join(dir, 'reports'),
      DATABASE_URL: pg?.url,
      LOG_LEVEL: 'info',
    });
    // In a group of its own, as a service manager starts it: the signal goes to npx alone, as `kill <pid>` sends it.
    const npx = spawn('npx', ['ramp-recon', 'schedule'], {
      cwd: ROOT,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    npx.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // The pipes close when every process holding them has ended: npx and the node process it started.
    const closed = new Promise<void>((r) => npx.stdout.on('close', () => r()));
    const pgid = npx.pid!;
    try {
      await waitFor('the schedule to start', () => /"schedule started"/.test(stderr), 180_000);
      npx.kill('SIGTERM');
      await waitFor('every process of the group to end', () => !groupAlive(pgid), 30_000);
      await closed;
      const messages = logLines(stderr).map((l) => l.msg);
      expect(messages).toEqual(
        expect.arrayContaining([
          'the parent process (npm: npx or npm run) is gone, and npm passes no SIGTERM on: taken as SIGTERM',
          'schedule stopped',
        ]),
      );
    } finally {
      if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
    }
  });
});
