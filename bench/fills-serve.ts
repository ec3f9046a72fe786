/**
 * Sandbox CPU per /fills page, server side only: `npm run build && node dist/bench/fills-serve.js`.
 * Serves from a child process (bench/sandbox-child.ts), requests every 1000-row page by
 * fromExecId, and reads the child's CPU time from /proc; prints a hash of all pages, which must
 * not change when the formatter does.
 */
import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const opts = {
  seed: 5,
  days: 5,
  exchangeOrdersPerDay: Number(process.env.PER_DAY ?? 10_000),
  fillsPerOrder: 3,
  ordersPerDay: 10,
  depositsPerDay: 4,
  withdrawalsPerDay: 3,
  now: '2026-01-10T12:00:00.000Z',
  faults: 'none',
};
const child = fork(fileURLToPath(new URL('./sandbox-child.js', import.meta.url)), [JSON.stringify(opts)]);
const env = await new Promise<Record<string, string>>((resolve) =>
  child.once('message', (m) => resolve((m as { env: Record<string, string> }).env)),
);
const url = env.EXCHANGE_API_URL!;
const headers = { 'X-API-Token': env.EXCHANGE_API_TOKEN! };
const ticks = (): number => {
  const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(f[11]) + Number(f[12]); // utime + stime, in 1/100 s
};
async function pass(): Promise<{ pages: number; ms: number; hash: string }> {
  const h = createHash('sha256');
  let from = '0';
  let pages = 0;
  const t0 = ticks();
  for (;;) {
    const res = await fetch(`${url}/fills?limit=1000&fromExecId=${from}`, { headers });
    const text = await res.text();
    h.update(text);
    pages++;
    const arr = JSON.parse(text) as Array<{ execId: string | number }>;
    if (arr.length < 1000) break;
    from = String(Math.max(...arr.map((x) => Number(x.execId))) + 1);
  }
  return { pages, ms: (ticks() - t0) * 10, hash: h.digest('hex') };
}
await pass();
for (let r = 0; r < Number(process.env.PASSES ?? 5); r++) {
  const p = await pass();
  console.log(`${p.pages} pages, sandbox ${(p.ms / p.pages).toFixed(2)} ms CPU/page, hash ${p.hash.slice(0, 16)}`);
}
child.disconnect();
