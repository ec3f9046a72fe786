import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';
import { NO_FAULTS } from '../../sandbox/faults.js';

const NOW = new Date('2026-11-21T15:30:00Z');
let sb: Sandbox | undefined;
let receiver: Server | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
  await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
  receiver = undefined;
});

describe('faults', () => {
  it('429 with Retry-After, 500/503 with the API error bodies, slow and truncated responses', async () => {
    sb = await startSandbox({
      days: 2,
      ordersPerDay: 10,
      exchangeOrdersPerDay: 10,
      now: NOW,
      faults: { ...NO_FAULTS, rateLimited: 1, retryAfterSeconds: 2 },
    });
    const tok = { 'X-API-Token': sb.env.EXCHANGE_API_TOKEN! };
    const r429 = await fetch(`${sb.env.EXCHANGE_API_URL}/fills`, { headers: tok });
    expect(r429.status).toBe(429);
    expect(r429.headers.get('retry-after')).toBe('2');
    const p429 = await fetch(`${sb.env.PARTNER_API_URL}/partner-gateway/partner-api/v1/orders`, {
      headers: { 'X-Public-API-Key': sb.env.PARTNER_PUBLIC_KEY!, 'X-Private-API-Key': sb.env.PARTNER_PRIVATE_KEY! },
    });
    expect(p429.status).toBe(429);
    expect(((await p429.json()) as { errors: unknown[] }).errors).toHaveLength(1);
    sb.setOption('faults', { ...NO_FAULTS, serverError500: 1 });
    const r500 = await fetch(`${sb.env.EXCHANGE_API_URL}/fills`, { headers: tok });
    expect(r500.status).toBe(500);
    expect(Object.keys((await r500.json()) as object).sort()).toEqual([
      'error',
      'message',
      'path',
      'status',
      'timestamp',
    ]);
    sb.setOption('faults', { ...NO_FAULTS, serverError503: 1 });
    expect((await fetch(`${sb.env.EXCHANGE_API_URL}/fills`, { headers: tok })).status).toBe(503);
    sb.setOption('faults', { ...NO_FAULTS, slow: 1, slowMs: 400 });
    const t = Date.now();
    await (await fetch(`${sb.env.EXCHANGE_API_URL}/fees`, { headers: tok })).text();
    expect(Date.now() - t).toBeGreaterThanOrEqual(390);
    sb.setOption('faults', { ...NO_FAULTS, truncated: 1 });
    await expect(fetch(`${sb.env.EXCHANGE_API_URL}/fills`, { headers: tok }).then((r) => r.text())).rejects.toThrow();
    sb.setOption('faults', 'none');
    expect((await fetch(`${sb.env.EXCHANGE_API_URL}/fills`, { headers: tok })).status).toBe(200);
  });

  it('partner public key: 10 requests per second, then 429 with Retry-After', async () => {
    sb = await startSandbox({
      days: 1,
      ordersPerDay: 5,
      exchangeOrdersPerDay: 5,
      now: NOW,
      faults: { ...NO_FAULTS, publicRateLimitPerSecond: 10 },
    });
    // Start at the beginning of a second so the burst stays inside one window.
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000)));
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++)
      statuses.push(
        (
          await fetch(`${sb.env.PARTNER_API_URL}/partner-gateway/partner-api/v1/currencies`, {
            headers: { 'X-Public-API-Key': sb.env.PARTNER_PUBLIC_KEY! },
          })
        ).status,
      );
    expect(statuses.slice(0, 10).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(10)).toEqual([429, 429]);
    // Orders carry the public key too, but private calls have their own limit: not counted here.
    expect(
      (
        await fetch(`${sb.env.PARTNER_API_URL}/partner-gateway/partner-api/v1/orders`, {
          headers: { 'X-Public-API-Key': sb.env.PARTNER_PUBLIC_KEY!, 'X-Private-API-Key': sb.env.PARTNER_PRIVATE_KEY! },
        })
      ).status,
    ).toBe(200);
  });

  it('a malformed record inside a good page, listed as S_QUARANTINE', async () => {
    sb = await startSandbox({
      days: 3,
      ordersPerDay: 10,
      exchangeOrdersPerDay: 10,
      now: NOW,
      discrepancies: true,
      faults: { ...NO_FAULTS, malformedRecord: true },
    });
    const q = sb.expectedBreaks().find((b) => b.code === 'S_QUARANTINE')!;
    expect(q).toBeDefined();
    const text = await (
      await fetch(`${sb.env.EXCHANGE_API_URL}/deposits`, { headers: { 'X-API-Token': sb.env.EXCHANGE_API_TOKEN! } })
    ).text();
    const list = JSON.parse(text) as Array<{ depositId: string; amount: unknown }>;
    expect(list.length).toBeGreaterThan(5);
    expect(list.find((d) => d.depositId === q.key)!.amount).toBe('NaN.0');
    expect(list.filter((d) => d.amount === 'NaN.0')).toHaveLength(1);
  });

  it('the default profile produces each fault over a few hundred requests, deterministically', async () => {
    const run = async (): Promise<number[]> => {
      const s = await startSandbox({
        days: 2,
        ordersPerDay: 5,
        exchangeOrdersPerDay: 5,
        now: NOW,
        faults: { ...(await import('../../sandbox/faults.js')).DEFAULT_FAULTS, slow: 0, truncated: 0 },
      });
      const statuses: number[] = [];
      for (let i = 0; i < 300; i++)
        statuses.push(
          (await fetch(`${s.env.EXCHANGE_API_URL}/fees`, { headers: { 'X-API-Token': s.env.EXCHANGE_API_TOKEN! } }))
            .status,
        );
      await s.close();
      return statuses;
    };
    const a = await run();
    expect(new Set(a)).toEqual(new Set([200, 429, 500, 503]));
    expect(await run()).toEqual(a);
  });
});

