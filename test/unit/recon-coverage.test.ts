import { describe, expect, it } from 'vitest';
import type { StreamReach } from '../../src/rules/sync-rules.js';
import { checkWebhookGaps, finishWebhookGaps } from '../../src/rules/engine.js';
import { RuleTally } from '../../src/rules/tally.js';
import { wholeDays } from '../../src/sources/exchange/sync-windows.js';
import { makeEngineConfig, makeOrder, makeReference, unsyncedDayBreaks } from './recon-factories.js';

const NOW = new Date('2026-11-12T03:00:00Z');
const days = ['2026-11-10', '2026-11-11', '2026-11-12', '2026-11-13'];
const at = (iso: string) => Date.parse(iso);

describe('S_COVERAGE for days no sync covered', () => {
  it('a day listing needs a row of the day; a cursor must have passed the day (or entered today)', () => {
    const streams: StreamReach[] = [
      { source: 'partner', stream: 'orders', kind: 'days', days: new Set(['2026-11-11', '2026-11-12']) },
      { source: 'exchange', stream: 'deposits', kind: 'cursor', syncedTo: at('2026-11-12T00:00:00Z') },
      { source: 'exchange', stream: 'fills', kind: 'cursor', syncedTo: null },
    ];
    const { breaks, checked } = unsyncedDayBreaks(days, NOW, streams);
    // 2026-11-13 has not begun: not asked. Deposits read up to midnight cover the 11th, not today.
    expect(checked).toBe(9);
    expect(breaks.map((b) => b.key).sort()).toEqual([
      'exchange:deposits:2026-11-12',
      'exchange:fills:2026-11-10',
      'exchange:fills:2026-11-11',
      'exchange:fills:2026-11-12',
      'partner:orders:2026-11-10',
    ]);
    expect(breaks.every((b) => b.code === 'S_COVERAGE' && b.severity === 'high' && b.expected === 'synced')).toBe(true);
  });

  it('a cursor one millisecond short of the day end leaves the day open; at the end it is covered', () => {
    const reach = (ms: number): StreamReach[] => [
      { source: 'exchange', stream: 'trades', kind: 'cursor', syncedTo: ms },
    ];
    expect(unsyncedDayBreaks(['2026-11-11'], NOW, reach(at('2026-11-12T00:00:00Z') - 1)).breaks).toHaveLength(1);
    expect(unsyncedDayBreaks(['2026-11-11'], NOW, reach(at('2026-11-12T00:00:00Z'))).breaks).toHaveLength(0);
  });

  it('whole days inside a backfill range', () => {
    expect(wholeDays(at('2026-11-10T00:00:00Z'), at('2026-11-12T00:00:00Z'))).toEqual({
      from: '2026-11-10',
      to: '2026-11-12',
    });
    expect(wholeDays(at('2026-11-10T00:00:00.001Z'), at('2026-11-12T05:00:00Z'))).toEqual({
      from: '2026-11-11',
      to: '2026-11-12',
    });
    expect(wholeDays(at('2026-11-10T01:00:00Z'), at('2026-11-10T23:00:00Z'))).toBeNull();
  });
});

describe('P_WEBHOOK_GAP judged once past the retry window', () => {
  const cfg = makeEngineConfig({ now: NOW, webhooksEnabled: true });
  const old = new Date(NOW.getTime() - 4 * 86_400_000);

  it('judges the orders past the window and returns their ids; a younger one is not judged', () => {
    const tally = new RuleTally();
    const judged = checkWebhookGaps(
      tally,
      cfg,
      makeReference(),
      [
        makeOrder({ orderId: 'a', orderStateUpdatedAt: old }),
        makeOrder({ orderId: 'b', orderStateUpdatedAt: new Date(NOW.getTime() - 86_400_000) }),
      ],
      new Map(),
    );
    expect(judged).toEqual(['a']);
    finishWebhookGaps(tally, cfg, makeReference(), judged.length);
    expect(tally.results().find((r) => r.code === 'P_WEBHOOK_GAP')).toMatchObject({
      status: 'breaks',
      checked: 1,
      breaks: 1,
    });
  });

  it('says not checked, never passed, when it judged nothing', () => {
    const tally = new RuleTally();
    finishWebhookGaps(tally, cfg, makeReference(), checkWebhookGaps(tally, cfg, makeReference(), [], new Map()).length);
    const r = tally.results().find((x) => x.code === 'P_WEBHOOK_GAP')!;
    expect(r.status).toBe('not_checked');
    expect(r.reason).toMatch(/retry window/);
  });
});
