/** The Summary's sections on the run itself: its details and stages, the detail's files, the records counted, the API
 * requests and sync times, each rule's result and the assumptions in force.
 */
import { basename } from 'node:path';
import { API_LABEL } from '../http/errors.js';
import { endpointSeconds, requestTotals, roundSeconds, sortedRequests, type RequestTotals } from '../http/meter.js';
import { addDays } from '../util/dates.js';
import type { Row, Tone } from './cells.js';
import type { StageInfo, WebhookStats } from '../domain/index.js';
import { COUNT_LABELS, finishedTime, periodLabel, STORED_COUNTS_MEANING } from './summary.js';
import { header, muted, pair, section, utcText, type SummarySection } from './summary-layout.js';

/** Period, id, status (the banner's words), times, versions, then each stage in the order it ran. */
export const runDetails: SummarySection = ({ run, head, now, writtenAt, stages }) => {
  const finished = finishedTime(run);
  const days = run.periodTo > addDays(run.periodFrom, 1) ? 'both days included' : 'one UTC day';
  const statusTone: Tone = head.tone === 'ok' ? 'ok' : head.tone === 'explained' ? 'medium' : 'break';
  const rows: Row[] = [
    section('Run'),
    pair('Period', periodLabel(run.periodFrom, run.periodTo), days),
    pair('Run id', run.id),
    { cells: ['Status', head.status], cellTones: { 1: statusTone } },
    pair('Started (UTC)', run.startedAt),
    pair(finished.label, finished.at ?? finished.note, finished.at ? finished.note : null),
    pair('Report written (UTC)', writtenAt ?? now),
    pair('Ruleset version', run.rulesetVersion),
    pair('Config hash', run.configHash),
  ];
  return stages.length ? [...rows, ...stageRows(stages)] : rows;
};

function stageRows(stages: Array<[string, StageInfo]>): Row[] {
  return [
    header('Stage (in run order)', 'Status', 'Time (s)', 'Started (UTC)', '', '', 'Error'),
    ...stages.map(([stage, info]): Row => ({
      cells: [stage, info.status ?? null, seconds(info), utcText(info.startedAt), null, null, info.error ?? null],
    })),
  ];
}

const seconds = (info: StageInfo) => (info.ms !== undefined ? roundSeconds(info.ms / 1000) : null);

/** The detail's files with their rows and bytes (not on the detail workbook's own Summary: they are beside it). */
export const detailFiles: SummarySection = ({ detail }) =>
  detail?.files
    ? [
        section('Detail (every record of the period)'),
        header('File', 'Rows', 'Bytes'),
        ...detail.files.map((f): Row => ({ cells: [basename(f.path), f.rows, f.bytes] })),
      ]
    : [];

/**
 * The records of the period the run counted; a run that failed before its reconcile counted nothing, so what the
 * database holds for the period stands there.
 */
export const recordCounts: SummarySection = ({ run, failure, storedCounts }) => {
  const stored = failure && !failure.judged ? storedCounts : undefined;
  const counts = stored ?? run.counts;
  const rows: Row[] = [section(stored ? `Counts (${STORED_COUNTS_MEANING})` : 'Counts (records of the period)')];
  for (const [key, label] of COUNT_LABELS) rows.push(pair(label, counts[key] ?? null));
  for (const [key, value] of Object.entries(counts))
    if (!COUNT_LABELS.some(([k]) => k === key)) rows.push(pair(key, value));
  return rows;
};

/** The webhook events of the period, under the counts; conflicts and schema drift in amber. */
export const webhookCounts: SummarySection = ({ webhooks }) => (webhooks ? webhookRows(webhooks) : []);

function webhookRows(w: WebhookStats): Row[] {
  const conflictNote = 'kept in webhook_event_conflict; the first body stays the stored event';
  return [
    pair('Webhook events received', w.events),
    pair('Webhook duplicates acknowledged', w.duplicates),
    {
      cells: ['Webhook conflicts (eventId reused, other body)', w.conflicts, w.conflicts ? conflictNote : null],
      cellTones: w.conflicts ? { 1: 'medium' } : undefined,
    },
    {
      cells: [
        'Webhook events with schema drift',
        w.drifted,
        w.driftFields.length ? `extra fields: ${w.driftFields.join(', ')}` : null,
      ],
      cellTones: w.drifted ? { 1: 'medium' } : undefined,
    },
  ];
}

/**
 * "API requests": per API and endpoint, attempts (retries included), retries, the rate limit of
 * its class of call and the time those requests take at it; the times add up (requestTotals).
 */
export const apiRequests: SummarySection = ({ run: { requests } }) => {
  const rows: Row[] = [
    section('API requests'),
    header('API', 'Endpoint', 'Requests', 'Retries', 'Rate limit (/s)', 'Time at that rate (s)'),
  ];
  const totals = requestTotals(requests);
  const total = (api: string, t: RequestTotals): Row => ({
    cells: [api, 'total', t.requests, t.retries, null, roundSeconds(t.seconds)],
    tone: 'bold',
  });
  for (const [api, endpoints] of sortedRequests(requests)) {
    for (const [endpoint, e] of endpoints)
      rows.push({
        cells: [API_LABEL[api], endpoint, e.requests, e.retries, e.perSecond, roundSeconds(endpointSeconds(e))],
      });
    const t = totals.apis[api];
    if (t) rows.push(total(API_LABEL[api], t));
  }
  if (totals.all.requests === 0) rows.push(muted('(no API requests recorded for this run)'));
  else rows.push(total('All APIs', totals.all));
  return rows;
};

/** "Sync": the time each sync stage took, beside the requests above. */
export const syncTimes: SummarySection = ({ stages }) => {
  const sync = stages.filter(([name]) => name.startsWith('sync'));
  if (!sync.length) return [];
  return [
    header('Sync stage', 'Time (s)', 'Status'),
    ...sync.map(([name, info]): Row => ({ cells: [name, seconds(info), info.status ?? null] })),
    {
      cells: ['All sync stages', roundSeconds(sync.reduce((a, [, i]) => a + (i.ms ?? 0), 0) / 1000)],
      tone: 'bold',
    },
  ];
};

/** Each rule's result in this run: passed, breaks found, or not checked and why. */
export const ruleResults: SummarySection = ({ run }) => {
  const rows: Row[] = [
    section('Rules'),
    header('Rule', 'Severity', 'Status', 'Checked', 'Found in this run', '', 'Check / why not checked'),
  ];
  const rules = [...run.ruleResults].sort((a, b) => a.code.localeCompare(b.code));
  for (const r of rules) {
    const status = r.status === 'not_checked' ? 'not checked' : r.status;
    const tone: Tone = r.status === 'passed' ? 'ok' : r.status === 'breaks' ? 'break' : 'muted';
    const check =
      r.status === 'not_checked' && r.reason ? `${r.description} (not checked: ${r.reason})` : r.description;
    rows.push({ cells: [r.code, r.severity, status, r.checked, r.breaks, null, check], cellTones: { 2: tone } });
  }
  if (!rules.length) rows.push(muted('(no rule results recorded)'));
  return rows;
};

export const assumptionsInForce: SummarySection = ({ assumptions }) => [
  section('Assumptions in force'),
  ...assumptions.map(([k, v]) => pair(k, v)),
];
