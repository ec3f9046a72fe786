import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clocked } from '../helpers/clock.js';
import { createTestStore, storeKinds, type StoreKind } from '../helpers/db.js';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { Decimal } from '../../src/decimal/decimal.js';
import { openStore, type Store } from '../../src/store/db/database.js';
import { syncExchange } from '../helpers/sync.js';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';

/**
 * The hard case of resumability: the CLI's `sync --source exchange` killed with SIGKILL (no
 * handler runs, a transaction may be cut in the middle), then run again to the end, must leave
 * exactly the rows of an uninterrupted sync. Uses the built CLI (npm run build), like test/e2e.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');

async function dump(store: Store) {
  const db = store.db;
  const out = {
    // Every stored column but change_xid: which transaction wrote a row differs between two syncs by design.
    fills: await db
      .selectFrom('exchange_fill')
      .select([
        'account',
        'exec_id',
        'ex_ord_id',
        'trade_id',
        'side',
        'symbol',
        'price',
        'qty',
        'fee',
        'timestamp',
        'raw',
      ])
      .orderBy('exec_id')
      .execute(),
    orders: await db
      .selectFrom('exchange_order')
      .select(['ex_ord_id', 'ord_status', 'cum_qty', 'avg_px', 'price', 'timestamp', 'raw'])
      .orderBy('ex_ord_id')
      .execute(),
    orderStates: await db
      .selectFrom('exchange_order_state')
      .select(['ex_ord_id', 'ord_status', 'cum_qty'])
      .orderBy('ex_ord_id')
      .orderBy('ord_status')
      .execute(),
    deposits: await db
      .selectFrom('exchange_deposit')
      .select(['deposit_id', 'amount', 'state', 'raw'])
      .orderBy('deposit_id')
      .execute(),
    depositStates: await db
      .selectFrom('exchange_deposit_state')
      .select(['deposit_id', 'state'])
      .orderBy('deposit_id')
      .orderBy('state')
      .execute(),
    withdrawals: await db
      .selectFrom('exchange_withdrawal')
      .select(['withdrawal_id', 'amount', 'fee', 'state', 'raw'])
      .orderBy('withdrawal_id')
      .execute(),
    notFound: await db.selectFrom('exchange_order_not_found').select('ex_ord_id').orderBy('ex_ord_id').execute(),
    cursor: await db
      .selectFrom('sync_cursor')
      .select(['name', 'value'])
      .where('name', 'in', ['fills.execId', 'fills.pending'])
      .orderBy('name')
      .execute(),
  };
  return JSON.parse(
    JSON.stringify(out, (_k, v: unknown) => (v instanceof Decimal ? `D:${v.toString()}` : v)),
  ) as unknown;
}

function runCli(
  env: NodeJS.ProcessEnv,
  killAfterRequests: number | null,
  sb: Sandbox,
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  // On the test's clock: the sync's days end at the same "today" as the in-process reference's.
  const run = clocked(CLI, env);
  const child = spawn(process.execPath, [...run.argv, 'sync', '--source', 'exchange'], {
    env: run.env,
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.resume();
  let n = 0;
  const off = sb.onRequest(({ api }) => {
    if (api === 'exchange' && killAfterRequests !== null && ++n === killAfterRequests) child.kill('SIGKILL');
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      off();
      resolve({ code, signal, stderr });
    });
  });
}

describe.skipIf(!existsSync(CLI))('exchange sync killed with SIGKILL', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ seed: 21, days: 3, exchangeOrdersPerDay: 250, fillsPerOrder: 3, ordersPerDay: 10 });
  });
  afterAll(() => sb.close());

  for (const kind of storeKinds as StoreKind[]) {
    it(`resumes to exactly the rows of an uninterrupted sync [${kind}]`, async () => {
      const ref = await createTestStore(kind);
      let reference: unknown;
      try {
        const config = loadConfig({ env: { ...sb.env } });
        await syncExchange(
          { store: ref.store, config, logger: silentLogger(), runId: null, now: new Date(), signal: undefined },
          { progress: 'off' },
        );
        reference = await dump(ref.store);
      } finally {
        await ref.drop();
      }

      let target: { env: Record<string, string>; open: () => Promise<Store>; drop: () => Promise<void> };
      if (kind === 'postgres') {
        const t = await createTestStore('postgres');
        await t.store.close();
        target = {
          env: { DATABASE_URL: t.url! },
          open: () => openStore({ url: t.url!, schema: t.schema }),
          drop: () => t.drop().catch(() => {}),
        };
      } else {
        const dir = mkdtempSync(join(tmpdir(), 'rr-kill-'));
        target = {
          env: { RAMP_RECON_DATA_DIR: dir },
          open: () => openStore({ dataDir: join(dir) }),
          drop: async () => {},
        };
      }
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        TZ: 'UTC',
        LOG_LEVEL: 'warn',
        ...sb.env,
        ...target.env,
      };
      delete env.PARTNER_API_URL;
      try {
        for (const killAt of [8, 15]) {
          const r = await runCli(env, killAt, sb);
          expect(r.signal, r.stderr.slice(-2000)).toBe('SIGKILL');
        }
        const done = await runCli(env, null, sb);
        expect(done.code, done.stderr.slice(-2000)).toBe(0);
        const store = await target.open();
        try {
          expect(await dump(store)).toEqual(reference);
        } finally {
          await store.close();
        }
      } finally {
        await target.drop();
      }
      // Four syncs, three of them CLI start-ups (two PGlite ones on the embedded database): about 48 s on the
      // 2-core VM with the suite beside it, too close to the suite's 60 s.
    }, 180_000);
  }
});
