import { describe, expect, it } from 'vitest';
import { applyLifecycle, type ResolvePolicy } from '../../src/rules/lifecycle.js';
import { checkBalances, checkPartnerBatch, markNotChecked } from '../../src/rules/engine.js';
import { RuleTally } from '../../src/rules/tally.js';
import type { Break, DetectedBreak } from '../../src/domain/index.js';
import { d, makeEngineConfig, makeOrder, makeReference, makeSnapshot } from './recon-factories.js';

const t0 = new Date('2026-11-20T00:00:00Z');
const t1 = new Date('2026-11-21T00:00:00Z');
const detected = (code: string, key: string, actual = '1'): DetectedBreak => ({
  code,
  key,
  entity: 'partnerOrder',
  severity: 'medium',
  currency: 'USD',
  unit: 'amount',
  day: null,
  expected: '0',
  actual,
  difference: actual,
  message: 'm',
});
const stored = (code: string, key: string, status: 'open' | 'resolved', over: Partial<Break> = {}): Break => ({
  code,
  key,
  entity: 'partnerOrder',
  severity: 'medium',
  currency: 'USD',
  unit: 'amount',
  day: null,
  expected: '0',
  actual: '1',
  difference: '1',
  message: 'm',
  detail: null,
  status,
  firstSeenRun: 'r0',
  firstSeenAt: t0,
  lastSeenRun: 'r0',
  lastSeenAt: t0,
  resolvedRun: status === 'resolved' ? 'r0' : null,
  resolvedAt: status === 'resolved' ? t0 : null,
  reopenedCount: 0,
  ...over,
});
const all: ResolvePolicy = { checked: () => true, skipped: () => false, inScope: () => true, judged: () => true };

describe('break lifecycle', () => {
  it('opens, keeps first-seen when seen again, resolves, reopens', () => {
    const r1 = applyLifecycle({
      runId: 'r1',
      now: t1,
      previous: [],
      detected: [detected('P_FEE_USD', 'o1')],
      policy: all,
    });
    expect(r1.counts).toMatchObject({ opened: 1 });
    const seen = applyLifecycle({
      runId: 'r2',
      now: t1,
      previous: [stored('P_FEE_USD', 'o1', 'open')],
      detected: [detected('P_FEE_USD', 'o1', '2')],
      policy: all,
    });
    expect(seen.upserts[0]).toMatchObject({ firstSeenRun: 'r0', lastSeenRun: 'r2', actual: '2', status: 'open' });
    expect(seen.events[0]).toMatchObject({ event: 'seen' });
    const resolved = applyLifecycle({
      runId: 'r3',
      now: t1,
      previous: [stored('P_FEE_USD', 'o1', 'open')],
      detected: [],
      policy: all,
    });
    expect(resolved.upserts[0]).toMatchObject({ status: 'resolved', resolvedRun: 'r3', firstSeenRun: 'r0' });
    const reopened = applyLifecycle({
      runId: 'r4',
      now: t1,
      previous: [stored('P_FEE_USD', 'o1', 'resolved', { reopenedCount: 1 })],
      detected: [detected('P_FEE_USD', 'o1')],
      policy: all,
    });
    expect(reopened.upserts[0]).toMatchObject({
      status: 'open',
      reopenedCount: 2,
      firstSeenRun: 'r0',
      resolvedRun: null,
    });
    expect(reopened.events[0]).toMatchObject({ event: 'reopened' });
  });

  it('leaves breaks of a not-checked rule, of skipped entities and of out-of-scope entities untouched', () => {
    const previous = [
      stored('P_PARTNER_FEE_RATE', 'o1', 'open'),
      stored('E_FILL_AVGPX', '55', 'open'),
      stored('P_FEE_USD', 'old', 'open'),
    ];
    const policy: ResolvePolicy = {
      checked: (c) => c !== 'P_PARTNER_FEE_RATE',
      skipped: (c, k) => c === 'E_FILL_AVGPX' && k === '55',
      inScope: (_c, k) => k !== 'old',
      judged: () => true,
    };
    expect(applyLifecycle({ runId: 'r1', now: t1, previous, detected: [], policy }).upserts).toEqual([]);
  });

  it('scope-independent rules resolve on any run that checked them', () => {
    const policy: ResolvePolicy = {
      checked: () => true,
      skipped: () => false,
      inScope: () => false,
      judged: () => false,
    };
    const r = applyLifecycle({
      runId: 'r1',
      now: t1,
      previous: [
        stored('E_BALANCE_ROLL', 'ETH', 'open'),
        stored('P_STALE', 'o9', 'open'),
        stored('P_STATE', 'o9', 'open'),
      ],
      detected: [],
      policy,
    });
    expect(r.upserts.map((b) => b.code).sort()).toEqual(['E_BALANCE_ROLL', 'P_STALE']);
  });
});

