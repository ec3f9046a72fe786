/**
 * The evidence digest of a large period (docs/closing.md "The digest of a large period"): one account's month of
 * fills written with COPY into a fresh schema of BENCH_DATABASE_URL (default the local test server), then, in a child
 * process of its own (so its peak RSS is the close's, not the COPY's), what a close does with the period's records:
 * the digest of the records as they stand, then the close's transaction (its row, the records kept in close_record
 * server-side, their digest again). First at a tenth of FILLS (default 1,000,000), then at all of them: a digest that
 * streams peaks at the same memory at both sizes. The signed workbook is the run's report, measured by `npm run bench`.
 * `npm run build && npm run bench:close`.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { copyInto, fillCopyLine } from './copy-fills.js';
import { int, mib, secs } from './print.js';
import { roundSchema } from './scenario.js';
import { inTransaction, openStore } from '../src/store/db/database.js';
import { migrate } from '../src/store/db/migrate.js';
import { spanOf } from '../src/store/db/keyset.js';
import { evidenceDigest, inUtc, keepSignedRecords } from '../src/store/workflow/close-records.js';
import { insertClose } from '../src/store/workflow/closes.js';
import { sql } from 'kysely';

const baseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const FILLS = Number(process.env.FILLS ?? 1_000_000);
const ACCOUNT = 'bench';
const PERIOD = { from: '2026-10-01', to: '2026-11-01' };
const CONTEXT = { rulesetVersion: 'bench', configHash: 'bench' };

/** What the child measured at one size. */
interface Measured {
  rows: number;
  digestMs: number;
  closeMs: number;
  rssStartKiB: number;
  peakAfterDigestKiB: number;
  peakAfterCloseKiB: number;
}

/** Fills `from` (inclusive) to `to` of the account, spread over the period, as COPY lines made one at a time. */
function* fillLines(from: number, to: number): Generator<string> {
  const start = Date.parse(`${PERIOD.from}T00:00:00Z`);
  const length = Date.parse(`${PERIOD.to}T00:00:00Z`) - start;
  for (let i = from; i < to; i++) {
    const at = new Date(start + (((i * 48_271) % 2_147_483_647) % length));
    const [side, price, qty, fee] = [
      i % 2 ? 'SELL' : 'BUY',
      `${60_000 + (i % 9_973)}.${i % 100}`,
      `0.${i % 99_991}`,
      '0.42',
    ];
    const raw = { exOrdId: Math.floor(i / 3), tradeId: i * 7, execId: i, side, symbol: 'BTC-USD', price, qty, fee };
    const values = [String(i), String(Math.floor(i / 3)), String(i * 7), side, 'BTC-USD', price, qty, fee];
    yield fillCopyLine([ACCOUNT, ...values, at.toISOString(), JSON.stringify({ ...raw, timestamp: at.getTime() })]);
  }
}

/** The child: the digest and the close's transaction over what the schema holds, as one line of JSON. */
async function measure(schema: string): Promise<Measured> {
  const store = await openStore({ url: baseUrl, schema, poolSize: 2 });
  const span = spanOf(PERIOD);
  const rssStartKiB = Math.round(process.memoryUsage().rss / 1024);
  try {
    let t = performance.now();
    const live = await inTransaction(store.db, async (trx) => {
      await inUtc(trx);
      return evidenceDigest(trx, { account: ACCOUNT, span }, CONTEXT);
    });
    const digestMs = performance.now() - t;
    const peakAfterDigestKiB = process.resourceUsage().maxRSS;
    t = performance.now();
    await inTransaction(store.db, async (trx) => {
      await inUtc(trx);
      await closeRow(trx, `bench-${live.records}`, live);
      await keepSignedRecords(trx, `bench-${live.records}`, ACCOUNT, span);
      const kept = await evidenceDigest(trx, { closeId: `bench-${live.records}` }, CONTEXT);
      if (kept.digest !== live.digest) throw new Error('the kept records digest differently');
    });
    const closeMs = performance.now() - t;
    const peakAfterCloseKiB = process.resourceUsage().maxRSS;
    return { rows: live.records, digestMs, closeMs, rssStartKiB, peakAfterDigestKiB, peakAfterCloseKiB };
  } finally {
    await store.close();
  }
}

/** The close's row (and the reconcile run it names), as the close's transaction writes it. */
async function closeRow(trx: Parameters<typeof insertClose>[0], id: string, live: { digest: string; records: number }) {
  await sql`insert into run (id, account, command, status) values ('bench-run', ${ACCOUNT}, 'reconcile', 'succeeded')
    on conflict do nothing`.execute(trx);
  await insertClose(
    trx,
    {
      ...{ id, account: ACCOUNT, period: PERIOD, by: 'bench', at: new Date(), note: null, runId: 'bench-run' },
      ...{ digest: live.digest, records: live.records, ...CONTEXT, workbook: '-', workbookSha256: '-' },
      ...{ state: 'signed', reopenedBy: null, reopenedAt: null, reopenReason: null },
    },
    [],
  );
}

function print(m: Measured): void {
  const rate = (ms: number) => `${int((m.rows * 1000) / ms)} rows/s`;
  process.stdout.write(
    `${int(m.rows)} fills: digest ${secs(m.digestMs)} (${rate(m.digestMs)}), peak RSS ${mib(m.peakAfterDigestKiB)}; ` +
      `close's transaction ${secs(m.closeMs)} (${rate(m.closeMs)}), peak RSS ${mib(m.peakAfterCloseKiB)} ` +
      `(RSS at start ${mib(m.rssStartKiB)})\n`,
  );
}

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  const schema = await roundSchema(admin, baseUrl);
  const name = new URL(schema.url).searchParams.get('options')!.replace(/^-c search_path=/, '');
  try {
    const store = await openStore({ url: baseUrl, schema: name });
    await migrate(store);
    await store.close();
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    let written = 0;
    for (const size of [Math.round(FILLS / 10), FILLS]) {
      const t = performance.now();
      await copyInto(client, 'exchange_fill', fillLines(written, size));
      await client.query('analyze exchange_fill');
      process.stdout.write(`wrote ${int(size - written)} fills with COPY in ${secs(performance.now() - t)}\n`);
      written = size;
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url)], {
        env: { ...process.env, CLOSE_DIGEST_SCHEMA: name },
        encoding: 'utf8',
      });
      print(JSON.parse(out) as Measured);
    }
    await client.end();
  } finally {
    await schema.drop();
    await admin.end();
  }
}

if (process.env.CLOSE_DIGEST_SCHEMA)
  process.stdout.write(`${JSON.stringify(await measure(process.env.CLOSE_DIGEST_SCHEMA))}\n`);
else await main();
