/** Prints the security suite's last line from the recorded figures, and fails the run on a leak or an unsafe case. */
import type { Reporter } from 'vitest/reporters';
import { readSecurityFigures, securityFailed, securitySummaryLine, securityTotals } from './figures.js';

export default class SecuritySummaryReporter implements Reporter {
  onFinished(): void {
    const t = securityTotals(readSecurityFigures());
    if (securityFailed(t)) process.exitCode = 1;
    process.stdout.write(`\n${securitySummaryLine(t)}\n`);
  }
}
