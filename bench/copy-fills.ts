/**
 * The database baselines the benches compare the sync with: COPY of fill rows, and COPY into a
 * staging table plus a merge (`insert ... on conflict`), in Postgres's COPY text format, and the
 * stored fills read back in that format.
 */
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import type pg from 'pg';
import copyStreams from 'pg-copy-streams';

/** exchange_fill's columns in the order of a COPY line. */
const COLUMNS = [
  'account',
  'exec_id',
  'ex_ord_id',
  'trade_id',
  'side',
  'symbol',
  'price',
  'qty',
  'fee',
  'timestamp',
  'raw',
];

/** A COPY text line of exchange_fill: tab-separated, backslash escapes; values in COLUMNS order. */
export function fillCopyLine(values: string[]): string {
  return values
    .map((v) => v.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r'))
    .join('\t');
}

/** COPY of the lines into `table`, sent 1000 lines at a time; a generator's lines are made as they are sent. */
export async function copyInto(client: pg.Client, table: string, lines: Iterable<string>): Promise<void> {
  const stream = client.query(
    copyStreams.from(`copy ${table} (${COLUMNS.map((c) => `"${c}"`).join(', ')}) from stdin`),
  );
  await pipeline(
    Readable.from(
      (function* () {
        let batch: string[] = [];
        for (const line of lines) {
          batch.push(line);
          if (batch.length === 1000) {
            yield batch.join('\n') + '\n';
            batch = [];
          }
        }
        if (batch.length) yield batch.join('\n') + '\n';
      })(),
    ),
    stream,
  );
}

/** The rows of exchange_fill as COPY text lines (COLUMNS order): what the sync stored, to copy back in. */
export async function copyOut(client: pg.Client): Promise<string[]> {
  const lines: string[] = [];
  const decoder = new StringDecoder('utf8');
  let tail = '';
  await pipeline(
    client.query(copyStreams.to(`copy exchange_fill (${COLUMNS.map((c) => `"${c}"`).join(', ')}) to stdout`)),
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        // Line by line: a million rows in one string would pass V8's string length limit.
        const parts = (tail + decoder.write(chunk)).split('\n');
        tail = parts.pop()!;
        for (const p of parts) lines.push(p);
        done();
      },
    }),
  );
  return lines;
}

/** COPY into a temporary staging table and merge into `table` (exchange_fill or a copy of it), in one transaction. */
export async function copyMerge(client: pg.Client, lines: string[], table = 'exchange_fill'): Promise<void> {
  await client.query('begin');
  await client.query('create temp table fill_stage (like exchange_fill including defaults) on commit drop');
  await copyInto(client, 'fill_stage', lines);
  await client.query(`insert into ${table} select * from fill_stage on conflict (account, exec_id) do nothing`);
  await client.query('commit');
}
