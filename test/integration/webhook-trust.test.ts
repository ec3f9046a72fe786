/** Issue 43: whom the receiver believes (trusted proxies), what it applies (no events from the future) and what it
 * reads (no body nested past the limit), over HTTP and HTTPS, on each store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { Agent, request } from 'undici';
import { loadConfig, type Config } from '../../src/config/load.js';
import { silentLogger } from '../../src/log/logger.js';
import { startWebhookServer, type WebhookServer } from '../../src/webhooks/server.js';
import { orderEventSchema } from '../../src/sources/partner/schemas.js';
import { orderToRow } from '../../src/sources/partner/transform.js';
import { upsertPartnerOrders } from '../../src/store/sync/partner-orders.js';
import { unresolvedQuarantine } from '../../src/store/sync/quarantine.js';
import { quarantineBreaks } from '../unit/recon-factories.js';
import { describeEachStore } from '../helpers/db.js';
import { deepValue, validEvent } from '../helpers/webhook-corpus.js';
import { quarantinedBody, storedEventBytes } from '../helpers/webhook-post.js';
import { hasOpenssl, selfSignedCert } from '../helpers/tls.js';

const base = loadConfig({ env: {} });
const SENDER = '34.76.54.194';
// The receiver's clock in these tests: the corpus's events are of 2026-11-20, two hours before it.
const CLOCK = new Date('2026-11-20T12:00:00Z');

const schemes = hasOpenssl ? (['http', 'https'] as const) : (['http'] as const);
let tlsDir = '';
let tlsFiles = () => ({ tlsCertFile: '', tlsKeyFile: '' });

beforeAll(() => {
  if (!hasOpenssl) return;
  tlsDir = mkdtempSync(join(tmpdir(), 'rr-tls-trust-'));
  const files = selfSignedCert(tlsDir);
  tlsFiles = () => files;
});
afterAll(() => {
  if (tlsDir) rmSync(tlsDir, { recursive: true, force: true });
});

const agent = new Agent({ connect: { rejectUnauthorized: false } });
afterAll(() => agent.close());

async function post(server: WebhookServer, body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await request(`${server.url}/webhooks/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    dispatcher: agent,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

const eventText = (overrides: Record<string, unknown> = {}) => JSON.stringify(validEvent(overrides, 'trust'));

describeEachStore('webhook receiver, issue 43', (ctx) => {
  for (const scheme of schemes) {
    describe(scheme, () => {
      const start = (webhooks: Record<string, unknown>, now: () => Date = () => CLOCK) => {
        const config = {
          ...base,
          webhooks: {
            port: 0,
            host: '127.0.0.1',
            allowedIps: [SENDER],
            bodyLimitBytes: 1024 * 1024,
            ...(scheme === 'https' ? tlsFiles() : {}),
            ...webhooks,
          },
        } as Config;
        return startWebhookServer({ store: ctx.store, config, logger: silentLogger() }, { now });
      };
      const remoteOf = async (eventId: string) =>
        (
          await sql<{
            remote_addr: string | null;
          }>`select remote_addr from webhook_event where event_id = ${eventId}`.execute(ctx.store.db)
        ).rows[0]?.remote_addr;

      it('a direct client claiming a sender address in X-Forwarded-For gets 403: its peer is no trusted proxy', async () => {
        const server = await start({ trustedProxies: ['10.0.0.0/8'] });
        try {
          const ev = validEvent({}, 'trust');
          const res = await post(server, JSON.stringify(ev), { 'x-forwarded-for': SENDER });
          expect(res.status).toBe(403);
          expect(server.stats()).toMatchObject({ rejected: 1, received: 0, stored: 0 });
          expect(await storedEventBytes(ctx.store, ev.eventId as string)).toBeUndefined();
        } finally {
          await server.close();
        }
      });

      it('from a trusted proxy, the sender it saw is accepted; a client-written entry left of it is not', async () => {
        const server = await start({ trustedProxies: ['127.0.0.1'] });
        try {
          const ev = validEvent({}, 'trust');
          expect((await post(server, JSON.stringify(ev), { 'x-forwarded-for': SENDER })).status).toBe(200);
          expect(await remoteOf(ev.eventId as string)).toBe(SENDER);
          const spoofed = await post(server, eventText(), { 'x-forwarded-for': `${SENDER}, 203.0.113.9` });
          expect(spoofed.status).toBe(403);
          // No header: the proxy itself is the peer, and no sender.
          expect((await post(server, eventText())).status).toBe(403);
          expect(server.stats()).toMatchObject({ stored: 1, rejected: 2 });
        } finally {
          await server.close();
        }
      });

      it('walks a chain of trusted proxies to the first address that is none of them', async () => {
        const server = await start({ trustedProxies: ['127.0.0.0/8', '10.0.0.0/8', 'fd00::/8'] });
        try {
          const ev = validEvent({}, 'trust');
          const chain = `6.6.6.6, ${SENDER}, 10.2.3.4, fd00::9`;
          expect((await post(server, JSON.stringify(ev), { 'x-forwarded-for': chain })).status).toBe(200);
          expect(await remoteOf(ev.eventId as string)).toBe(SENDER);
          // The sender's own entry, then an outsider: the outsider is who reached our first proxy.
          const outsider = `${SENDER}, 6.6.6.6, 10.2.3.4`;
          expect((await post(server, eventText(), { 'x-forwarded-for': outsider })).status).toBe(403);
        } finally {
          await server.close();
        }
      });

      it('quarantines an event from the future: not applied, the polled state kept, a break; a normal event after it applies', async () => {
        const server = await start({ trustedProxies: [], allowedIps: ['127.0.0.1'], maxClockSkewSeconds: 600 });
        try {
          const polledEvent = validEvent(
            { orderState: 'WITHDRAWING', orderStateUpdatedAt: '2026-11-20T10:30:00Z' },
            'trust',
          );
          const orderId = polledEvent.orderId as string;
          const polled = orderEventSchema.parse(polledEvent);
          await upsertPartnerOrders(
            ctx.store.db,
            base.account,
            [orderToRow(polled, JSON.stringify(polledEvent))],
            'poll',
            CLOCK,
          );
          const stateOf = async () =>
            await ctx.store.db
              .selectFrom('partner_order')
              .select(['order_state', 'order_state_updated_at_text'])
              .where('order_id', '=', orderId)
              .executeTakeFirstOrThrow();

          const forged = Buffer.from(
            eventText({ orderId, orderState: 'COMPLETED', orderStateUpdatedAt: '2099-01-01T00:00:00Z' }),
          );
          // Eleven minutes ahead is past the 10 allowed; createdAt alone from the future counts as well.
          const skewed = Buffer.from(
            eventText({ orderId, orderState: 'COMPLETED', orderStateUpdatedAt: '2026-11-20T12:11:00Z' }),
          );
          const createdAhead = Buffer.from(
            eventText({ orderId, orderState: 'FAILED', createdAt: '2026-11-21T00:00:00Z' }),
          );
          for (const body of [forged, skewed, createdAhead]) {
            const res = await post(server, body);
            expect(res.status, res.text).toBe(202);
            expect(JSON.parse(res.text).status).toBe('quarantined');
            const eventId = JSON.parse(body.toString()).eventId as string;
            expect(await storedEventBytes(ctx.store, eventId)).toBeUndefined();
            const q = await quarantinedBody(ctx.store, body);
            expect(q?.rawBytes?.equals(body)).toBe(true);
            expect(q?.recordKey).toBe(eventId);
            expect(q?.reason).toMatch(/(orderStateUpdatedAt|createdAt) ".*" is \d+ s ahead of the receiver's clock/);
          }
          expect(server.stats()).toMatchObject({ future: 3, stored: 0, applied: 0 });
          expect(await stateOf()).toEqual({
            order_state: 'WITHDRAWING',
            order_state_updated_at_text: '2026-11-20T10:30:00Z',
          });
          const forgedId = JSON.parse(forged.toString()).eventId as string;
          const breaks = quarantineBreaks(await unresolvedQuarantine(ctx.store.db, base.account));
          expect(breaks.find((b) => b.key === forgedId)?.code).toBe('S_QUARANTINE');

          // Nine minutes ahead is a clock running a little fast: applied, as is any event of the past.
          const real = eventText({ orderId, orderState: 'COMPLETED', orderStateUpdatedAt: '2026-11-20T12:09:00Z' });
          const res = await post(server, real);
          expect(res.status, res.text).toBe(200);
          expect(await stateOf()).toEqual({
            order_state: 'COMPLETED',
            order_state_updated_at_text: '2026-11-20T12:09:00Z',
          });
          expect(server.stats()).toMatchObject({ stored: 1, applied: 1, future: 3 });
        } finally {
          await server.close();
        }
      });

      it('answers 400 (never 5xx) for bodies nested past 64 levels, valid events with a deep extra field included', async () => {
        const server = await start({ allowedIps: ['127.0.0.1'] });
        try {
          // The event object is level 1: an extra field 63 deep makes 64, the limit, and is stored.
          const atLimit = validEvent({ riskTree: '@D' }, 'trust');
          const atLimitText = JSON.stringify(atLimit).replace('"@D"', deepValue(63));
          expect((await post(server, atLimitText)).status).toBe(200);
          expect(await storedEventBytes(ctx.store, atLimit.eventId as string)).toEqual(Buffer.from(atLimitText));

          const bodies = [64, 100, 5_000, 100_000].map((depth) => {
            const ev = validEvent({ riskTree: '@D' }, 'trust');
            return {
              eventId: ev.eventId as string,
              bytes: Buffer.from(JSON.stringify(ev).replace('"@D"', deepValue(depth))),
            };
          });
          // Not an event at all, and not even JSON: brackets only.
          bodies.push({ eventId: '', bytes: Buffer.from('['.repeat(30_000)) });
          for (const { eventId, bytes } of bodies) {
            const res = await post(server, bytes);
            expect(res.status, res.text).toBe(400);
            expect(JSON.parse(res.text).error).toBe(
              'body nests arrays or objects deeper than 64 levels (kept as text, not read)',
            );
            const q = await quarantinedBody(ctx.store, bytes);
            expect(q?.rawBytes?.equals(bytes)).toBe(true);
            expect(q?.rawText).toBe(bytes.toString('utf8'));
            if (eventId) expect(await storedEventBytes(ctx.store, eventId)).toBeUndefined();
          }
          expect(server.stats()).toMatchObject({ invalid: 5, tooDeep: 5, errors: 0, stored: 1 });
        } finally {
          await server.close();
        }
      });
    });
  }
});
