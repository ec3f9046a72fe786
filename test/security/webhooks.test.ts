/** Issue 43, points 2-4 at the webhook port: `serve-webhooks` as an operator starts it, forged senders and hostile
 * bodies posted over HTTP and HTTPS, on each database; `trustProxy` refused.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/db/database.js';
import { createTestStore, storeKinds, withCliStore, type TestStore } from '../helpers/db.js';
import { hasOpenssl, selfSignedCert } from '../helpers/tls.js';
import { deepValue, validEvent } from '../helpers/webhook-corpus.js';
import { brief, childEnv, freePort, runCli, startCli, waitFor, type RunningCli } from '../e2e/helpers.js';
import { recordCase } from './figures.js';

/** A documented sender address, the forger's claim. */
const SENDER = '34.76.54.194';
/** Loopback addresses a client connects from: the proxy (trusted), an outsider, and an allowed direct sender. */
const PROXY = '127.0.0.1';
const OUTSIDER = '127.0.0.2';
const DIRECT = '127.0.0.3';
const BODY_LIMIT = 64 * 1024;
const schemes = hasOpenssl ? (['http', 'https'] as const) : (['http'] as const);

const tlsDir = mkdtempSync(join(tmpdir(), 'rr-security-tls-'));
const tls = hasOpenssl ? selfSignedCert(tlsDir) : null;
afterAll(() => rmSync(tlsDir, { recursive: true, force: true }));

/** One client per source address, accepting the receiver's self-signed certificate. */
const agents = new Map<string, Agent>();
const agentFrom = (localAddress: string) => {
  let agent = agents.get(localAddress);
  if (!agent) {
    // The source address is the client's option (undici's connector takes it from there, not from `connect`).
    agent = new Agent({ localAddress, connect: { rejectUnauthorized: false } });
    agents.set(localAddress, agent);
  }
  return agent;
};
afterAll(async () => {
  for (const agent of agents.values()) await agent.close();
});