describe('webhooks', () => {
  it('one POST per state change, retries after failures, duplicates, a late earlier state, planted gap never sent', async () => {
    const received: Array<{ body: any; status: number }> = [];
    const attempts = new Map<string, number>();
    receiver = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(text);
        const n = (attempts.get(body.eventId) ?? 0) + 1;
        attempts.set(body.eventId, n);
        // Fail the first attempt of every seventh event: the sender must retry it.
        const status = n === 1 && parseInt(body.eventId.slice(-2), 16) % 7 === 0 ? 500 : 200;
        received.push({ body, status });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((r) => receiver!.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    sb = await startSandbox({
      days: 5,
      ordersPerDay: 12,
      exchangeOrdersPerDay: 2,
      now: NOW,
      discrepancies: true,
      webhookUrl: url,
    });
    await sb.webhooksIdle();
    const ok = received.filter((r) => r.status === 200);
    const clock = sb.data.clock();
    const gap = sb.expectedBreaks().find((b) => b.code === 'P_WEBHOOK_GAP')!;
    for (const o of sb.data.partnerOrderRecords()) {
      for (const step of o.timeline.filter((s) => s.atMs <= clock)) {
        const got = ok.some((r) => r.body.orderId === o.orderId && r.body.orderState === step.state);
        expect(got, `${o.orderId} ${step.state}`).toBe(!(o.orderId === gap.key && step.state === 'COMPLETED'));
      }
    }
    expect([...attempts.values()].some((n) => n > 1)).toBe(true);
    const perEvent = new Map<string, number>();
    for (const r of ok) perEvent.set(r.body.eventId, (perEvent.get(r.body.eventId) ?? 0) + 1);
    expect([...perEvent.values()].some((n) => n > 1)).toBe(true);
    const late = sb.data.partnerOrderRecords().some((o) => {
      const idx = (state: string): number =>
        ok.findIndex((r) => r.body.orderId === o.orderId && r.body.orderState === state);
      return idx('PENDING') > idx('COMPLETED') && idx('COMPLETED') >= 0;
    });
    expect(late).toBe(true);
    const allowed = new Set([
      'eventId',
      'orderId',
      'externalReference',
      'subPartnerId',
      'orderType',
      'createdAt',
      'orderState',
      'orderStateUpdatedAt',
      'paymentMethod',
      'inputCurrency',
      'inputAmount',
      'outputCurrency',
      'outputAmount',
      'amountUsd',
      'processingFee',
      'processingFeeUsd',
      'partnerFee',
      'partnerFeeUsd',
      'networkFee',
      'networkFeeUsd',
      'userId',
      'userCountry',
      'userState',
      'targetWalletAddress',
      'transactionHash',
    ]);
    for (const r of ok) for (const k of Object.keys(r.body)) expect(allowed.has(k), k).toBe(true);
    expect(sb.webhookDeliveries().length).toBe(received.length);
  });
});
