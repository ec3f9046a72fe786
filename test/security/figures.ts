/** Figures of the security suite: each case a test tries and how it ended, the spreadsheet fields read, the secrets found. */
import { figuresFile } from '../helpers/figures-file.js';

/**
 * How a hostile case ended: its text kept but never run (`neutralised`), the input, the request or (a report file)
 * other users' access refused (`refused`), every secret masked (`masked`), a legitimate look-alike left as it is
 * (`kept`: a negative amount stays a number, an explicit allowInsecureHttp is honoured with a warning), or none of
 * them (`unsafe`: the suite fails). Cases count by DISTINCT name, so a name says its
 * database and scheme when the same case runs on each (`future event [postgres, https]`).
 */
export type Outcome = 'neutralised' | 'refused' | 'masked' | 'kept' | 'unsafe';

export type SecurityFigure =
  | { kind: 'case'; name: string; outcome: Outcome; detail?: string }
  /** Spreadsheet fields read in one output: all of them, those that held a planted text, those of them neutralised. */
  | { kind: 'fields'; name: string; read: number; hostile: number; neutralised: number }
  /** A secret found in an output (`count` occurrences): any is a failure. */
  | { kind: 'leak'; name: string; secret: string; count: number };

const file = figuresFile<SecurityFigure>('SECURITY_FIGURES', 'ramp-recon-security-figures');

export const recordSecurityFigure = file.record;
export const readSecurityFigures = file.read;

/** Records one case's outcome; returns it, so a test can assert on what it recorded. */
export function recordCase(name: string, outcome: Outcome, detail?: string): Outcome {
  recordSecurityFigure({ kind: 'case', name, outcome, ...(detail ? { detail } : {}) });
  return outcome;
}

export interface SecurityTotals {
  tried: number;
  neutralised: number;
  refused: number;
  masked: number;
  kept: number;
  unsafe: number;
  fieldsRead: number;
  hostileFields: number;
  neutralisedFields: number;
  leaked: number;
}

export function securityTotals(figures: SecurityFigure[]): SecurityTotals {
  // A case recorded twice (a retried file) counts once, by its worst outcome.
  const cases = new Map<string, Outcome>();
  const rank: Record<Outcome, number> = { neutralised: 0, refused: 0, masked: 0, kept: 0, unsafe: 1 };
  const t: SecurityTotals = {
    tried: 0,
    neutralised: 0,
    refused: 0,
    masked: 0,
    kept: 0,
    unsafe: 0,
    fieldsRead: 0,
    hostileFields: 0,
    neutralisedFields: 0,
    leaked: 0,
  };
  for (const f of figures) {
    if (f.kind === 'case') {
      const before = cases.get(f.name);
      if (!before || rank[f.outcome] > rank[before]) cases.set(f.name, f.outcome);
    } else if (f.kind === 'fields') {
      t.fieldsRead += f.read;
      t.hostileFields += f.hostile;
      t.neutralisedFields += f.neutralised;
    } else t.leaked += Number(f.count) || 0;
  }
  t.tried = cases.size;
  for (const outcome of cases.values()) t[outcome] += 1;
  return t;
}

/** The suite's last line. */
export function securitySummaryLine(t: SecurityTotals): string {
  return (
    `security: cases tried ${t.tried}, neutralised ${t.neutralised}, refused ${t.refused}, masked ${t.masked}, ` +
    `kept ${t.kept}, unsafe ${t.unsafe}; spreadsheet fields read ${t.fieldsRead}, planted ${t.hostileFields}, neutralised ` +
    `${t.neutralisedFields}; secrets leaked ${t.leaked}`
  );
}

/** Whether the suite must fail: a secret seen, a case neither neutralised, refused nor masked, a planted field left live. */
export function securityFailed(t: SecurityTotals): boolean {
  return t.leaked > 0 || t.unsafe > 0 || t.neutralisedFields < t.hostileFields;
}
