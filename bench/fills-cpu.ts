/**
 * CPU cost of one fills page on the Node side (parse as the client does, validate, map), without the database:
 * `npm run build && node dist/bench/fills-cpu.js`. Pages come from an in-process sandbox.
 */
import { startSandbox } from '../sandbox/index.js';
import { parseJsonLossless } from '../src/decimal/json.js';
import { parseJsonMarkedExact } from '../src/sources/exchange/wire.js';
import { fastFill, fillSchema, validateRecords } from '../src/sources/exchange/schemas.js';
import { toFillRow } from '../src/sources/exchange/transform.js';

const sb = await startSandbox({
  seed: 5,
  days: 5,
  exchangeOrdersPerDay: 2000,
  fillsPerOrder: 3,
  ordersPerDay: 10,
  depositsPerDay: 4,
  withdrawalsPerDay: 3,
  now: new Date(),
});
const url = sb.env.EXCHANGE_API_URL!;
const token = sb.env.EXCHANGE_API_TOKEN!;
const texts: string[] = [];
let toExec: string | null = null;
for (let i = 0; i < 20; i++) {
  const u = new URL(`${url}/fills`);
  u.searchParams.set('limit', '1000');
  if (toExec) u.searchParams.set('toExecId', toExec);
  const res = await fetch(u, { headers: { 'X-API-Token': token } });
  const text = await res.text();
  texts.push(text);
  const arr = JSON.parse(text) as Array<{ execId: string | number }>;
  if (arr.length < 1000) break;
  toExec = String(arr[arr.length - 1]!.execId);
}
await sb.close();
const rows = texts.length * 1000;
console.log(`${texts.length} pages, ${texts[0]!.length} chars in the first`);

function time(name: string, fn: (text: string) => void, reps = 5): void {
  for (const t of texts) fn(t); // warm-up
  const start = performance.now();
  for (let r = 0; r < reps; r++) for (const t of texts) fn(t);
  const ms = (performance.now() - start) / reps;
  console.log(`${name.padEnd(34)} ${(ms / texts.length).toFixed(2)} ms/page  ${Math.round((rows * 1000) / ms)} rows/s`);
}

const parsed = texts.map((t) => parseJsonMarkedExact(t) as unknown[]);
time('JSON.parse (native, lossy)', (t) => void JSON.parse(t));
time('parseJsonLossless', (t) => void parseJsonLossless(t));
time('parseJsonMarkedExact (the fills client)', (t) => void parseJsonMarkedExact(t));
let k = 0;
time(
  'validateRecords(fillSchema)',
  () => void validateRecords(fillSchema, parsed[k++ % parsed.length]!, 'execId', true),
);
time(
  'validateRecords(fillSchema, fastFill)',
  () => void validateRecords(fillSchema, parsed[k++ % parsed.length]!, 'execId', true, fastFill),
);
const validated = parsed.map((p) => validateRecords(fillSchema, p, 'execId', true));
time('toFillRow', () => void validated[k++ % validated.length]!.valid.map((v) => toFillRow(v, { raw: false })));
time(
  'parse+validate+map (zod)',
  (t) =>
    void validateRecords(fillSchema, parseJsonMarkedExact(t) as unknown[], 'execId', true).valid.map((v) =>
      toFillRow(v, { raw: false }),
    ),
);
time(
  'parse+validate+map (fastFill)',
  (t) =>
    void validateRecords(fillSchema, parseJsonMarkedExact(t) as unknown[], 'execId', true, fastFill).valid.map((v) =>
      toFillRow(v, { raw: false }),
    ),
);
// Every record of the sandbox's pages must take the fast path with the schema's exact value.
for (const p of parsed)
  for (const r of p) {
    const a = fastFill(r);
    const b = fillSchema.safeParse(r);
    if (a === null || !b.success || JSON.stringify(a) !== JSON.stringify(b.data))
      throw new Error(`fastFill differs on ${JSON.stringify(b)}`);
  }
