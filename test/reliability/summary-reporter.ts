/** Prints the reliability suite's last line from the recorded figures, and fails the run if anything was lost or duplicated. */
import type { Reporter } from 'vitest/reporters';
import { readFigures, summaryLine, totals } from './figures.js';

export default class ReliabilitySummaryReporter implements Reporter {
  onFinished(): void {
    const t = totals(readFigures());
    if (t.lost !== 0 || t.duplicated !== 0) process.exitCode = 1;
    process.stdout.write(`\n${summaryLine(t)}\n`);
  }
}
