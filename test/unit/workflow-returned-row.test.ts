/** What becomes of a returned workbook's row against its break now (src/workflow/returned-row.ts). */
import { describe, expect, it } from 'vitest';
import { makeStoredBreak } from './recon-factories.js';
import { NO_WORKFLOW, type Break, type ReturnedRow } from '../../src/domain/index.js';
import { actionDecision, filledIn, rowOutcome } from '../../src/workflow/index.js';

const fee = (over: Partial<Break> = {}): Break => makeStoredBreak({ actual: '1.75', difference: '0.75', ...over });
const row = (cells: Partial<ReturnedRow>): ReturnedRow => ({
  row: 4,
  code: 'P_FEE_USD',
  key: 'o-1',
  amounts: '1.00 | 1.75 | 0.75 | EUR',
  owner: null,
  explanation: null,
  explained: null,
  ...cells,
});
const explained = { ...NO_WORKFLOW, status: 'explained' as const, owner: 'alice', explanation: 'agreed' };

describe('a returned row against its break', () => {
  it('applies what changes state, on an open break whose amounts are those of the workbook', () => {
    const b = fee();
    expect(rowOutcome(row({ owner: 'bob', explanation: 'agreed', explained: 'yes' }), b, NO_WORKFLOW)).toEqual({
      apply: [
        { kind: 'assigned', owner: 'bob' },
        { kind: 'acknowledged', reason: 'agreed' },
      ],
      break: b,
    });
    expect(rowOutcome(row({ owner: 'alice', explanation: 'agreed', explained: 'yes' }), b, explained)).toEqual({
      unchanged: true,
    });
  });

  it('skips, with the reason, an unknown break, a bad answer, a gone break and changed amounts', () => {
    const ask = row({ explanation: 'agreed', explained: 'yes' });
    expect(rowOutcome(ask, undefined, NO_WORKFLOW)).toEqual({ skip: 'unknown: no such break' });
    expect(rowOutcome(row({ explained: 'maybe' }), fee(), NO_WORKFLOW)).toEqual({
      skip: 'Explained? must be yes or no (got "maybe")',
    });
    expect(rowOutcome(ask, fee({ status: 'resolved', resolvedRun: 'r9' }), NO_WORKFLOW)).toEqual({
      skip: 'gone: resolved in run r9',
    });
    // A row asking for nothing new is unchanged even when its break is gone.
    expect(rowOutcome(row({ owner: 'alice' }), fee({ status: 'resolved' }), explained)).toEqual({ unchanged: true });
    expect(rowOutcome(row({ ...ask, amounts: '1.00 | 1.50 | 0.50 | EUR' }), fee(), NO_WORKFLOW)).toEqual({
      skip: 'amounts changed since that workbook: 1.00 / 1.50 / 0.50 EUR -> 1.00 / 1.75 / 0.75 EUR',
    });
    // A cell that is not four figures is compared as text: what was there is quoted.
    expect(rowOutcome(row({ ...ask, amounts: 'edited' }), fee(), NO_WORKFLOW)).toEqual({
      skip: 'amounts changed since that workbook: "edited" -> 1.00 / 1.75 / 0.75 EUR',
    });
    expect(rowOutcome(row({ ...ask, amounts: null }), fee(), NO_WORKFLOW)).toEqual({
      skip: 'amounts changed since that workbook: "" -> 1.00 / 1.75 / 0.75 EUR',
    });
  });

  it("compares a stale break's amounts by its limit and currency: its age grew since the workbook", () => {
    const b = fee({ code: 'E_STALE', key: 'dep-1', currency: 'BTC', expected: '24', actual: '60', difference: '36' });
    const ask = row({ code: 'E_STALE', key: 'dep-1', amounts: '24 | 50 | 26 | BTC', owner: 'bob' });
    expect(rowOutcome(ask, b, NO_WORKFLOW)).toEqual({ apply: [{ kind: 'assigned', owner: 'bob' }], break: b });
    expect(rowOutcome({ ...ask, amounts: '48 | 50 | 2 | BTC' }, b, NO_WORKFLOW)).toHaveProperty('skip');
  });

  it('reads only filled-in rows, and turns each action into the decision on the break as it stands', () => {
    expect([row({}), row({ owner: 'x' }), row({ explanation: 'y' }), row({ explained: 'no' })].map(filledIn)).toEqual([
      false,
      true,
      true,
      true,
    ]);
    const b = fee();
    expect(actionDecision(b, undefined, { kind: 'assigned', owner: 'bob' }).write?.event).toEqual({
      kind: 'assigned',
      text: 'bob',
    });
    expect(actionDecision(b, undefined, { kind: 'acknowledged', reason: 'ok' }).write?.event.kind).toBe('acknowledged');
    expect(actionDecision(b, undefined, { kind: 'noted', text: 'n' }).write?.event).toEqual({
      kind: 'noted',
      text: 'n',
    });
    const acked = { status: 'explained' as const, owner: null, explanation: 'ok', acknowledged: b };
    expect(actionDecision(b, acked, { kind: 'unacknowledged' }).write?.event).toEqual({
      kind: 'unacknowledged',
      text: null,
    });
  });
});
