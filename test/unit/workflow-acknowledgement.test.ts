/** The workflow's decisions on one break (src/workflow/): acknowledge, take back, reopen, note, assign, refusals. */
import { describe, expect, it } from 'vitest';
import { makeStoredBreak } from './recon-factories.js';
import type { Break, WorkflowRecord } from '../../src/domain/index.js';
import { RULES } from '../../src/rules/catalog.js';
import {
  acknowledge,
  addNote,
  amountsWords,
  assignOwner,
  BreakWorkflowError,
  heldFigures,
  reopening,
  sameAmounts,
  unacknowledge,
} from '../../src/workflow/index.js';
import { required, unknownBreak } from '../../src/workflow/workflow-error.js';

const fee = (over: Partial<Break> = {}): Break => makeStoredBreak({ ...over });
const stale = (hours: string): Break =>
  fee({
    code: 'E_STALE',
    key: 'dep-1',
    entity: 'deposit',
    currency: 'BTC',
    unit: 'hours',
    expected: '24',
    actual: hours,
    difference: String(Number(hours) - 24),
  });
const figures = (b: Break) => ({
  expected: b.expected,
  actual: b.actual,
  difference: b.difference,
  currency: b.currency,
});
const explained = (b: Break, over: Partial<WorkflowRecord> = {}): WorkflowRecord => ({
  status: 'explained',
  owner: 'alice',
  explanation: 'agreed',
  acknowledged: figures(b),
  ...over,
});
const NONE = { expected: null, actual: null, difference: null, currency: null };

describe('what an acknowledgement holds to', () => {
  it("is the rule's descriptor: an age rule holds its limit and currency, the others every figure", () => {
    for (const rule of RULES) expect(heldFigures(rule.code)).toEqual(rule.holds);
    expect(heldFigures('E_STALE')).toEqual(['expected', 'currency']);
    expect(heldFigures('P_STALE')).toEqual(['expected', 'currency']);
    expect(heldFigures('P_FEE_USD')).toEqual(['expected', 'actual', 'difference', 'currency']);
  });

  it('holds every figure for a code the catalog does not know (a rule since retired)', () => {
    expect(heldFigures('X_RETIRED')).toEqual(['expected', 'actual', 'difference', 'currency']);
    const then = { expected: '24', actual: '30', difference: '6', currency: 'BTC' };
    expect(sameAmounts('X_RETIRED', then, { ...then, actual: '31' })).toBe(false);
    expect(sameAmounts('X_RETIRED', then, { ...then })).toBe(true);
  });

  it('compares the held figures as exact text, a missing one as empty', () => {
    const then = { expected: '1.00', actual: null, difference: null, currency: 'EUR' };
    expect(sameAmounts('P_FEE_USD', then, { ...then, expected: '1.0' })).toBe(false);
    expect(sameAmounts('P_FEE_USD', then, { ...then, actual: '' })).toBe(true);
    expect(sameAmounts('E_STALE', then, { ...then, actual: '99', difference: '98' })).toBe(true);
    expect(sameAmounts('E_STALE', then, { ...then, currency: 'USD' })).toBe(false);
  });
});