describe('webhooks.trustProxy', () => {
  it('is refused with exit 2, naming trustedProxies, by config check and serve-webhooks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rr-security-trustproxy-'));
    try {
      writeFileSync(join(dir, 'config.json'), JSON.stringify({ webhooks: { trustProxy: true } }));
      const env = childEnv({ RAMP_RECON_CONFIG: join(dir, 'config.json'), RAMP_RECON_DATA_DIR: join(dir, 'data') });
      for (const command of [['config', 'check'], ['serve-webhooks']]) {
        const r = await runCli(command, env);
        expect(r.code, brief(r.stderr)).toBe(2);
        expect(r.stderr).toMatch(/trustProxy.*trustedProxies/);
        recordCase(`trustProxy: true refused by ${command.join(' ')}`, 'refused');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

for (const kind of storeKinds)
  for (const scheme of schemes)
    describe(`serve-webhooks under attack [${kind}, ${scheme}]`, { timeout: 180_000 }, () => {
      const label = `[${kind}, ${scheme}]`;
      let pg: TestStore | undefined;
      let dir: string;
      let server: RunningCli;
      let url: string;

      beforeAll(async () => {
        if (kind === 'postgres') pg = await createTestStore('postgres');
        dir = mkdtempSync(join(tmpdir(), `rr-security-webhooks-${kind}-${scheme}-`));
        const port = await freePort();
        const config = {
          accounts: [{ name: 'acme' }, { name: 'globex' }],
          webhooks: {
            port,
            host: '127.0.0.1',
            allowedIps: [SENDER, DIRECT],
            trustedProxies: [PROXY],
            bodyLimitBytes: BODY_LIMIT,
            maxClockSkewSeconds: 600,
            ...(scheme === 'https' ? tls : {}),
          },
        };
        writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
        server = startCli(['serve-webhooks'], { ...envOf(dir, pg), LOG_LEVEL: 'info' });
        await waitFor(
          'serve-webhooks to listen',
          () => /account globex: .*\n/.test(server.stderr()) || server.child.exitCode !== null,
          150_000,
        );
        expect(server.child.exitCode, brief(server.stderr())).toBeNull();
        url = `${scheme}://127.0.0.1:${port}`;
      });

      afterAll(async () => {
        if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
        await pg?.drop();
        if (dir) rmSync(dir, { recursive: true, force: true });
      });

      async function post(
        body: string | Buffer,
        options: { from?: string; forwardedFor?: string; path?: string } = {},
      ): Promise<{ status: number; text: string }> {
        const res = await request(`${url}${options.path ?? '/webhooks/acme'}`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            // What the proxy in front of the receiver adds: the documented sender it saw.
            'x-forwarded-for': options.forwardedFor ?? SENDER,
          },
          body,
          dispatcher: agentFrom(options.from ?? PROXY),
        });
        return { status: res.statusCode, text: await res.body.text() };
      }
      const json = (overrides: Record<string, unknown> = {}) => JSON.stringify(validEvent(overrides, `sec-${kind}`));

      /** The database the CLI wrote: the test's schema, or the embedded folder while no CLI runs. */
      const withDb = <T>(fn: (store: Store) => Promise<T>): Promise<T> => withCliStore(pg, join(dir, 'data'), fn);

      it('believes X-Forwarded-For only from its proxy, refuses what the receiver must not read, stays under 5xx', async () => {
        const ids: Record<string, string> = {};
        const send = async (name: string, body: string, options: Parameters<typeof post>[1], status: number) => {
          ids[name] = (JSON.parse(body) as { eventId: string }).eventId;
          const res = await post(body, options);
          expect(res.status, `${name}: ${res.text}`).toBe(status);
          return res;
        };
        // Forged headers: an outsider claiming a sender is refused; an allowed direct client is known by its own address.
        await send('outsider', json(), { from: OUTSIDER, forwardedFor: SENDER }, 403);
        recordCase(`forged X-Forwarded-For from an untrusted peer ${label}`, 'refused');
        await send('direct', json(), { from: DIRECT, forwardedFor: SENDER }, 200);
        // Through the proxy: the right-most address the proxy saw is the sender, whatever the client wrote left of it.
        await send('proxied', json(), { forwardedFor: `6.6.6.6, ${SENDER}` }, 200);
        await send('spoofed', json(), { forwardedFor: `${SENDER}, 6.6.6.6` }, 403);
        recordCase(`X-Forwarded-For through a trusted proxy, a client-written entry left of it ${label}`, 'refused');

        // An event from the future after a real one: quarantined (202), the order keeps the state it had.
        const orderId = `sec-${kind}-${scheme}-future-order`;
        await send(
          'past',
          json({ orderId, orderState: 'WITHDRAWING', orderStateUpdatedAt: '2026-11-20T10:30:00Z' }),
          {},
          200,
        );
        const future = await send(
          'future',
          json({ orderId, orderState: 'COMPLETED', orderStateUpdatedAt: '2099-01-01T00:00:00Z' }),
          {},
          202,
        );
        expect(JSON.parse(future.text).status).toBe('quarantined');

        // Bodies the sender is to blame for: 400, 413 or 404, never 5xx.
        const deep = JSON.stringify(validEvent({ riskTree: '@D' }, `sec-${kind}`)).replace('"@D"', deepValue(5_000));
        expect((await post(deep)).status).toBe(400);
        recordCase(`valid event with a field nested 5,000 deep ${label}`, 'refused');
        const oversized = json({ padding: 'x'.repeat(BODY_LIMIT) });
        expect((await post(oversized)).status).toBe(413);
        recordCase(`body over bodyLimitBytes ${label}`, 'refused');
        for (const [name, body] of [
          ['not JSON', '{"eventId": "x", '],
          ['JSON of the wrong shape', '[1, 2, 3]'],
          ['not UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
        ] as const) {
          const res = await post(body);
          expect(res.status, `${name}: ${res.text}`).toBe(400);
          recordCase(`malformed body: ${name} ${label}`, 'refused');
        }
        const lost = await post(json(), { path: '/webhooks/initech' });
        expect(lost.status).toBe(404);
        recordCase(`POST to an unknown account's path ${label}`, 'refused');

        server.child.kill('SIGTERM');
        const done = await server.done;
        expect(done.code, brief(done.stderr)).toBe(0);
        const stats = JSON.parse(/webhook receiver stopped: (\{.*\})/.exec(done.stderr)![1]!) as Record<string, number>;
        expect(stats).toMatchObject({
          rejected: 2,
          future: 1,
          tooDeep: 1,
          invalid: 4,
          tooLarge: 1,
          unknownPath: 1,
          errors: 0,
          stored: 3,
        });

        await withDb(async (store) => {
          const remote = async (eventId: string) =>
            (
              await store.db
                .selectFrom('webhook_event')
                .select('remote_addr')
                .where('event_id', '=', eventId)
                .executeTakeFirst()
            )?.remote_addr;
          // The direct client's forged header was not believed: its peer address is stored.
          expect(await remote(ids.direct!)).toBe(DIRECT);
          recordCase(`forged X-Forwarded-For from an allowed direct client: its peer address used ${label}`, 'refused');
          expect(await remote(ids.proxied!)).toBe(SENDER);
          expect(await remote(ids.outsider!)).toBeUndefined();
          expect(await remote(ids.future!)).toBeUndefined();
          const order = await store.db
            .selectFrom('partner_order')
            .select(['order_state', 'order_state_updated_at_text'])
            .where('account', '=', 'acme')
            .where('order_id', '=', orderId)
            .executeTakeFirstOrThrow();
          expect(order).toEqual({ order_state: 'WITHDRAWING', order_state_updated_at_text: '2026-11-20T10:30:00Z' });
        });
        // The quarantined event is a break of the account it was sent to.
        const reconciled = await runCli(
          ['reconcile', '--account', 'acme', '--from', '2026-11-20', '--to', '2026-11-21', '--json'],
          envOf(dir, pg),
        );
        expect(reconciled.code, brief(reconciled.stderr)).toBe(0);
        const summary = JSON.parse(reconciled.stdout) as Array<{ breaks: Array<{ code: string; key: string }> }>;
        expect(summary[0]!.breaks).toContainEqual(expect.objectContaining({ code: 'S_QUARANTINE', key: ids.future }));
        recordCase(`event dated beyond maxClockSkewSeconds: quarantined, not applied, a break ${label}`, 'refused');
      });
    });

/** The CLI's environment: the test's folder, its database. */
function envOf(dir: string, pg: TestStore | undefined): NodeJS.ProcessEnv {
  return childEnv({
    RAMP_RECON_DATA_DIR: join(dir, 'data'),
    REPORTS_DIR: join(dir, 'reports'),
    RAMP_RECON_CONFIG: join(dir, 'config.json'),
    DATABASE_URL: pg?.url,
    LOG_LEVEL: 'warn',
  });
}
