/** The balance rules: the roll-forward between balance snapshots and each snapshot's own sanity (E_BALANCE_*). */
import { balanceRollFindings, checkBalanceSanity } from '../balance-roll.js';
import { defineRule } from '../define.js';
import { needs } from '../inputs.js';
import { balanceRollSentence } from '../sentences.js';

export const E_BALANCE_ROLL = defineRule({
  code: 'E_BALANCE_ROLL',
  family: 'balance',
  title: 'Balance does not roll forward',
  severity: 'high',
  description: 'Closing balance equals opening balance plus deposits, fills, minus fees and withdrawals',
  scope: 'consecutive balance-snapshot pairs whose closing snapshot is after the period start',
  reach: 'everything',
  entity: 'balance',
  sentence: balanceRollSentence,
  requires: [needs.snapshotPair],
  check: {
    // One break per currency, over every pair judged.
    snapshotPairs: (figures, x) => {
      const findings = balanceRollFindings(figures, x.cfg.balanceTolerance);
      return { findings, passed: new Set(figures.flat().map((f) => f.currency)).size - findings.length };
    },
  },
});

export const E_BALANCE_SANITY = defineRule({
  code: 'E_BALANCE_SANITY',
  family: 'balance',
  title: 'Balance snapshot inconsistent',
  severity: 'medium',
  description: 'Available not above balance; balance_local equals balance x rate within tolerance',
  scope: 'the latest balance snapshot',
  reach: 'everything',
  entity: 'balance',
  requires: [needs.balanceSnapshot],
  check: {
    balanceLine: (line, x) => ({
      verdict: checkBalanceSanity(line, x.cfg.balanceLocalTolerance),
      currency: line.currency,
    }),
  },
});
