// The webhook load's sender, run as a child process of its own (webhook-load.test.ts): on the
// receiver's event loop it would take the CPU time it measures, and on a 2-core machine the
// receiver, the sender and Postgres each need a core's share.
//
// node load-generator.mjs <receiverUrl> <bodiesFile> <rate> <seconds> <maxInFlight>
// bodiesFile holds one body per line (JSON text has no raw newline), sent in file order, open
// loop: every few milliseconds the sends due by then go out, whatever the answers so far, up to
// maxInFlight outstanding (a sender's connection limit). Prints one JSON line: how many were sent,
// the seconds (all answered; the last send), statuses, and acknowledgement times (p50, p99, max, in ms).
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';

const [url, file, rateText, secondsText, inFlightText] = process.argv.slice(2);
const rate = Number(rateText);
const seconds = Number(secondsText);
const maxInFlight = Number(inFlightText);
if (!url || !file || !(rate > 0) || !(seconds > 0) || !(maxInFlight > 0)) {
  process.stderr.write('usage: load-generator.mjs <receiverUrl> <bodiesFile> <rate> <seconds> <maxInFlight>\n');
  process.exit(2);
}
const bodies = readFileSync(file, 'utf8')
  .split('\n')
  .filter((line) => line.length > 0)
  .map((line) => Buffer.from(line, 'utf8'));
const total = Math.min(bodies.length, Math.floor(rate * seconds));
const pool = new Pool(url, { connections: Math.min(maxInFlight, 128), pipelining: 1, keepAliveTimeout: 30_000 });
const latencies = new Float64Array(total);
const statuses = {};
let answered = 0;
let next = 0;
let inFlight = 0;
// Seconds behind schedule at the worst tick: how far the sender itself fell behind.
let worstLagMs = 0;
// When the last send went out: with at most maxInFlight unanswered, a receiver slower than the
// rate holds the sends back, so sent / sendSeconds is the rate the receiver kept up with.
let sendSeconds = 0;

async function send(i) {
  const t0 = performance.now();
  let status;
  try {
    const res = await pool.request({
      path: '/webhooks/orders',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: bodies[i],
    });
    await res.body.text();
    status = res.statusCode;
  } catch {
    status = 0;
  }
  latencies[answered++] = performance.now() - t0;
  statuses[status] = (statuses[status] ?? 0) + 1;
}

const started = performance.now();
await new Promise((resolve) => {
  let stopped = false;
  const done = () => {
    if (stopped && inFlight === 0) resolve();
  };
  const tick = () => {
    const elapsed = (performance.now() - started) / 1000;
    const due = Math.min(total, Math.floor(elapsed * rate));
    worstLagMs = Math.max(worstLagMs, ((due - next) / rate) * 1000);
    while (next < due && inFlight < maxInFlight) {
      inFlight++;
      send(next++).finally(() => {
        inFlight--;
        done();
      });
    }
    // All sent, or a receiver so slow that three times the planned span passed: stop sending.
    if (next >= total || elapsed >= seconds * 3) {
      if (next < total)
        process.stderr.write(`sender stopped after ${next} of ${total}: the receiver did not keep up\n`);
      stopped = true;
      sendSeconds = elapsed;
      done();
    } else setTimeout(tick, 2);
  };
  tick();
});
const elapsed = (performance.now() - started) / 1000;
await pool.close();
const sorted = Array.from(latencies.subarray(0, answered)).sort((a, b) => a - b);
const pct = (p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : 0);
process.stdout.write(
  `${JSON.stringify({ sent: answered, seconds: elapsed, sendSeconds, statuses, p50Ms: pct(50), p99Ms: pct(99), maxMs: sorted.at(-1) ?? 0, worstLagMs })}\n`,
);
