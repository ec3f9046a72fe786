/** One line redrawn in place at the foot of a terminal (a long sync's progress), shared with the log lines there.
 * Every log line goes through `above`, which clears the status line, writes the log line and draws the status again
 * below it: neither overwrites the other, whatever order they come in.
 */
import { writeSync } from 'node:fs';

export interface StatusLine {
  /** Draws `text` in place of the current status (cut to the terminal's width: a wrapped line cannot be redrawn). */
  show(text: string): void;
  /** Removes the status; the cursor is left at the start of the empty line. */
  clear(): void;
  /** Writes a log line (ending in a newline) above the status. */
  above(line: string): void;
}

/** Erase the whole line and go back to its first column. */
const ERASE = '\r\x1b[2K';

export function createStatusLine(out: { write(text: string): void; columns?: () => number | undefined }): StatusLine {
  let current = '';
  const fit = (text: string) => {
    const width = out.columns?.() ?? 0;
    return width > 1 && text.length >= width ? `${text.slice(0, width - 2)}…` : text;
  };
  return {
    show(text) {
      current = fit(text);
      out.write(ERASE + current);
    },
    clear() {
      if (current) out.write(ERASE);
      current = '';
    },
    above(line) {
      out.write(current ? ERASE + line + current : line);
    },
  };
}

let terminal: StatusLine | null = null;

/**
 * The status line of stderr, when the logger writes readable lines to stderr on a terminal (createLogger attaches it);
 * null otherwise (JSON lines, a file, a pipe): then progress is said in log lines.
 */
export function terminalStatusLine(): StatusLine | null {
  return terminal;
}

/** The status line of stderr, created on first use; written synchronously, as the readable log lines are. */
export function attachTerminalStatusLine(): StatusLine {
  terminal ??= createStatusLine({ write: (text) => writeSync(2, text), columns: () => process.stderr.columns });
  return terminal;
}