describe('engine tally', () => {
  it('reports every rule, with "not checked" reasons when inputs are missing', () => {
    const tally = new RuleTally();
    const cfg = makeEngineConfig();
    const ref = makeReference({
      currencies: null,
      symbols: null,
      fees: null,
      whitelist: null,
      balanceSnapshotCount: 1,
    });
    markNotChecked(tally, cfg, ref);
    checkPartnerBatch(tally, cfg, ref, {
      orders: [makeOrder(), makeOrder({ orderId: 'o-2', processingFeeUsd: d('3') })],
      depositsByTx: new Map(),
      ourAddresses: new Set(['0xOURS']),
    });
    const results = Object.fromEntries(tally.results().map((r) => [r.code, r]));
    expect(results.P_PARTNER_FEE_RATE).toMatchObject({
      status: 'not_checked',
      reason: 'partner.feeRate not configured',
    });
    expect(results.P_WEBHOOK_GAP).toMatchObject({ status: 'not_checked', reason: 'webhooks not configured' });
    expect(results.P_PRECISION).toMatchObject({ status: 'not_checked', reason: 'no partner currencies snapshot' });
    expect(results.E_BALANCE_ROLL).toMatchObject({
      status: 'not_checked',
      reason: expect.stringContaining('only one balance snapshot'),
    });
    expect(results.E_FEE_RATE!.status).toBe('not_checked');
    expect(results.E_WITHDRAWAL_BENEFICIARY).toMatchObject({
      status: 'not_checked',
      reason: 'no exchange whitelist snapshot',
    });
    expect(results.E_FILL_AVGPX).toMatchObject({ status: 'not_checked', reason: 'no exchange symbols snapshot' });
    expect(results.E_SYMBOL_RULES).toMatchObject({ status: 'not_checked', reason: 'no exchange symbols snapshot' });
    expect(results.E_BALANCE_SANITY!.status).toBe('passed'); // one snapshot is enough for sanity
    // Rules whose inputs are always there never say "not checked".
    for (const code of [
      'P_FEE_USD',
      'P_AMOUNT_USD',
      'P_FEE_BOUNDS',
      'P_STATE',
      'P_STALE',
      'X_DEPOSIT_MISSING',
      'X_DEPOSIT_AMOUNT',
      'E_FILL_QTY',
      'E_FILL_ORPHAN',
      'E_STALE',
      'S_COVERAGE',
      'S_QUARANTINE',
    ])
      expect(results[code]!.status).not.toBe('not_checked');
    expect(results.P_FEE_USD).toMatchObject({ status: 'breaks', checked: 2, breaks: 1 });
    expect(results.X_DEPOSIT_MISSING).toMatchObject({ status: 'breaks', checked: 2, breaks: 2 });
    expect(results.P_STATE).toMatchObject({ status: 'passed', checked: 2, breaks: 0 });
    expect(tally.results()).toHaveLength(23);
  });

  it('balance roll-forward via the engine', () => {
    const tally = new RuleTally();
    const s1 = makeSnapshot('1', '2026-11-01T00:00:00Z', { ETH: '1' });
    const s2 = makeSnapshot('2', '2026-11-02T00:00:00Z', { ETH: '1.5' });
    checkBalances(tally, makeEngineConfig(), makeReference(), [{ opening: s1, closing: s2, flows: [] }], s2);
    const r = tally.results().find((x) => x.code === 'E_BALANCE_ROLL');
    expect(r).toMatchObject({ status: 'breaks', checked: 1, breaks: 1 });
  });

  it('no balance snapshot at all, and a configured fee rate without a currencies snapshot', () => {
    const tally = new RuleTally();
    markNotChecked(
      tally,
      makeEngineConfig({ partnerFeeRate: d('0.01'), webhooksEnabled: true }),
      makeReference({ currencies: null, balanceSnapshotCount: 0 }),
    );
    const results = Object.fromEntries(tally.results().map((r) => [r.code, r]));
    expect(results.E_BALANCE_ROLL!.reason).toMatch(/^no balance snapshot/);
    expect(results.E_BALANCE_SANITY).toMatchObject({ status: 'not_checked', reason: 'no balance snapshot' });
    expect(results.P_PARTNER_FEE_RATE).toMatchObject({
      status: 'not_checked',
      reason: 'no partner currencies snapshot',
    });
    expect(results.P_WEBHOOK_GAP!.status).toBe('passed');
  });

  it('counts entities a rule could not judge as skipped', () => {
    const tally = new RuleTally();
    const cfg = makeEngineConfig({ partnerFeeRate: d('0.01') });
    const ref = makeReference();
    markNotChecked(tally, cfg, ref);
    checkPartnerBatch(tally, cfg, ref, {
      orders: [makeOrder(), makeOrder({ orderId: 'o-gbp', inputCurrency: 'GBP' })],
      depositsByTx: new Map(),
      ourAddresses: new Set(),
    });
    expect(tally.results().find((r) => r.code === 'P_PARTNER_FEE_RATE')).toMatchObject({
      status: 'passed',
      checked: 1,
      skipped: 1,
    });
    expect(tally.skippedKeys('P_PARTNER_FEE_RATE').has('o-gbp')).toBe(true);
  });
});
