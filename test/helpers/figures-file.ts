/** A suite's figures as JSON lines in one folder: each test process appends, the suite's summary reporter reads them all. */
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface FiguresFile<F extends object> {
  /** The folder the suite's config sets in `variable`; a fixed tmp folder when a file runs alone. */
  dir(): string;
  /** Appends one figure (stamped with the time) to this process's file in the folder. */
  record(figure: F): void;
  /** Every figure recorded in the folder, file by file. */
  read(dir?: string): F[];
}

/**
 * The figures of a suite whose config puts a fresh folder in the environment variable `variable` (the reliability
 * and the security suite): the workers are processes of their own, so figures travel through files.
 */
export function figuresFile<F extends object>(variable: string, fallback: string): FiguresFile<F> {
  const dir = () => process.env[variable] || join(tmpdir(), fallback);
  return {
    dir,
    record(figure) {
      const folder = dir();
      mkdirSync(folder, { recursive: true });
      appendFileSync(
        join(folder, `figures-${process.pid}.jsonl`),
        `${JSON.stringify({ ...figure, at: new Date().toISOString() })}\n`,
      );
    },
    read(folder = dir()) {
      let files: string[];
      try {
        files = readdirSync(folder).filter((f) => f.endsWith('.jsonl'));
      } catch {
        return [];
      }
      const out: F[] = [];
      for (const f of files.sort()) {
        for (const line of readFileSync(join(folder, f), 'utf8').split('\n')) {
          if (!line.trim()) continue;
          try {
            out.push(JSON.parse(line) as F);
          } catch {
            // A line cut by a killed worker: not a figure.
          }
        }
      }
      return out;
    },
  };
}

/** A fresh figures folder per run of a suite (or the one the caller gave), set in the environment every worker sees. */
export function suiteFiguresDir(variable: string, prefix: string): string {
  const dir = process.env[variable] || mkdtempSync(join(tmpdir(), prefix));
  process.env[variable] = dir;
  return dir;
}
