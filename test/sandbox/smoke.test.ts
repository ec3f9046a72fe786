import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../helpers/sandbox.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({
    seed: 7,
    days: 6,
    ordersPerDay: 20,
    exchangeOrdersPerDay: 20,
    discrepancies: true,
    now: new Date('2026-11-21T12:00:00Z'),
  });
});
afterAll(async () => sb?.close());

describe('sandbox smoke', () => {
  it('serves both APIs', async () => {
    const p = await fetch(`${sb.env.PARTNER_API_URL}/partner-gateway/partner-api/v1/orders?limit=5`, {
      headers: { 'X-Public-API-Key': sb.env.PARTNER_PUBLIC_KEY!, 'X-Private-API-Key': sb.env.PARTNER_PRIVATE_KEY! },
    });
    expect(p.status).toBe(200);
    const orders = (await p.json()) as unknown[];
    expect(orders.length).toBe(5);
    const f = await fetch(`${sb.env.EXCHANGE_API_URL}/fills?limit=3`, {
      headers: { 'X-API-Token': sb.env.EXCHANGE_API_TOKEN! },
    });
    expect(f.status).toBe(200);
    console.log(await f.text());
    const a = await fetch(`${sb.env.EXCHANGE_API_URL}/accounts`, {
      headers: { 'X-API-Token': sb.env.EXCHANGE_API_TOKEN! },
    });
    console.log(await a.text());
    console.log(JSON.stringify(sb.expectedBreaks()));
    console.log(sb.data.fills().length, sb.data.partnerOrders().length, sb.data.deposits().length);
  });
});
