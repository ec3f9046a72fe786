/**
 * The bench writes its own figures into docs/performance.md, between the `<!-- bench figures -->` markers, so the
 * measured figures are the bench's output and never a hand edit.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import {
  cpuText,
  int,
  mb,
  median,
  mib,
  newDayPages,
  secs,
  stageFloors,
  total,
  type RoundResult,
  type RunFigures,
} from './print.js';

const START = '<!-- bench figures -->';
const END = '<!-- /bench figures -->';

/** The round whose figure is the median: its stages and requests are shown whole. */
function medianRound(results: readonly RoundResult[], of: (r: RoundResult) => number): RoundResult {
  const m = median(results.map(of));
  return results.reduce((best, r) => (Math.abs(of(r) - m) < Math.abs(of(best) - m) ? r : best));
}

const STAGE_WORDS: Record<string, string> = {
  'sync.exchange': 'exchange sync',
  'sync.partner': 'partner sync',
  reconcile: 'reconcile',
  report: 'report',
  deliver: 'deliver',
};

function stagesText(f: RunFigures): string {
  return f.run.stages
    .filter((s) => s.status !== 'skipped' && STAGE_WORDS[s.name])
    .map((s) => `${STAGE_WORDS[s.name]} ${secs(s.ms)}`)
    .join(', ');
}

/** The mailed workbook's size, and the detail's (gzip CSV, every record of the period). */
function sizes(f: RunFigures): string {
  const r = f.run.report;
  return r ? `${mb(r.workbookBytes)}; ${mb(r.detailBytes)} (${int(r.detailRows)} records)` : '-';
}

function topRequests(requests: Record<string, number>): string {
  return Object.entries(requests)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .slice(0, 3)
    .map(([endpoint, n]) => `${endpoint} ${int(n)}`)
    .join(', ');
}

/** The figures block: the machine and the set-up, then one row per run and the fills ingest ratio. */
export function figuresBlock(results: readonly RoundResult[], scale: number, now = new Date()): string {
  const first = medianRound(results, (r) => r.first.run.wallMs);
  const nightly = medianRound(results, (r) => r.nightly.run.wallMs);
  const cpus = os.cpus();
  const ratio = median(
    results.map((r) => {
      const ex = r.first.run.exchange!;
      return ex.fills / ex.stageMs.fills! / (r.copy.rows / r.copy.mergeMs);
    }),
  );
  const pages = newDayPages(nightly.newDay);
  const nightlyRequests = total(nightly.nightly.requests);
  return [
    START,
    `Written by \`npm run bench\` on ${now.toISOString().slice(0, 10)}: scale ${scale}, ${results.length} round(s)` +
      `${results.length > 1 ? ' (each run: the round whose wall time is nearest the median)' : ''}, ${cpus.length} x ${cpus[0]?.model ?? 'unknown CPU'}, ` +
      `${int(os.totalmem() / 2 ** 30)} GiB, node ${process.version}.`,
    '',
    '| | wall | CPU | peak RSS | requests | mailed workbook; detail | target |',
    '|---|---|---|---|---|---|---|',
    `| (a) first run | ${secs(first.first.run.wallMs)} (${stagesText(first.first)}) | ${cpuText(first.first)} | ` +
      `${mib(first.first.run.maxRssKb)} | ` +
      `${int(total(first.first.requests))} (${topRequests(first.first.requests)}) | ${sizes(first.first)} | ` +
      '60 s, 512 MiB, 4,000, 2 MB |',
    `| (b) nightly run | ${secs(nightly.nightly.run.wallMs)} (${stagesText(nightly.nightly)}) | ${cpuText(nightly.nightly)} | ` +
      `${mib(nightly.nightly.run.maxRssKb)} | ${int(nightlyRequests)}: ${int(nightlyRequests - pages)} beyond the ` +
      `${int(pages)} pages of the new day | ${sizes(nightly.nightly)} | 5 s, 100 beyond, 2 MB |`,
    `| (c) fills stage / COPY + merge | | | | | | ${ratio.toFixed(2)}x (target 0.5x) |`,
    '',
    `Each stage beside its floor (${results.length > 1 ? 'the round nearest the median first run' : 'the round'}; ` +
      'bench/floors.ts): target for the exchange sync at most 2x.',
    '',
    '| stage | wall | floor | multiple | the floor is |',
    '|---|---|---|---|---|',
    ...stageFloors(first).map(
      (x) => `| ${x.stage} | ${secs(x.ms)} | ${secs(x.floorMs)} | ${(x.ms / x.floorMs).toFixed(2)}x | ${x.floor} |`,
    ),
    '',
    `Nightly run: the first stage started ${
      nightly.nightly.run.startupMs === undefined ? '-' : secs(nightly.nightly.run.startupMs)
    } after the process did (target 0.5 s).`,
    END,
  ].join('\n');
}

/**
 * Replaces the figures block of the document at `path` (between `markers`: the bench's own unless another bench names
 * its pair); false when it has no markers (nothing written).
 */
export function writeFigures(path: string, block: string, markers = { start: START, end: END }): boolean {
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf(markers.start);
  const end = text.indexOf(markers.end);
  if (start < 0 || end < start) return false;
  writeFileSync(path, `${text.slice(0, start)}${block}${text.slice(end + markers.end.length)}`);
  return true;
}
