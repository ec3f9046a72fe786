/**
 * Scale check of the sandbox (issue 3, point 8): generate ~1,000,000 fills and ~100,000
 * partner orders, then time a full /fills scan by execId and partner paging by day.
 * Run: npx vite-node bench/sandbox-scale.ts [days]   (prints timings and heap figures)
 */
import { startSandbox } from '../sandbox/index.js';

const days = Number(process.argv[2] ?? 30);
const fillsTarget = 1_000_000;
const fillsPerOrder = 3;
const t0 = Date.now();
const sb = await startSandbox({
  seed: 1,
  days,
  ordersPerDay: Math.ceil(100_000 / (days + 0.5)),
  exchangeOrdersPerDay: Math.ceil(fillsTarget / (fillsPerOrder * 0.8) / (days + 0.5)),
  fillsPerOrder,
  depositsPerDay: 50,
  withdrawalsPerDay: 20,
  discrepancies: true,
});
const genMs = Date.now() - t0;
global.gc?.();
const mem = process.memoryUsage();
const counts = sb.data.counts();
console.log(
  `generated ${counts.fills} fills, ${counts.exchangeOrders} exchange orders, ${counts.partnerOrders} partner orders in ${genMs} ms; heapUsed ${(mem.heapUsed / 1e6).toFixed(0)} MB, rss ${(mem.rss / 1e6).toFixed(0)} MB`,
);

const tok = { 'X-API-Token': sb.env.EXCHANGE_API_TOKEN! };
let t = Date.now();
const first = await (await fetch(`${sb.env.EXCHANGE_API_URL}/accounts`, { headers: tok })).text();
console.log(`first /accounts (applies every flow): ${Date.now() - t} ms (${first.length} bytes)`);

t = Date.now();
let from = '0';
let pages = 0;
let rows = 0;
for (;;) {
  const text = await (
    await fetch(`${sb.env.EXCHANGE_API_URL}/fills?fromExecId=${from}&limit=1000`, { headers: tok })
  ).text();
  pages++;
  const ids = [...text.matchAll(/"execId":"?(\d+)/g)].map((m) => m[1]!);
  rows += ids.length;
  if (ids.length < 1000) break;
  from = String(ids.reduce((a, b) => (BigInt(a) > BigInt(b) ? a : b)));
  from = String(BigInt(from) + 1n);
}
const scanMs = Date.now() - t;
console.log(
  `/fills scan by fromExecId: ${pages} pages, ${rows} rows in ${scanMs} ms (${((rows / scanMs) * 1000).toFixed(0)} rows/s, ${(scanMs / pages).toFixed(1)} ms/page)`,
);

t = Date.now();
// Private calls carry both keys, as the real service requires.
const priv = { 'X-Public-API-Key': sb.env.PARTNER_PUBLIC_KEY!, 'X-Private-API-Key': sb.env.PARTNER_PRIVATE_KEY! };
const day = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
const next = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
let prow = 0;
let ppages = 0;
for (let offset = 0; ; offset += 50) {
  const text = await (
    await fetch(
      `${sb.env.PARTNER_API_URL}/partner-gateway/partner-api/v1/orders?from=${day}&to=${next}&limit=50&offset=${offset}`,
      { headers: priv },
    )
  ).text();
  ppages++;
  const c = (text.match(/"orderId"/g) ?? []).length;
  prow += c;
  if (c < 50) break;
}
console.log(`partner day ${day} by offset: ${ppages} pages, ${prow} orders in ${Date.now() - t} ms`);
global.gc?.();
const m2 = process.memoryUsage();
console.log(`after serving: heapUsed ${(m2.heapUsed / 1e6).toFixed(0)} MB, rss ${(m2.rss / 1e6).toFixed(0)} MB`);
await sb.close();
