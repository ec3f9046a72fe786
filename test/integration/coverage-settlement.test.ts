import { expect, it } from 'vitest';
import { describeEachStore } from '../helpers/db.js';
import { recordPage } from '../../src/store/sync/exchange-records.js';
import { saveCursorCheck, settleCoverage, unsettledCoverage } from '../../src/store/sync/cursors.js';
import { createRun } from '../../src/store/runs/runs.js';
import { recordWebhookJudgements, webhookGapCandidates } from '../../src/store/recon/webhook-judgements.js';

/** The store's side of S_COVERAGE and P_WEBHOOK_GAP: what a later scan may settle, what a run judged. */
describeEachStore('coverage settlement and webhook judgements', (ctx) => {
  const db = () => ctx.store.db;
  const page = (runId: string, settled: boolean) => ({
    account: 'default',
    runId,
    coverageStream: 'deposits',
    coverage: new Map([
      [
        '2026-11-10',
        {
          pages: 1,
          rows: 2,
          quarantined: 0,
          settled,
          ...(settled ? {} : { detail: { reason: 'full page within one millisecond' } }),
        },
      ],
    ]),
    cursors: [],
  });
  const unsettled = async () =>
    (await unsettledCoverage(db(), 'default')).unsettled.map((r) => `${r.source}:${r.stream}:${r.day}`).sort();

  it('a rescan from the cursor never settles a day another run left unsettled; a backfill of the whole day does', async () => {
    await recordPage(db(), page('run-1', false));
    await recordPage(db(), page('run-1', true));
    expect(await unsettled()).toEqual(['exchange:deposits:2026-11-10']);
    // The next run re-reads only the last minutes of the day: its settled page is no settlement of the day.
    await recordPage(db(), page('run-2', true));
    expect(await unsettled()).toEqual(['exchange:deposits:2026-11-10']);
    // Its page adds to the day's pages (every request made for the day, issue 17).
    const row = await db()
      .selectFrom('sync_coverage')
      .select(['pages', 'run_id'])
      .where('stream', '=', 'deposits')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ pages: 3, run_id: 'run-2' });
    // A backfill of other days leaves it; one of the day settles it.
    await settleCoverage(db(), 'default', 'run-3', 'exchange', 'deposits', { from: '2026-11-11', to: '2026-11-12' });
    expect(await unsettled()).toEqual(['exchange:deposits:2026-11-10']);
    await settleCoverage(db(), 'default', 'run-3', 'exchange', 'deposits', { from: '2026-11-10', to: '2026-11-11' });
    expect(await unsettled()).toEqual([]);
  });

  it('a cursor check row replaces the earlier one, whatever its day', async () => {
    await saveCursorCheck(
      db(),
      'default',
      'run-1',
      { source: 'exchange', name: 'fills.execId', settled: false, detail: { reason: 'stuck' } },
      new Date('2026-11-10T03:00:00Z'),
    );
    expect(await unsettled()).toEqual(['exchange:cursor:fills.execId:2026-11-10']);
    await saveCursorCheck(
      db(),
      'default',
      'run-2',
      { source: 'exchange', name: 'fills.execId', settled: true, detail: {} },
      new Date('2026-11-11T03:00:00Z'),
    );
    expect(await unsettled()).toEqual([]);
    expect(
      await db().selectFrom('sync_coverage').select('day').where('stream', '=', 'cursor:fills.execId').execute(),
    ).toHaveLength(1);
  });

  it('webhook gap candidates: settled orders past the cutoff, each state change judged once, again while its break is open', async () => {
    const order = (id: string, state: string, at: string) => ({
      order_id: id,
      order_type: 'BUY',
      created_at: '2026-11-01T00:00:00Z',
      created_at_text: '2026-11-01T00:00:00Z',
      order_state: state,
      order_state_updated_at: at,
      order_state_updated_at_text: at,
      input_currency: 'EUR',
      input_amount: '100',
      output_currency: 'BTC',
      raw: '{}',
    });
    await db()
      .insertInto('partner_order')
      .values([
        order('o-old', 'COMPLETED', '2026-11-05T00:00:00Z'),
        order('o-failed', 'FAILED', '2026-11-05T01:00:00Z'),
        order('o-young', 'COMPLETED', '2026-11-09T00:00:00Z'),
        order('o-open', 'PENDING', '2026-11-01T00:00:00Z'),
      ])
      .execute();
    const cutoff = new Date('2026-11-07T00:00:00Z');
    const ids = async (runId: string) => {
      const out: string[] = [];
      for await (const page of webhookGapCandidates(db(), 'default', 'P_WEBHOOK_GAP', cutoff, runId, 1))
        out.push(...page.map((o) => `${o.orderId}${o.openBreak ? '*' : ''}`));
      return out;
    };
    expect(await ids('run-1')).toEqual(['o-failed', 'o-old']);
    await recordWebhookJudgements(db(), 'default', 'run-1', cutoff, new Date('2026-11-08T00:00:00Z'));
    // The same run again (a retried reconcile) judges the same orders; a later run none.
    expect(await ids('run-1')).toEqual(['o-failed', 'o-old']);
    expect(await ids('run-2')).toEqual([]);
    // An open break's order is judged again by every run; a new state change is judged anew.
    await createRun(db(), {
      account: 'default',
      command: 'reconcile',
      id: 'run-1',
      startedAt: new Date('2026-11-08T00:00:00Z'),
    });
    await db()
      .insertInto('break')
      .values({
        code: 'P_WEBHOOK_GAP',
        key: 'o-old',
        entity: 'partnerOrder',
        unit: 'text',
        severity: 'low',
        status: 'open',
        first_seen_run: 'run-1',
        first_seen_at: '2026-11-08T00:00:00Z',
        last_seen_run: 'run-1',
        last_seen_at: '2026-11-08T00:00:00Z',
      })
      .execute();
    await db()
      .updateTable('partner_order')
      .set({ order_state_updated_at: '2026-11-05T02:00:00Z', order_state_updated_at_text: '2026-11-05T02:00:00Z' })
      .where('order_id', '=', 'o-failed')
      .execute();
    expect(await ids('run-2')).toEqual(['o-failed', 'o-old*']);
    await recordWebhookJudgements(db(), 'default', 'run-2', cutoff, new Date('2026-11-09T00:00:00Z'));
    const judged = await db()
      .selectFrom('webhook_judgement')
      .select(['order_id', 'run_id', 'order_state_updated_at_text'])
      .orderBy('order_id')
      .execute();
    expect(judged).toEqual([
      { order_id: 'o-failed', run_id: 'run-2', order_state_updated_at_text: '2026-11-05T02:00:00Z' },
      { order_id: 'o-old', run_id: 'run-1', order_state_updated_at_text: '2026-11-05T00:00:00Z' },
    ]);
  });
});