describe('acknowledging a break', () => {
  it("records the reason and the break's figures of now, keeping the owner", () => {
    const b = fee();
    expect(acknowledge(b, undefined, 'rounding agreed')).toEqual({
      change: {
        changed: true,
        code: 'P_FEE_USD',
        key: 'o-1',
        workflow: { status: 'explained', owner: null, explanation: 'rounding agreed' },
      },
      write: {
        set: { status: 'explained', explanation: 'rounding agreed', acknowledged: figures(b) },
        event: { kind: 'acknowledged', text: 'rounding agreed' },
      },
    });
    const again = acknowledge(b, explained(b, { explanation: 'old reason' }), 'new reason');
    expect(again.change.workflow).toEqual({ status: 'explained', owner: 'alice', explanation: 'new reason' });
  });

  it('records nothing for the same reason on the same figures; new figures or a reopened break are recorded', () => {
    const b = fee();
    const same = acknowledge(b, explained(b), 'agreed');
    expect(same.write).toBeNull();
    expect(same.change).toMatchObject({ changed: false, workflow: { status: 'explained', owner: 'alice' } });
    expect(acknowledge(fee({ actual: '1.75', difference: '0.75' }), explained(b), 'agreed').write).not.toBeNull();
    expect(acknowledge(b, explained(b, { status: 'unexplained' }), 'agreed').write).not.toBeNull();
  });

  it('refuses a break that is no longer open, naming it and the run that resolved it (exit 2)', () => {
    const gone = fee({ status: 'resolved', resolvedRun: 'r7' });
    const err = (() => {
      try {
        acknowledge(gone, undefined, 'fine');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(BreakWorkflowError);
    expect((err as BreakWorkflowError).exitCode).toBe(2);
    expect((err as Error).message).toBe(
      'break P_FEE_USD o-1 is not open (resolved in run r7): only an open break can be acknowledged',
    );
    expect(() => acknowledge(fee({ status: 'resolved' }), undefined, 'x')).toThrow('(resolved in run ?)');
  });
});

describe('taking an acknowledgement back', () => {
  it('makes an explained break unexplained, clearing its explanation and figures; otherwise records nothing', () => {
    const b = fee();
    expect(unacknowledge(b, explained(b), 'withdrawn')).toEqual({
      change: {
        changed: true,
        code: 'P_FEE_USD',
        key: 'o-1',
        workflow: { status: 'unexplained', owner: 'alice', explanation: null },
      },
      write: {
        set: { status: 'unexplained', explanation: null, acknowledged: NONE },
        event: { kind: 'unacknowledged', text: 'withdrawn' },
      },
    });
    expect(unacknowledge(b, undefined, null)).toMatchObject({ change: { changed: false }, write: null });
    expect(unacknowledge(b, explained(b, { status: 'unexplained' }), null).write).toBeNull();
  });
});

describe('a run reopening an acknowledgement', () => {
  it('reopens when a figure the acknowledgement holds changed, saying what changed', () => {
    const then = fee();
    expect(reopening(fee(), figures(then))).toBeNull();
    expect(reopening(fee({ actual: '1.75', difference: '0.75' }), figures(then))).toEqual({
      set: { status: 'unexplained' },
      event: { kind: 'reopened', text: 'amounts changed: 1.00 / 1.50 / 0.50 EUR -> 1.00 / 1.75 / 0.75 EUR' },
    });
  });

  it("leaves an age rule's growing age alone: only its limit and currency count", () => {
    const then = figures(stale('30'));
    expect(reopening(stale('55'), then)).toBeNull();
    expect(reopening({ ...stale('55'), expected: '48' }, then)?.event.text).toBe(
      'amounts changed: 24 / 30 / 6 BTC -> 48 / 55 / 31 BTC',
    );
  });
});

describe('notes and owners', () => {
  it('always records a note, on an open or a resolved break, changing nothing else', () => {
    const b = fee({ status: 'resolved', resolvedRun: 'r7' });
    expect(addNote(b, explained(b), 'asked the partner')).toEqual({
      change: {
        changed: true,
        code: 'P_FEE_USD',
        key: 'o-1',
        workflow: { status: 'explained', owner: 'alice', explanation: 'agreed' },
      },
      write: { set: {}, event: { kind: 'noted', text: 'asked the partner' } },
    });
  });

  it('records a new owner or a cleared one; the same owner records nothing', () => {
    const b = fee();
    expect(assignOwner(b, undefined, 'bob')).toEqual({
      change: {
        changed: true,
        code: 'P_FEE_USD',
        key: 'o-1',
        workflow: { status: 'unexplained', owner: 'bob', explanation: null },
      },
      write: { set: { owner: 'bob' }, event: { kind: 'assigned', text: 'bob' } },
    });
    expect(assignOwner(b, explained(b), null).write).toEqual({
      set: { owner: null },
      event: { kind: 'assigned', text: null },
    });
    expect(assignOwner(b, explained(b), 'alice')).toMatchObject({ change: { changed: false }, write: null });
    expect(assignOwner(b, undefined, null).write).toBeNull();
  });
});

describe('refusals and words', () => {
  it('names an unknown break and an empty text in one line', () => {
    expect(unknownBreak('default', 'P_FEE_USD', 'nope').message).toBe(
      'unknown break P_FEE_USD nope: no such break in account default ' +
        '(`ramp-recon breaks list --status all` lists them)',
    );
    expect(required('the reason', '  agreed ')).toBe('agreed');
    expect(() => required('the note', '   ')).toThrow(new BreakWorkflowError('the note must not be empty'));
    expect(() => required('the owner', null)).toThrow('the owner must not be empty');
  });

  it("writes a break's figures as a sentence, '-' for a missing one", () => {
    expect(amountsWords({ expected: '1.00', actual: '1.50', difference: '0.50', currency: 'EUR' })).toBe(
      '1.00 / 1.50 / 0.50 EUR',
    );
    expect(amountsWords({ expected: null, actual: '0.5', difference: null, currency: null })).toBe('- / 0.5 / -');
  });
});
