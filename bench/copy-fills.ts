/**
 * The database baselines the benches compare the sync with: COPY of fill rows, and COPY into a
 * staging table plus a merge (`insert ... on conflict`), in Postgres's COPY text format.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import copyStreams from 'pg-copy-streams';

/** exchange_fill's columns in the order of a COPY line. */
const COLUMNS = ['account', 'exec_id', 'ex_ord_id', 'trade_id', 'side', 'symbol', 'price', 'qty', 'fee', 'timestamp', 'raw'];

/** A COPY text line of exchange_fill: tab-separated, backslash escapes; values in COLUMNS order. */
export function fillCopyLine(values: string[]): string {
  return values.map((v) => v.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r')).join('\t');
}

/** COPY of the lines into `table`, sent 1000 lines at a time. */
export async function copyInto(client: pg.Client, table: string, lines: string[]): Promise<void> {
  const stream = client.query(copyStreams.from(`copy ${table} (${COLUMNS.map((c) => `"${c}"`).join(', ')}) from stdin`));
  await pipeline(
    Readable.from(
      (function* () {
        for (let i = 0; i < lines.length; i += 1000) yield lines.slice(i, i + 1000).join('\n') + '\n';
      })(),
    ),
    stream,
  );
}

/** COPY into a temporary staging table and merge into exchange_fill, in one transaction. */
export async function copyMerge(client: pg.Client, lines: string[]): Promise<void> {
  await client.query('begin');
  await client.query('create temp table fill_stage (like exchange_fill including defaults) on commit drop');
  await copyInto(client, 'fill_stage', lines);
  await client.query('insert into exchange_fill select * from fill_stage on conflict (account, exec_id) do nothing');
  await client.query('commit');
}
