/** The sync completeness rules: days and streams no sync covered, records quarantined as invalid (S_*). */
import { defineRule, noMoney } from '../define.js';
import { coverageSentence } from '../sentences.js';
import { coverageFindings, quarantineFindings, unsyncedDayFindings } from '../sync-rules.js';

export const S_COVERAGE = defineRule({
  code: 'S_COVERAGE',
  family: 'sync',
  title: 'Data not fully synced',
  severity: 'high',
  description:
    'A day and stream of the period no sync covered or settled, or a cursor that did not advance while the API had ' +
    'newer records',
  scope: 'stored sync coverage and cursor checks; every day and stream of the period',
  reach: 'everything',
  entity: 'coverage',
  unit: 'text',
  sentence: coverageSentence,
  stake: noMoney('data not synced (the missing records are not known)'),
  check: {
    // Every coverage row looked at is judged; a day of the period without a row has its own break.
    coverage: (rows, total) => {
      const findings = coverageFindings(rows);
      return { findings, passed: Math.max(0, total - findings.length) };
    },
    unsyncedDays: (days, now, streams) => {
      const { findings, checked } = unsyncedDayFindings(days, now, streams);
      return { findings, passed: checked - findings.length };
    },
  },
});

export const S_QUARANTINE = defineRule({
  code: 'S_QUARANTINE',
  family: 'sync',
  title: 'Record quarantined as invalid',
  severity: 'medium',
  description: 'Record that failed validation is in quarantine and not yet fetched valid',
  scope: 'every unresolved quarantined record',
  reach: 'everything',
  entity: 'quarantine',
  unit: 'text',
  stake: noMoney('a record that failed validation (its figures are not trusted)'),
  check: { quarantine: (records) => ({ findings: quarantineFindings(records), passed: 0 }) },
});
