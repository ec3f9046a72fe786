import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { binaryCopyTexts } from '../../src/store/report/copy-binary.js';
import { describeEachStore } from '../helpers/db.js';

/** A COPY of many rows: more than one chunk of the stream, so a reader can stop midway. */
const MANY = `copy (select repeat('x', 1000) || n::text from generate_series(1, 20000) n) to stdout (format binary)`;

describeEachStore('the store COPY stream', (t) => {
  it('exists on a server only (the embedded database pages with queries)', () => {
    expect(typeof t.store.copyOut).toBe(t.kind === 'postgres' ? 'function' : 'undefined');
  });

  it('streams every row, and a reader that stops midway leaves no COPY running and the pool usable', async () => {
    if (!t.store.copyOut) return;
    let rows = 0;
    for await (const page of binaryCopyTexts(t.store.copyOut(MANY))) rows += page.rows;
    expect(rows).toBe(20_000);

    for await (const _chunk of t.store.copyOut(MANY)) break;
    // The abandoned session is closed, not handed back mid-COPY: the pool's sessions all answer.
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => sql<{ n: number }>`select ${i}::int as n`.execute(t.store.db)),
    );
    expect(answers.map((a) => a.rows[0]!.n)).toEqual([0, 1, 2, 3, 4, 5]);
    await expect
      .poll(
        async () =>
          (
            await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
              where query like 'copy (select repeat%' and pid <> pg_backend_pid() and state = 'active'`.execute(
              t.store.db,
            )
          ).rows[0]!.n,
      )
      .toBe(0);
  });

  it('fails with the server error of a bad query, and the pool stays usable', async () => {
    if (!t.store.copyOut) return;
    const read = async () => {
      for await (const _chunk of t.store.copyOut!('copy (select no_such_column from pg_class) to stdout')) void _chunk;
    };
    await expect(read()).rejects.toThrow(/no_such_column/);
    expect((await sql<{ n: number }>`select 1::int as n`.execute(t.store.db)).rows[0]!.n).toBe(1);
  });
});
