/** P_WEBHOOK_GAP's memory: the settled partner orders past the webhook retry window not yet judged, and the record of
 * each judgement.
 */
import { sql, type SqlBool } from 'kysely';
import type { Db } from '../db/database.js';
import { changedRow } from './changes.js';
import type { PartnerOrder } from '../../domain/index.js';
import { ORDER_COLUMNS, toPartnerOrder } from './partner-reads.js';
import { idPages, PAGE_SIZE } from '../db/keyset.js';

/** States after which the sender sends no further event for the order. */
const SETTLED_STATES = ['COMPLETED', 'FAILED'];

export interface WebhookGapPage {
  orders: PartnerOrder[];
  /** Orders of the page that have an open webhook gap break (judged again each run while it stays open). */
  openBreaks: Set<string>;
}

/**
 * The orders P_WEBHOOK_GAP judges in run `runId`: settled (COMPLETED, FAILED), their last state
 * change before `cutoff` (now - the retry window), whatever day they were created, and either
 * never judged in that state by another run, or still carrying an open break (so that a re-run
 * judges it again and finds the same break), or with a webhook event stored since `changedSince`
 * (a transaction id: docs/rules.md "What a run judges"). By order id, one keyset page at a time.
 */
export function webhookGapCandidates(
  db: Db,
  account: string,
  /** The webhook gap rule's code: its open breaks are judged again. */
  rule: string,
  cutoff: Date,
  runId: string,
  pageSize = PAGE_SIZE,
  changedSince?: string | null,
): AsyncGenerator<Array<PartnerOrder & { openBreak: boolean }>> {
  // The order's open break of the rule.
  const openBreak = sql<SqlBool>`exists (
    select 1 from break b
    where b.account = o.account and b.code = ${rule} and b.key = o.order_id and b.status = 'open')`;
  const query = db
    .selectFrom('partner_order as o')
    .leftJoin('webhook_judgement as j', (join) =>
      join.onRef('j.account', '=', 'o.account').onRef('j.order_id', '=', 'o.order_id'),
    )
    .select(ORDER_COLUMNS.map((c) => `o.${c}` as const))
    .select(openBreak.as('open_break'))
    .where('o.account', '=', account)
    .where('o.order_state', 'in', SETTLED_STATES)
    .where('o.order_state_updated_at', '<', cutoff)
    .where((eb) =>
      eb.or([
        eb('j.order_id', 'is', null),
        eb('j.order_state_updated_at_text', '<>', eb.ref('o.order_state_updated_at_text')),
        eb('j.run_id', '=', runId),
        // a webhook event stored since the last judgement (a late or retried delivery) can change the verdict
        ...(changedSince
          ? [
              sql<SqlBool>`exists (select 1 from webhook_event e
                where e.account = o.account and e.order_id = o.order_id and ${changedRow('e', changedSince)})`,
            ]
          : []),
        openBreak,
      ]),
    );
  return (async function* () {
    for await (const rows of idPages(query, 'o.order_id', (r) => r.order_id, pageSize))
      yield rows.map((r) => ({ ...toPartnerOrder(r), openBreak: Boolean(r.open_break) }));
  })();
}

/**
 * Records, in the reconcile's transaction, that run `runId` judged every settled order whose last
 * state change is before `cutoff` (the candidates' own condition): later runs judge an order again
 * only after a new state change. The first judgement of a state keeps its run.
 */
export async function recordWebhookJudgements(
  db: Db,
  account: string,
  runId: string,
  cutoff: Date,
  now: Date,
): Promise<void> {
  await db
    .insertInto('webhook_judgement')
    .columns(['account', 'order_id', 'order_state_updated_at_text', 'run_id', 'judged_at'])
    .expression((eb) =>
      eb
        .selectFrom('partner_order as o')
        .select((e) => [
          'o.account',
          'o.order_id',
          'o.order_state_updated_at_text',
          e.val(runId).as('run_id'),
          e.val(now).as('judged_at'),
        ])
        .where('o.account', '=', account)
        .where('o.order_state', 'in', SETTLED_STATES)
        .where('o.order_state_updated_at', '<', cutoff)
        .where((e) =>
          e.not(
            e.exists(
              e
                .selectFrom('webhook_judgement as j')
                .select('j.order_id')
                .whereRef('j.account', '=', 'o.account')
                .whereRef('j.order_id', '=', 'o.order_id')
                .whereRef('j.order_state_updated_at_text', '=', 'o.order_state_updated_at_text'),
            ),
          ),
        ),
    )
    .onConflict((oc) =>
      oc.columns(['account', 'order_id']).doUpdateSet((eb) => ({
        order_state_updated_at_text: eb.ref('excluded.order_state_updated_at_text'),
        run_id: eb.ref('excluded.run_id'),
        judged_at: eb.ref('excluded.judged_at'),
      })),
    )
    .execute();
}
