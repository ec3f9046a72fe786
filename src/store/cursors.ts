import type { Db } from './database.js';

/** Reads a sync cursor; null when the stream has never been synced. */
export async function getCursor(db: Db, account: string, source: string, name: string): Promise<string | null> {
  const row = await db
    .selectFrom('sync_cursor')
    .select('value')
    .where('account', '=', account)
    .where('source', '=', source)
    .where('name', '=', name)
    .executeTakeFirst();
  return row?.value ?? null;
}

/** Moves a cursor. Call it inside the transaction that stores the rows the cursor covers. */
export async function setCursor(db: Db, account: string, source: string, name: string, value: string): Promise<void> {
  await db
    .insertInto('sync_cursor')
    .values({ account, source, name, value, updated_at: new Date() })
    .onConflict((oc) => oc.columns(['account', 'source', 'name']).doUpdateSet({ value, updated_at: new Date() }))
    .execute();
}

export async function listCursors(db: Db, account: string): Promise<Record<string, string>> {
  const rows = await db.selectFrom('sync_cursor').select(['source', 'name', 'value']).where('account', '=', account).execute();
  return Object.fromEntries(rows.map((r) => [`${r.source}.${r.name}`, r.value]));
}
