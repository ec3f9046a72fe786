/** Issue 42, point 3: one `serve-webhooks` for a group of accounts, each account's events at its own URL. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/db/database.js';
import { createTestStore, storeKinds, withCliStore, type TestStore } from '../helpers/db.js';
import { validEvent } from '../helpers/webhook-corpus.js';
import { brief, childEnv, freePort, logLines, startCli, waitFor, type RunningCli } from './helpers.js';

const ACCOUNTS = ['alpha', 'beta', 'gamma'] as const;

for (const kind of storeKinds)
  describe(`serve-webhooks for a group of three accounts [${kind}]`, { timeout: 120_000 }, () => {
    let pg: TestStore | undefined;
    let dir: string;
    let server: RunningCli;
    let url: string;

    /** The database the CLI wrote: the test's Postgres schema, or the embedded data folder once the CLI has ended. */
    const withDb = <T>(fn: (store: Store) => Promise<T>): Promise<T> => withCliStore(pg, join(dir, 'data'), fn);

    beforeAll(async () => {
      if (kind === 'postgres') pg = await createTestStore('postgres');
      dir = mkdtempSync(join(tmpdir(), `rr-e2e-webhook-accounts-${kind}-`));
      const port = await freePort();
      const config = {
        accounts: ACCOUNTS.map((name) => ({ name })),
        webhooks: { port, host: '127.0.0.1', allowedIps: ['127.0.0.1'] },
      };
      writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
      const env = childEnv({
        RAMP_RECON_DATA_DIR: join(dir, 'data'),
        REPORTS_DIR: join(dir, 'reports'),
        RAMP_RECON_CONFIG: join(dir, 'config.json'),
        DATABASE_URL: pg?.url,
        LOG_LEVEL: 'info',
      });
      server = startCli(['serve-webhooks'], env);
      await waitFor(
        'serve-webhooks to listen',
        () => /account gamma: .*\n/.test(server.stderr()) || server.child.exitCode !== null,
        60_000,
      );
      expect(server.child.exitCode, brief(server.stderr())).toBeNull();
      url = `http://127.0.0.1:${port}`;
    }, 120_000);

    afterAll(async () => {
      if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
      await pg?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const post = async (path: string, body: Record<string, unknown>) => {
      const res = await request(url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.statusCode, text: await res.body.text() };
    };

    it("stores each account's events under it, refuses every other path with 404 and stores those nowhere", async () => {
      // It says which URL each organisation registers.
      for (const name of ACCOUNTS) expect(server.stderr()).toContain(`account ${name}: ${url}/webhooks/${name}`);

      const common = { createdAt: '2026-11-20T10:00:00Z' };
      const alphaPending = validEvent(
        { ...common, orderId: 'ord-a', orderState: 'PENDING', orderStateUpdatedAt: '2026-11-20T10:00:00Z' },
        'alpha',
      );
      const alphaDone = validEvent(
        {
          ...common,
          orderId: 'ord-a',
          orderState: 'COMPLETED',
          orderStateUpdatedAt: '2026-11-20T10:05:00.123456789Z',
          transactionHash: '0xa1',
        },
        'alpha',
      );
      const beta = validEvent(
        { ...common, orderId: 'ord-b', orderState: 'WITHDRAWING', orderStateUpdatedAt: '2026-11-20T10:01:00Z' },
        'beta',
      );
      expect((await post('/webhooks/alpha', alphaPending)).status).toBe(200);
      expect((await post('/webhooks/alpha', alphaDone)).status).toBe(200);
      expect((await post('/webhooks/beta', beta)).status).toBe(200);

      const atRoot = validEvent({ orderId: 'ord-root' }, 'lost');
      const atUnknown = validEvent({ orderId: 'ord-nosuch' }, 'lost');
      const root = await post('/', atRoot);
      const unknown = await post('/webhooks/nosuch', atUnknown);
      expect([root.status, unknown.status]).toEqual([404, 404]);

      // SIGTERM: it stops cleanly and says what it counted.
      server.child.kill('SIGTERM');
      const done = await server.done;
      expect(done.code, brief(done.stderr)).toBe(0);
      const stats = JSON.parse(/webhook receiver stopped: (\{.*\})/.exec(done.stderr)![1]!) as Record<string, number>;
      expect(stats).toMatchObject({ received: 3, stored: 3, unknownPath: 2, invalid: 0, rejected: 0 });
      const refused = logLines(done.stderr).filter((l) => l.level === 'warn' && l.path !== undefined);
      expect(refused.map((l) => l.path)).toEqual(['/', '/webhooks/nosuch']);

      await withDb(async (store) => {
        const events = await store.db
          .selectFrom('webhook_event')
          .select(['account', 'event_id', 'order_id', 'order_state', 'applied'])
          .orderBy('account')
          .orderBy('order_state_updated_at')
          .execute();
        expect(events).toEqual([
          {
            account: 'alpha',
            event_id: alphaPending.eventId,
            order_id: 'ord-a',
            order_state: 'PENDING',
            applied: true,
          },
          { account: 'alpha', event_id: alphaDone.eventId, order_id: 'ord-a', order_state: 'COMPLETED', applied: true },
          { account: 'beta', event_id: beta.eventId, order_id: 'ord-b', order_state: 'WITHDRAWING', applied: true },
        ]);
        const orders = await store.db
          .selectFrom('partner_order')
          .select(['account', 'order_id', 'order_state', 'order_state_updated_at_text', 'transaction_hash'])
          .orderBy('account')
          .execute();
        expect(orders).toEqual([
          {
            account: 'alpha',
            order_id: 'ord-a',
            order_state: 'COMPLETED',
            order_state_updated_at_text: '2026-11-20T10:05:00.123456789Z',
            transaction_hash: '0xa1',
          },
          {
            account: 'beta',
            order_id: 'ord-b',
            order_state: 'WITHDRAWING',
            order_state_updated_at_text: '2026-11-20T10:01:00Z',
            transaction_hash: null,
          },
        ]);
        // The refused events are nowhere: no event, no order, no quarantine, no conflict, under any account.
        const count = async (table: string) =>
          Number(
            (await sql<{ n: string }>`select count(*)::text as n from ${sql.table(table)}`.execute(store.db)).rows[0]!
              .n,
          );
        expect(await count('webhook_event')).toBe(3);
        expect(await count('partner_order')).toBe(2);
        expect(await count('quarantine')).toBe(0);
        expect(await count('webhook_event_conflict')).toBe(0);
        const lost = await store.db
          .selectFrom('partner_order')
          .select('order_id')
          .where('order_id', 'in', ['ord-root', 'ord-nosuch'])
          .execute();
        expect(lost).toEqual([]);
      });
    });
  });
